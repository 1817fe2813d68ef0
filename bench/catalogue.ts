import { createApp } from "../app.ts";
import { atomic, commit, openKv, transact } from "../kv/_atomic.ts";
import { prepareAccount } from "../kv/accounts/accounts.ts";
import { runMigrations } from "../kv/store/migrations.ts";
import { putModule } from "../kv/catalogue/modules.ts";
import { prepareSession } from "../kv/accounts/sessions.ts";
import { systemClock } from "../lib/clock.ts";
import { loadConfig } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";

/**
 * Catalogue benchmark: `deno run -A bench/catalogue.ts`. A server on 127.0.0.1 (port 0)
 * over a fresh KV file with 5 000 published modules (3 contributors each, from a pool of
 * 500 accounts); measures GET /api/modules/meta and GET /api/points under concurrent load,
 * then point toggles from 200 accounts at once, and checks the counts came out exact.
 * Its figures are rows of docs/performance.md, "Current figures" and "Process-wide caches".
 */

const MODULES = Number(Deno.env.get("BENCH_MODULES") ?? 5000);
const PEOPLE = 500;
const TOGGLERS = 200;
const TOGGLES_EACH = 100; // under the 120 an hour limit
const CONCURRENCY = 16;
const SECONDS = 5;

const dir = await Deno.makeTempDir({ prefix: "catalogue-bench-" });
const kv = await openKv(`${dir}/kv.sqlite3`);
await runMigrations(kv, systemClock.now());
const config = { ...loadConfig({}), kvPath: `${dir}/kv.sqlite3` };
const deps: Deps = {
  kv,
  clock: systemClock,
  mailer: { kind: "none", send: () => Promise.resolve() },
  resolver: () => Promise.reject(new Error("no network in the benchmark")),
  connector: () => Promise.reject(new Error("no network in the benchmark")),
  config,
  print: (text) => console.log(text),
};

async function account(i: number) {
  return await transact(async () => {
    const now = systemClock.now();
    const acc = await prepareAccount(kv, `p${i}@example.org`, `Person ${i}`, now, ["contributor"]);
    const s = await prepareSession(kv, acc.account.id, now);
    return { op: s.apply(acc.apply(atomic(kv))), result: { id: acc.account.id, token: s.token } };
  });
}

const words = ["pond", "repair", "story", "bird", "circuit", "garden", "music", "map", "code"];
let t0 = performance.now();
const people: { id: number; token: string }[] = [];
for (let i = 0; i < PEOPLE; i++) people.push(await account(i));
for (let i = 0; i < MODULES; i++) {
  const w = words[i % words.length];
  await putModule(
    kv,
    {
      slug: `module-${i}`,
      title: `A ${w} module number ${i}`,
      who: "Primary and secondary classes",
      lede: `Learners explore ${w} work in small groups, step by step.`,
      about: `A ${w} module. `.repeat(40),
      note: "",
      meta: "",
      state: "development",
      track: "Bench",
      area: "other",
      by: `Person ${i % PEOPLE}`,
      facts: [["Duration", "2 hours"]],
      gets: ["Something learnt"],
    },
    [0, 1, 2].map((k) => people[(i + k * 7) % PEOPLE].id),
    true,
    {
      actor: "owner",
      now: systemClock.now(),
    },
  );
}
const seedMs = performance.now() - t0;

const app = createApp(deps);
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
const base = `http://127.0.0.1:${server.addr.port}`;

interface Figures {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  kib: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function load(name: string, path: string): Promise<Figures> {
  const first = await fetch(base + path); // a cold build of the cache counts as a warm-up
  const kib = (await first.arrayBuffer()).byteLength / 1024;
  const lat: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) {
      const s = performance.now();
      const r = await fetch(base + path);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
      lat.push(performance.now() - s);
    }
  }));
  lat.sort((a, b) => a - b);
  return {
    name,
    requests: lat.length,
    rps: lat.length / SECONDS,
    p50: pct(lat, 0.5),
    p95: pct(lat, 0.95),
    p99: pct(lat, 0.99),
    kib,
  };
}

async function cold(path: string): Promise<number> {
  // A module change moves the catalogue version: the next read rebuilds.
  await commit(atomic(kv).sum(["catalogue_version"], 1n));
  const s = performance.now();
  await (await fetch(base + path)).arrayBuffer();
  return performance.now() - s;
}

const rows: Figures[] = [];
rows.push(await load("GET /api/modules/meta", "/api/modules/meta"));
const coldMeta = await cold("/api/modules/meta");
rows.push(await load("GET /api/points", "/api/points"));
rows.push(await load("GET /api/catalogue", "/api/catalogue"));

// Point toggles: 200 accounts at once, each 100 toggles on random modules.
const togglers = people.slice(0, TOGGLERS);
const held = new Map<string, Set<number>>();
const tlat: number[] = [];
t0 = performance.now();
await Promise.all(togglers.map(async (p) => {
  for (let i = 0; i < TOGGLES_EACH; i++) {
    const slug = `module-${Math.floor(Math.random() * 50)}`; // a few hot modules: contention
    const s = performance.now();
    const r = await fetch(`${base}/api/modules/${slug}/point`, {
      method: "POST",
      headers: { authorization: `Bearer ${p.token}` },
    });
    const body = await r.json();
    tlat.push(performance.now() - s);
    if (r.status !== 200) throw new Error(`toggle answered ${r.status}: ${JSON.stringify(body)}`);
    const set = held.get(slug) ?? new Set();
    if (body.mine) set.add(p.id);
    else set.delete(p.id);
    held.set(slug, set);
  }
}));
const toggleMs = performance.now() - t0;
tlat.sort((a, b) => a - b);
const counts = (await (await fetch(`${base}/api/points`)).json()).counts as Record<string, number>;
let exact = true;
for (const [slug, set] of held) if ((counts[slug] ?? 0) !== set.size) exact = false;

const f = (n: number) => n.toFixed(1);
console.log(`\nCatalogue (${MODULES} published modules, seeded in ${f(seedMs / 1000)} s)\n`);
console.log("| call | requests | req/s | p50 ms | p95 ms | p99 ms | body KiB |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  console.log(
    `| ${r.name} | ${r.requests} | ${f(r.rps)} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.p99)} | ${
      f(r.kib)
    } |`,
  );
}
const n = TOGGLERS * TOGGLES_EACH;
console.log(
  `| POST /api/modules/<slug>/point (${TOGGLERS} accounts at once) | ${n} | ${
    f(n / (toggleMs / 1000))
  } | ${f(pct(tlat, 0.5))} | ${f(pct(tlat, 0.95))} | ${f(pct(tlat, 0.99))} | |`,
);
console.log(`\nmeta after a module change (cache rebuild): ${f(coldMeta)} ms`);
console.log(`point counts exact after the toggles: ${exact ? "yes" : "NO"}`);
console.log(`concurrency ${CONCURRENCY} for ${SECONDS} s per GET row; KV file on local disk`);

await server.shutdown();
kv.close();
await Deno.remove(dir, { recursive: true });
if (!exact) Deno.exit(1);
