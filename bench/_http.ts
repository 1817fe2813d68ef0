/**
 * What the HTTP benchmarks share (bench/run.ts, bench/pages_me.ts): a KV file seeded with one
 * account and session, load by autocannon from the bench process, and the server process's own
 * CPU time per request from /proc/<pid>/stat (utime + stime), so the load generator's CPU and
 * the client side of each request are not counted. Linux only.
 */
import { loadAutocannon } from "../tests/_dev_deps.ts";
import { atomic, openKv, transact } from "../kv/_atomic.ts";
import { type Account, prepareAccount } from "../kv/accounts/accounts.ts";
import { runMigrations } from "../kv/store/migrations.ts";
import { prepareSession } from "../kv/accounts/sessions.ts";
import type { ServerProcess } from "../tests/_server.ts";
import { cpuTicks, TICK_MS } from "./_cpu.ts";

export interface Run {
  rps: number;
  p99: number;
  cpuUs: number;
  requests: number;
  errors: number;
}

export async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? NaN);
  return kb / 1024;
}

/** One run of load on `path`: a second of warm-up, then `seconds` measured. */
export async function load(
  server: ServerProcess,
  path: string,
  headers: Record<string, string>,
  seconds: number,
  connections: number,
): Promise<Run> {
  const autocannon = await loadAutocannon();
  const opts = { url: `${server.url}${path}`, connections, headers };
  // Warm-up: JIT, connection setup, the session's once-a-minute last_used write.
  return await measure(server.pid, (duration) => autocannon({ ...opts, duration }), 1, seconds);
}

/** What the measures read of an autocannon result. */
interface CannonResult {
  requests: { total: number; average: number };
  latency: { p99: number };
  errors: number;
  non2xx: number;
  timeouts: number;
}

/** Runs `run` for `warmup` seconds, then `seconds` with the server's CPU time measured. */
async function measure(
  pid: number,
  run: (s: number) => Promise<CannonResult>,
  warmup: number,
  seconds: number,
): Promise<Run> {
  await run(warmup);
  const before = await cpuTicks(pid);
  const r = await run(seconds);
  const after = await cpuTicks(pid);
  const requests = r.requests.total;
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    cpuUs: requests ? ((after - before) * TICK_MS * 1000) / requests : NaN,
    requests,
    errors: r.errors + r.non2xx + r.timeouts,
  };
}

export interface Call {
  path: string;
  method?: "GET" | "POST";
  body?: string;
  /** Content type of the body (default application/json). */
  type?: string;
}

/**
 * Load cycling through `calls`, each request from its own client address (X-Forwarded-For,
 * for a server started with TRUST_PROXY=1): `address(n)` names the address of the n-th call
 * (by default one per call of the list, so per-address limits see one client per call).
 * Warm-up of `warmup` seconds, then `seconds` measured; the server's CPU as in `load`.
 */
export async function loadCalls(
  target: { url: string; pid: number },
  calls: Call[],
  seconds: number,
  connections: number,
  opts: { warmup?: number; address?: (n: number, i: number) => number } = {},
): Promise<Run> {
  const autocannon = await loadAutocannon();
  let i = 0;
  const address = opts.address ?? ((n) => n);
  const run = (duration: number) =>
    autocannon({
      url: target.url,
      connections,
      duration,
      requests: [{
        // deno-lint-ignore no-explicit-any
        setupRequest: (req: any) => {
          const n = i % calls.length;
          const a = address(n, i++);
          const c = calls[n];
          const headers: Record<string, string> = {
            ...req.headers,
            "x-forwarded-for": `10.${(a >> 16) & 255}.${(a >> 8) & 255}.${a & 255}`,
          };
          if (c.body !== undefined) headers["content-type"] = c.type ?? "application/json";
          return { ...req, path: c.path, method: c.method ?? "GET", body: c.body, headers };
        },
      }],
    });
  return await measure(target.pid, run, opts.warmup ?? 1, seconds);
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The run whose CPU per request is the median one (its other figures come with it). */
export function medianRun(runs: Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.cpuUs - b.cpuUs);
  const mid = sorted[Math.floor(sorted.length / 2)];
  return { ...mid, errors: runs.reduce((n, r) => n + r.errors, 0) };
}

/** A KV file with the schema, one account and a session for it. */
export async function seedAccount(
  kvPath: string,
  email = "bench@example.org",
  name = "Bench Mark",
): Promise<{ token: string; account: Account }> {
  const kv = await openKv(kvPath);
  try {
    const now = Date.now();
    await runMigrations(kv, now);
    return await transact(async () => {
      const acc = await prepareAccount(kv, email, name, now);
      const s = await prepareSession(kv, acc.account.id, now);
      return {
        op: s.apply(acc.apply(atomic(kv))),
        result: { account: acc.account, token: s.token },
      };
    });
  } finally {
    kv.close();
  }
}
