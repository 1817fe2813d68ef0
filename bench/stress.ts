// deno-lint-ignore-file no-explicit-any
/**
 * `deno task stress`: the real server on a KV file under 64 accounts creating every kind of
 * record at once (journal entries, services, files, requests, proposals, sign-ins, point
 * toggles, profile and module edits), then every acknowledged write read back and every count
 * checked (files used = sum of sizes, points = holders, trail verified). Then the crash mode:
 * SIGKILL at random moments under the same load, restart, and the same read-back.
 * Like the benchmarks, not part of the tests. Contacts 127.0.0.1 only; mail is printed by the
 * server (no transport), which is where sign-in links are read.
 *
 * STRESS_SECONDS (default 60) and STRESS_CRASHES (default 20) bound the run.
 *
 * Two-process mode (`deno task stress --two`, or STRESS_PROCESSES=2): two servers on the same
 * KV file, each request sent to either at random (as two isolates of one deployment would
 * get them), the same load and read-back; then no crash mode. Every commit that meets the
 * other process's lock must wait its turn: 0 answers 5xx.
 */
import { type ServerProcess, spawnService } from "../tests/_server.ts";

const SECONDS = Number(Deno.env.get("STRESS_SECONDS") ?? 60);
const CRASHES = Number(Deno.env.get("STRESS_CRASHES") ?? 20);
const ACCOUNTS = 64;
const PROCESSES = Deno.args.includes("--two") ? 2 : Number(Deno.env.get("STRESS_PROCESSES") ?? 1);
const SERVICE_TOKEN = "stress-service-token-0123456789abcdef";
const ENV = { BASE_URL: "http://127.0.0.1", TRUST_PROXY: "1", SERVICE_TOKEN };
const ROOT = new URL("..", import.meta.url).pathname;

interface Account {
  email: string;
  token: string;
  contributor: boolean;
  journal: Set<number>;
  services: Set<number>;
  files: Map<number, number>;
  /** Profile edits: highest acknowledged sequence number (org "o-<n>"). */
  orgAck: number;
  /** Module this account edits alone (contributors only): highest acknowledged title. */
  module?: string;
  titleAck: number;
}

const stats = {
  requests: 0,
  fiveXX: 0,
  netErrors: 0,
  byStatus: new Map<number, number>(),
  acked: new Map<string, number>(),
  samples: [] as string[],
  latencies: [] as number[],
};
const requestsAcked = new Set<number>();
const proposalsAcked = new Set<number>();
const signInsAcked: string[] = [];

/** The servers' URLs; each call goes to one of them at random. */
let bases: string[] = [];
let servers: ServerProcess[] = [];
let seq = 0;
const ip = () => `198.18.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

/** One call; null when the connection failed (server killed, in crash mode). */
async function call(
  method: string,
  path: string,
  o: {
    token?: string;
    json?: unknown;
    raw?: BodyInit;
    headers?: Record<string, string>;
    base?: string;
  } = {},
): Promise<{ status: number; body: any } | null> {
  const base = o.base ?? bases[Math.floor(Math.random() * bases.length)];
  const headers: Record<string, string> = { "x-forwarded-for": ip(), ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body = o.raw;
  if (o.json !== undefined) {
    body = JSON.stringify(o.json);
    headers["content-type"] = "application/json";
  }
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}${path}`, { method, headers, body });
    const text = await res.text();
    stats.requests++;
    stats.latencies.push(performance.now() - t0);
    stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
    if (res.status >= 500) {
      stats.fiveXX++;
      if (stats.samples.length < 10) stats.samples.push(`${method} ${path} ${res.status} ${text}`);
    }
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON */ }
    return { status: res.status, body: parsed };
  } catch {
    stats.netErrors++;
    return null;
  }
}

const ack = (kind: string) => stats.acked.set(kind, (stats.acked.get(kind) ?? 0) + 1);

async function signIn(server: ServerProcess, email: string, name: string): Promise<string | null> {
  // The mail is printed by the server that took the request: the link is read there.
  const asked = await call("POST", "/api/verify/request", {
    json: { email, purpose: "login", age_ok: true, name },
    base: server.url,
  });
  if (asked?.status !== 202) return null;
  const re = new RegExp(`To: ${email.replace(/[.+]/g, "\\$&")}[^]*?verify=([A-Za-z0-9_-]+)`);
  const link = await server.stdout.waitFor(re, 20_000).catch(() => null);
  if (!link) return null;
  const v = await call("GET", `/api/verify?token=${link[1]}`, { base: server.url });
  return v?.status === 200 ? v.body.token : null;
}

/** One random write by `a`; records what was acknowledged. */
async function act(a: Account, slugs: string[]): Promise<void> {
  const n = ++seq;
  const pick = Math.random();
  if (pick < 0.14) {
    const r = await call("POST", "/api/me/journal", {
      token: a.token,
      json: { text: `entry ${n}` },
    });
    if (r?.status === 201) (a.journal.add(r.body.id), ack("journal"));
  } else if (pick < 0.26) {
    const r = await call("POST", "/api/me/services", {
      token: a.token,
      json: { name: `Job ${n}`, check: "webhook:", interval: 5 },
    });
    if (r?.status === 200 || r?.status === 201) (a.services.add(r.body.item.id), ack("service"));
  } else if (pick < 0.38) {
    const size = 1 + Math.floor(Math.random() * 4000);
    const r = await call("PUT", "/api/me/files", {
      token: a.token,
      raw: new Uint8Array(size).fill(65),
      headers: { "content-type": "text/plain", "x-file-name": `f${n}.txt` },
    });
    if (r?.status === 201) (a.files.set(r.body.item.id, size), ack("file"));
  } else if (pick < 0.48) {
    const r = await call("POST", "/api/requests", {
      json: {
        name: "Stress Tester",
        email: `r${n % 50}@example.org`,
        kind: "module",
        text: `Please add a module about load number ${n}.`,
      },
    });
    if (r?.status === 202) (requestsAcked.add(r.body.id), ack("request"));
  } else if (pick < 0.56) {
    const r = await call("POST", "/api/contributions", {
      json: {
        name: "Stress Tester",
        email: `p${n}@example.org`,
        title: `Module number ${n}`,
        area: "technical",
        summary: "A module written while the service is under load.",
      },
    });
    if (r?.status === 201) (proposalsAcked.add(r.body.id), ack("proposal"));
  } else if (pick < 0.62) {
    const token = await signIn(servers[n % servers.length], `s${n}@example.org`, `Signer ${n}`);
    if (token) (signInsAcked.push(token), ack("sign-in"));
  } else if (pick < 0.76) {
    const r = await call("POST", `/api/modules/${slugs[n % slugs.length]}/point`, {
      token: a.token,
    });
    if (r?.status === 200) ack("point");
  } else if (pick < 0.9 || !a.module) {
    const r = await call("PATCH", "/api/me", { token: a.token, json: { org: `o-${n}` } });
    if (r?.status === 200) (a.orgAck = Math.max(a.orgAck, n), ack("profile"));
  } else {
    const r = await call("PATCH", `/api/me/modules/${a.module}`, {
      token: a.token,
      json: { title: `Title ${n}` },
    });
    if (r?.status === 200) (a.titleAck = Math.max(a.titleAck, n), ack("module"));
  }
}

async function load(server: ServerProcess, accounts: Account[], slugs: string[], ms: number) {
  const until = Date.now() + ms;
  await Promise.all(accounts.map(async (a) => {
    while (Date.now() < until) {
      const before = stats.netErrors;
      await act(a, slugs);
      if (stats.netErrors > before && server.pid && !(await alive(server))) return;
    }
  }));
}

async function alive(server: ServerProcess): Promise<boolean> {
  return await Promise.race([
    server.status.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), 10)),
  ]);
}

interface Problems {
  lost: string[];
  drift: string[];
}

async function usageDrift(path: string): Promise<string[]> {
  const kv = await Deno.openKv(path);
  try {
    const out: string[] = [];
    const sums = new Map<number, number>();
    const add = (account: number, n: number) => sums.set(account, (sums.get(account) ?? 0) + n);
    for await (const e of kv.list<{ size: number }>({ prefix: ["files"] })) {
      add(e.key[1] as number, e.value.size);
    }
    for await (const e of kv.list<{ size: number }>({ prefix: ["file_uploads"] })) {
      add(e.key[1] as number, e.value.size);
    }
    for await (const e of kv.list<{ bytes: number }>({ prefix: ["file_usage"] })) {
      const account = e.key[1] as number;
      if (e.value.bytes !== (sums.get(account) ?? 0)) {
        out.push(
          `account ${account}: usage ${e.value.bytes} != files + uploads ${sums.get(account)}`,
        );
      }
    }
    return out;
  } finally {
    kv.close();
  }
}

async function verify(accounts: Account[], slugs: string[], crashed = false): Promise<Problems> {
  const p: Problems = { lost: [], drift: [] };
  const team = { "x-service-token": SERVICE_TOKEN };
  for (const a of accounts) {
    const j = await call("GET", "/api/me/journal", { token: a.token });
    const jids = new Set<number>(j?.body.items.map((e: { id: number }) => e.id));
    for (const id of a.journal) if (!jids.has(id)) p.lost.push(`journal ${id}`);
    const s = await call("GET", "/api/me/services", { token: a.token });
    const sids = new Set<number>(s?.body.items.map((e: { id: number }) => e.id));
    for (const id of a.services) if (!sids.has(id)) p.lost.push(`service ${id}`);
    const f = await call("GET", "/api/me/files", { token: a.token });
    const items: { id: number; size: number }[] = f?.body.items ?? [];
    for (const [id, size] of a.files) {
      const it = items.find((x) => x.id === id);
      if (!it) p.lost.push(`file ${id}`);
      else if (it.size !== size) p.drift.push(`file ${id} size ${it.size} != ${size}`);
    }
    const sum = items.reduce((t, x) => t + x.size, 0);
    // After kills, uploads cut short hold quota until the sweep: checked in the KV file instead.
    if (!crashed && f?.body.used !== sum) {
      p.drift.push(`${a.email}: files used ${f?.body.used} != sum ${sum}`);
    }
    const me = await call("GET", "/api/me", { token: a.token });
    const org = Number(String(me?.body.profile?.org ?? "o-0").slice(2));
    if (org < a.orgAck) {
      p.lost.push(`${a.email}: org o-${org} older than acknowledged o-${a.orgAck}`);
    }
    if (a.module && a.titleAck > 0) {
      const m = await call("GET", `/api/me/modules/${a.module}`, { token: a.token });
      const t = Number(String(m?.body.module?.title ?? m?.body.item?.title ?? "").split(" ")[1]);
      if (!(t >= a.titleAck)) p.lost.push(`module ${a.module}: title ${t} < ${a.titleAck}`);
    }
  }
  const reqs = await call("GET", "/api/requests?all=1", { headers: team });
  const rids = new Set<number>(reqs?.body.items.map((e: { id: number }) => e.id));
  for (const id of requestsAcked) if (!rids.has(id)) p.lost.push(`request ${id}`);
  for (const id of proposalsAcked) {
    const r = await call("GET", `/api/contributions/${id}`, { headers: team });
    if (r?.status !== 200) p.lost.push(`proposal ${id}`);
  }
  for (const token of signInsAcked) {
    const r = await call("GET", "/api/me", { token });
    if (r?.status !== 200) p.lost.push("sign-in session");
  }
  // Points: each module's count equals the accounts holding a point on it.
  const holders = new Map<string, number>();
  for (const a of accounts) {
    const r = await call("GET", "/api/points", { token: a.token });
    for (const slug of r?.body.mine ?? []) holders.set(slug, (holders.get(slug) ?? 0) + 1);
  }
  const counts = (await call("GET", "/api/points", {}))?.body.counts ?? {};
  for (const slug of slugs) {
    if ((counts[slug] ?? 0) !== (holders.get(slug) ?? 0)) {
      p.drift.push(`points ${slug}: count ${counts[slug]} != holders ${holders.get(slug) ?? 0}`);
    }
  }
  // The trail: every queued line chained within seconds, the whole chain verified.
  let v: any = null;
  for (let i = 0; i < 50; i++) {
    v = (await call("GET", "/api/audit/verify?full=1"))?.body;
    if (v?.waiting === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!v?.ok) p.drift.push(`trail: ${JSON.stringify(v?.broken)}`);
  if (v?.waiting !== 0) p.drift.push(`trail: ${v?.waiting} lines still waiting`);
  return p;
}

async function setup(server: ServerProcess): Promise<{ accounts: Account[]; slugs: string[] }> {
  const people = JSON.parse(await Deno.readTextFile(`${ROOT}data_examples/people.json`))
    .accounts as { email: string; name: string }[];
  const catalogue = JSON.parse(await Deno.readTextFile(`${ROOT}data_examples/catalogue.json`));
  const slugs: string[] = catalogue.modules.map((m: { slug: string }) => m.slug);
  const accounts: Account[] = [];
  const mk = (email: string, token: string, contributor: boolean): Account => ({
    email,
    token,
    contributor,
    journal: new Set(),
    services: new Set(),
    files: new Map(),
    orgAck: 0,
    titleAck: 0,
  });
  for (const [i, p] of people.entries()) {
    const token = await signIn(server, p.email, p.name);
    if (!token) throw new Error(`sign-in of ${p.email} failed`);
    const a = mk(p.email, token, true);
    // One editor per module, so "the last acknowledged title" is well defined.
    a.module = catalogue.modules.find((m: { by?: string; slug: string }, j: number) =>
      m.by === p.name && !accounts.some((x) => x.module === m.slug) && j >= 0
    )?.slug;
    accounts.push(a);
    void i;
  }
  for (let i = accounts.length; i < ACCOUNTS; i++) {
    const email = `a${i}@example.org`;
    const token = await signIn(server, email, `Account ${i}`);
    if (!token) throw new Error(`sign-in of ${email} failed`);
    accounts.push(mk(email, token, false));
  }
  return { accounts, slugs };
}

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
};

function report(title: string, extra: Record<string, unknown> = {}) {
  console.log(`\n## ${title}`);
  console.log(JSON.stringify(
    {
      requests: stats.requests,
      "5xx": stats.fiveXX,
      connection_errors: stats.netErrors,
      acknowledged: Object.fromEntries(stats.acked),
      statuses: Object.fromEntries([...stats.byStatus].sort((a, b) => a[0] - b[0])),
      p50_ms: Math.round(pct(stats.latencies, 0.5)),
      p99_ms: Math.round(pct(stats.latencies, 0.99)),
      ...extra,
    },
    null,
    1,
  ));
  if (stats.samples.length) console.log("5xx samples:", stats.samples);
}

function resetStats() {
  Object.assign(stats, {
    requests: 0,
    fiveXX: 0,
    netErrors: 0,
    byStatus: new Map(),
    acked: new Map(),
    samples: [],
    latencies: [],
  });
}

/** Crash mode: the same load, SIGKILL at a random moment, restart on the same KV file. */
async function crashMode(first: ServerProcess, accounts: Account[], slugs: string[]) {
  let server = first;
  resetStats();
  let restarts = 0;
  for (let i = 0; i < CRASHES; i++) {
    const running = load(server, accounts, slugs, 10_000);
    await new Promise((r) => setTimeout(r, 300 + Math.random() * 2200));
    await server.stop(); // SIGKILL
    await running;
    server = await spawnService(kvPath, ENV);
    servers = [server];
    bases = [server.url];
    restarts++;
  }
  const crashProblems = await verify(accounts, slugs, true);
  await server.stop();
  // Straight from the KV file: every account's usage equals its files plus the uploads the
  // kills cut short (their quota is held until the sweep job releases them, UPLOAD_DEADLINE).
  crashProblems.drift.push(...await usageDrift(kvPath));
  report(`crash mode: ${restarts} SIGKILLs under load`, {
    kills: restarts,
    lost: crashProblems.lost.length,
    drift: crashProblems.drift.length,
  });
  if (crashProblems.lost.length || crashProblems.drift.length) console.log(crashProblems);
  failed ||= stats.fiveXX > 0 || crashProblems.lost.length > 0 || crashProblems.drift.length > 0;
}

let failed = false;
const dir = await Deno.makeTempDir({ prefix: "stress_" });
const kvPath = `${dir}/kv.sqlite3`;
try {
  // The example catalogue: published modules to point at and edit, contributor accounts.
  const demo = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "demo"],
    cwd: ROOT,
    env: { KV_PATH: kvPath },
    stdout: "null",
  }).output();
  if (!demo.success) throw new Error("deno task demo failed");

  const server = await spawnService(kvPath, ENV);
  servers = [server];
  for (let i = 1; i < PROCESSES; i++) servers.push(await spawnService(kvPath, ENV));
  bases = servers.map((s) => s.url);
  const { accounts, slugs } = await setup(server);
  resetStats();
  const t0 = performance.now();
  await load(server, accounts, slugs, SECONDS * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const loadFigures = { seconds: Math.round(seconds), accounts: accounts.length };
  const problems = await verify(accounts, slugs);
  report(`load: ${ACCOUNTS} accounts, ${PROCESSES} process(es), ${Math.round(seconds)} s`, {
    ...loadFigures,
    writes_per_s: Math.round([...stats.acked.values()].reduce((a, b) => a + b, 0) / seconds),
    lost: problems.lost.length,
    drift: problems.drift.length,
  });
  if (problems.lost.length || problems.drift.length) console.log(problems);
  failed ||= stats.fiveXX > 0 || problems.lost.length > 0 || problems.drift.length > 0;
  for (const s of servers.slice(1)) await s.stop();
  // Crash mode (one process): the same load, SIGKILL at a random moment, restart.
  if (PROCESSES === 1) await crashMode(server, accounts, slugs);
  else await server.stop();
} finally {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
Deno.exit(failed ? 1 : 0);
