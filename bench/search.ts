/**
 * Search benchmark: seeds a KV file under /tmp with 20 000 named people (written to KV in the
 * layout of kv/accounts.ts, each with a session) and 100 000 journal entries posted through the
 * API (POST /api/me/journal, in process) by 16 concurrent writers, none of which may fail;
 * then times GET /api/search in-process through the app, and the KV search alone.
 *
 *   deno run -A bench/search.ts [--people N] [--entries N] [--queries N]
 *
 * Prints a table of p50 / p99 per query kind. Contacts no network address.
 */
import { createApp } from "../app.ts";
import { atomic, commit, openKv } from "../kv/_atomic.ts";
import { type Account, emptyProfile, personText } from "../kv/accounts.ts";
import { runMigrations } from "../kv/migrations.ts";
import { prepareSession } from "../kv/sessions.ts";
import { search } from "../kv/search.ts";
import { indexChange } from "../kv/search_index.ts";
import { DAY, systemClock } from "../lib/clock.ts";
import { loadConfig } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import { stdoutMailer } from "../lib/mail.ts";

const arg = (name: string, dflt: number) => {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : dflt;
};
const PEOPLE = arg("people", 20_000);
const tokens: string[] = [];
const ENTRIES = arg("entries", 100_000);
const QUERIES = arg("queries", 400);

// Deterministic pseudo-random numbers, so every run searches the same data.
let seed = 42;
const rand = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32;
};
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
/** Zipf-like: a few words are very common, most are rare, as in real text. */
const zipf = <T>(xs: T[]) => xs[Math.floor(xs.length * rand() ** 3)];

const SYL = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pa", "do", "re", "ga", "zu", "fe"];
const word = () => Array.from({ length: 2 + Math.floor(rand() * 3) }, () => pick(SYL)).join("");
const VOCAB = Array.from({ length: 6000 }, word);
const FIRST = ["Ada", "Zoë", "Ben", "Chloé", "Dev", "Eli", "Fatma", "Gus", "Hana", "Ivo"];
const LAST = Array.from({ length: 3000 }, () => word().replace(/^./, (c) => c.toUpperCase()));
const ORGS = Array.from({ length: 400 }, () => `${pick(LAST)} School`);
const sentence = (n: number) => Array.from({ length: n }, () => zipf(VOCAB)).join(" ");

/** Concurrent writers of the journal entries. */
const WRITERS = 16;

async function seedKv(kv: Deno.Kv, app: ReturnType<typeof createApp>) {
  const now = systemClock.now();
  let op = atomic(kv);
  let muts = 0;
  const flush = async () => {
    if (muts === 0) return;
    const res = await commit(op);
    if (!res.ok) throw new Error("seed commit failed");
    op = atomic(kv);
    muts = 0;
  };
  for (let id = 1; id <= PEOPLE; id++) {
    const a: Account = {
      id,
      kind: "email",
      email: `p${id}@bench.invalid`,
      name: `${pick(FIRST)} ${pick(LAST)}`,
      slug: `p-${id}`,
      created: now - DAY,
      roles: [],
      profile: { ...emptyProfile(), org: pick(ORGS), about: sentence(8) },
      avatar: null,
      application: null,
    };
    op.set(["accounts", id], a).set(["accounts_by_email", a.email], id).set(
      ["accounts_by_slug", a.slug],
      id,
    );
    indexChange(op, "person", id, null, personText(a));
    const session = await prepareSession(kv, id, now);
    session.apply(op);
    tokens.push(session.token);
    muts += 20;
    if (muts > 800) await flush();
  }
  await flush();
  await kv.set(["ids", "account"], new Deno.KvU64(BigInt(PEOPLE)));
  // The entries go through the API, as people write them: 16 writers at once, no error allowed.
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (next < ENTRIES) {
      next++;
      const token = tokens[Math.floor(rand() * PEOPLE)];
      const body = JSON.stringify({
        text: sentence(6 + Math.floor(rand() * 20)),
        public: rand() < 0.85,
      });
      const res = await app.request("/api/me/journal", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body,
      }, { remoteAddr: { hostname: "127.0.0.1" } });
      await res.body?.cancel();
      if (res.status !== 201) {
        errors++;
        if (errors <= 5) console.error(`POST /api/me/journal answered ${res.status}`);
      }
    }
  }));
  const s = (performance.now() - t0) / 1000;
  console.log(
    `posted ${ENTRIES} journal entries through the API with ${WRITERS} writers in ${
      s.toFixed(1)
    } s (${Math.round(ENTRIES / s)}/s), ${errors} errors`,
  );
  if (errors > 0) throw new Error(`${errors} journal posts failed`);
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const KINDS: Record<string, () => string> = {
  "common word prefix (2 chars)": () => zipf(VOCAB).slice(0, 2),
  "common word": () => VOCAB[Math.floor(rand() * 20)],
  "rare word": () => VOCAB[3000 + Math.floor(rand() * 3000)],
  "two words": () => `${zipf(VOCAB)} ${zipf(VOCAB)}`,
  "person name": () => `${pick(FIRST)} ${pick(LAST).slice(0, 4)}`,
  "no match": () => "xyzzyq",
};

async function main() {
  const path = `/tmp/bench-search-${PEOPLE}-${ENTRIES}.sqlite3`;
  let fresh = true;
  try {
    await Deno.stat(path);
    fresh = false;
  } catch { /* seed it */ }
  const kv = await openKv(path);
  await runMigrations(kv, systemClock.now());
  const deps: Deps = {
    kv,
    clock: systemClock,
    mailer: stdoutMailer(),
    resolver: () => Promise.reject(new Error("no network in the benchmark")),
    connector: () => Promise.reject(new Error("no network in the benchmark")),
    config: { ...loadConfig({}), kvPath: path },
  };
  const app = createApp(deps);
  if (fresh) {
    const t0 = performance.now();
    await seedKv(kv, app);
    console.log(
      `seeded ${PEOPLE} people and ${ENTRIES} entries in ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s (${path})`,
    );
  } else {
    console.log(`reusing ${path} (delete it to seed again)`);
  }
  // Warm-up: the first queries pay for SQLite's page cache and JIT.
  for (let i = 0; i < 50; i++) await search(kv, KINDS["common word"]());

  const rows: string[][] = [];
  let origin = 0;
  for (const [kind, make] of Object.entries(KINDS)) {
    const http: number[] = [];
    const direct: number[] = [];
    let hits = 0;
    for (let i = 0; i < QUERIES; i++) {
      const q = make();
      let t0 = performance.now();
      const res = await app.request(`/api/search?q=${encodeURIComponent(q)}`, {}, {
        remoteAddr: {
          hostname: `10.${(origin >> 16) & 255}.${(origin >> 8) & 255}.${origin++ & 255}`,
        },
      });
      const body = await res.json();
      http.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`search answered ${res.status}`);
      hits += body.people.length + body.journal.length;
      t0 = performance.now();
      await search(kv, q);
      direct.push(performance.now() - t0);
    }
    rows.push([
      kind,
      pct(http, 50).toFixed(1),
      pct(http, 99).toFixed(1),
      pct(direct, 50).toFixed(1),
      pct(direct, 99).toFixed(1),
      (hits / QUERIES).toFixed(1),
    ]);
  }
  console.log(
    `\nGET /api/search, ${PEOPLE} people, ${ENTRIES} journal entries, ${QUERIES} queries per kind\n`,
  );
  console.log("| query | HTTP p50 ms | HTTP p99 ms | KV p50 ms | KV p99 ms | hits/query |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  kv.close();
}

if (import.meta.main) await main();
