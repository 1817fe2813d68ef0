/**
 * Heartbeat and check-runner benchmark (issue 5). Run: `deno run -A bench/heartbeat.ts`.
 *
 * 1. Heartbeat pings per second, p99 and server CPU time per ping: the real server
 *    (main.ts) on a KV file under /tmp with 1 000 heartbeat services, driven by autocannon
 *    with 50 connections, each ping to one of the 1 000 hooks from that hook's own client
 *    address (X-Forwarded-For with TRUST_PROXY=1, as behind a proxy; every address stays
 *    under the 600-an-hour limit). Next to it, in the same run, a bare Deno.serve answering
 *    the same JSON. A ping is answered only after its beat is committed to the KV file.
 * 2. The runner's time to work through 1 000 due url checks against a local HTTP server.
 * Everything listens on and connects to 127.0.0.1 only. Prints Markdown tables; bench/run.ts
 * may import `servicesBenchmarks()` to add them to `deno task bench`.
 */
import { autocannon } from "../tests/_dev_deps.ts";
import { runDueChecks } from "../jobs/checks.ts";
import { atomic, openKv, transact } from "../kv/_atomic.ts";
import { prepareAccount, type Role } from "../kv/accounts.ts";
import { runMigrations } from "../kv/migrations.ts";
import { createService, type NewService } from "../kv/services.ts";
import { MINUTE } from "../lib/clock.ts";
import { loadConfig } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import { stdoutMailer } from "../lib/mail.ts";
import { systemConnector, systemResolver } from "../lib/net.ts";

const SERVICES = 1000;
const CONNECTIONS = 50;
const DURATION = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
const root = new URL("..", import.meta.url).pathname;

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** CPU time (user + system) of a process in ms, from /proc. */
function cpuMs(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks * 10; // USER_HZ is 100 on Linux
}

async function waitFor(url: string) {
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(url);
      await r.body?.cancel();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server at ${url} did not start`);
}

function deps(kv: Deno.Kv, offset = 0): Deps {
  return {
    kv,
    clock: { now: () => Date.now() + offset },
    mailer: stdoutMailer(),
    resolver: systemResolver,
    connector: systemConnector,
    config: loadConfig({ BASE_URL: "http://127.0.0.1" }),
  };
}

/** Accounts of 30 services each (the per-account limit). */
async function accounts(kv: Deno.Kv, n: number, roles: Role[]): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < Math.ceil(n / 30); i++) {
    ids.push(
      await transact(async () => {
        const acc = await prepareAccount(
          kv,
          `bench${i}@example.org`,
          `Bench ${i}`,
          Date.now(),
          roles,
        );
        return { op: acc.apply(atomic(kv)), result: acc.account.id };
      }),
    );
  }
  return ids;
}

const base = (kind: NewService["kind"], check: string): NewService => ({
  name: "Bench",
  what: "",
  group: "Jobs",
  place: null,
  interval: 5,
  alerts: false,
  kind,
  check,
  hint: null,
});

interface Load {
  rps: number;
  p99: number;
  ok: number;
  bad: number;
  cpuPerPing: number;
}

interface Ping {
  path: string;
  method: "GET" | "POST";
  body?: string;
}

async function load(port: number, pid: number, paths: Ping[]): Promise<Load> {
  let i = 0;
  const run = (duration: number) =>
    autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: CONNECTIONS,
      duration,
      requests: [{
        // deno-lint-ignore no-explicit-any
        setupRequest: (req: any) => {
          const n = i++ % paths.length;
          const p = paths[n];
          const headers: Record<string, string> = {
            ...req.headers,
            "x-forwarded-for": `10.${1 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`,
          };
          if (p.body !== undefined) headers["content-type"] = "text/plain";
          return { ...req, path: p.path, method: p.method, body: p.body, headers };
        },
      }],
    });
  await run(2); // warm-up
  const before = cpuMs(pid);
  const r = await run(DURATION);
  const cpu = cpuMs(pid) - before;
  const ok = r["2xx"];
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    ok,
    bad: r.non2xx + r.errors,
    cpuPerPing: cpu / Math.max(1, ok + r.non2xx),
  };
}

async function heartbeatBench() {
  const dir = await Deno.makeTempDir({ prefix: "hb-bench-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const kv = await openKv(kvPath);
  await runMigrations(kv, Date.now());
  const owners = await accounts(kv, SERVICES, []);
  const plain: Ping[] = [];
  const mix: Ping[] = [];
  // A cron job's output, as `curl --data-binary @log` would send it.
  const output = "backup: 1234 files, 56 MiB copied in 12 s\n".repeat(48).slice(0, 2048);
  for (let i = 0; i < SERVICES; i++) {
    const { key } = await createService(
      deps(kv),
      owners[Math.floor(i / 30)],
      base("webhook", "webhook:"),
      null,
    );
    const hook = `/api/hooks/${key}`;
    const rid = crypto.randomUUID();
    plain.push({ path: `${hook}?status=ok`, method: "GET" });
    // The mix, in the order one service sends it: a plain success, a run with rid (start,
    // then its end with a 2 KB body), exit codes 0 and 1, and a 2 KB log line.
    mix.push({ path: `${hook}?status=ok`, method: "GET" });
    mix.push({ path: `${hook}/start?rid=${rid}`, method: "GET" });
    mix.push({ path: `${hook}?rid=${rid}`, method: "POST", body: output });
    mix.push({ path: `${hook}/0`, method: "GET" });
    mix.push({ path: `${hook}/1?status=exit%201`, method: "GET" });
    mix.push({ path: `${hook}/log`, method: "POST", body: output });
  }
  kv.close();

  const port = freePort();
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", `${root}main.ts`],
    env: {
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
      KV_PATH: kvPath,
      BASE_URL: `http://127.0.0.1:${port}`,
      TRUST_PROXY: "1",
    },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  await waitFor(`http://127.0.0.1:${port}/api/healthz`);

  const barePort = freePort();
  const bareFile = `${dir}/bare.ts`;
  await Deno.writeTextFile(
    bareFile,
    `Deno.serve({ hostname: "127.0.0.1", port: ${barePort}, onListen() {} }, () =>
  Response.json({ ok: true, service: "Bench", received: new Date().toISOString() }));`,
  );
  const bare = new Deno.Command(Deno.execPath(), { args: ["run", "-A", bareFile], stdout: "null" })
    .spawn();
  await waitFor(`http://127.0.0.1:${barePort}/`);

  try {
    const bareLoad = await load(barePort, bare.pid, mix);
    const hookLoad = await load(port, server.pid, plain);
    const mixLoad = await load(port, server.pid, mix);
    return { bareLoad, hookLoad, mixLoad };
  } finally {
    server.kill("SIGTERM");
    bare.kill("SIGTERM");
    await server.status;
    await bare.status;
    await Deno.remove(dir, { recursive: true });
  }
}

async function runnerBench() {
  const dir = await Deno.makeTempDir({ prefix: "runner-bench-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  const web = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("ok"),
  );
  try {
    await runMigrations(kv, Date.now());
    const owners = await accounts(kv, SERVICES, ["owner"]);
    for (let i = 0; i < SERVICES; i++) {
      const check = `url:http://127.0.0.1:${web.addr.port}/health/${i}`;
      await createService(deps(kv), owners[Math.floor(i / 30)], base("url", check), null);
    }
    const later = deps(kv, 10 * MINUTE);
    const t0 = performance.now();
    const r = await runDueChecks(later, { budgetMs: 600_000 });
    const ms = performance.now() - t0;
    let ok = 0;
    for await (const e of kv.list<{ last: { state: string } | null }>({ prefix: ["services"] })) {
      if (e.value.last?.state === "ok") ok++;
    }
    return { ms, ran: r.ran, ok };
  } finally {
    await web.shutdown();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs both benchmarks and answers their Markdown tables (bench/run.ts may call this). */
export async function servicesBenchmarks(): Promise<string> {
  const { bareLoad, hookLoad, mixLoad } = await heartbeatBench();
  const runner = await runnerBench();
  return report(bareLoad, hookLoad, mixLoad, runner);
}

function report(
  bareLoad: Load,
  hookLoad: Load,
  mixLoad: Load,
  runner: { ms: number; ran: number; ok: number },
) {
  const f = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d });
  return `
Heartbeat: ${SERVICES} services, ${CONNECTIONS} connections, ${DURATION} s, 127.0.0.1

| server | pings/s | p99 ms | CPU ms per ping | answered 2xx | other |
|---|---:|---:|---:|---:|---:|
| bare Deno.serve (same JSON) | ${f(bareLoad.rps)} | ${bareLoad.p99} | ${
    f(bareLoad.cpuPerPing, 3)
  } | ${bareLoad.ok} | ${bareLoad.bad} |
| service, GET /api/hooks/<key> (KV file, durable) | ${f(hookLoad.rps)} | ${hookLoad.p99} | ${
    f(hookLoad.cpuPerPing, 3)
  } | ${hookLoad.ok} | ${hookLoad.bad} |
| service, signal mix (success, start/end with rid and 2 KB body, exit 0 and 1, 2 KB log) | ${
    f(mixLoad.rps)
  } | ${mixLoad.p99} | ${f(mixLoad.cpuPerPing, 3)} | ${mixLoad.ok} | ${mixLoad.bad} |

Share of bare Deno.serve's pings/s: plain ${f(hookLoad.rps / bareLoad.rps, 3)}, mix ${
    f(mixLoad.rps / bareLoad.rps, 3)
  }. Server CPU per ping over bare's: plain ${
    f(hookLoad.cpuPerPing / bareLoad.cpuPerPing, 1)
  }x, mix ${f(mixLoad.cpuPerPing / bareLoad.cpuPerPing, 1)}x (bare answers the mix's requests).

| runner | due checks | ran | ok | time ms | checks/s |
|---|---:|---:|---:|---:|---:|
| url checks against a local server, pool of 3 | ${SERVICES} | ${runner.ran} | ${runner.ok} | ${
    f(runner.ms)
  } | ${f((runner.ran * 1000) / runner.ms)} |
`;
}

if (import.meta.main) console.log(await servicesBenchmarks());
