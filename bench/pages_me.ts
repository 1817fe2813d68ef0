/**
 * The account pages' cost next to the JSON call with the same data.
 *
 * 1. The target: the server's CPU per request of GET /me (cookie) against GET /api/me (bearer)
 *    through HTTP, the real server (main.ts) on a KV file, load by autocannon in turns, CPU
 *    of the server process only (bench/_http.ts). At most 3x.
 * 2. Every signed-in page in-process through the app (no HTTP), against GET /api/me in turns
 *    (bench/_page_cost.ts). In-process the bench's own side counts too (building each Request,
 *    encoding the answer's text to read it), which weighs more on a page of kilobytes than on a
 *    short JSON answer: these ratios are an upper bound, to compare pages with each other.
 * 3. Each page's weight (HTML + the stylesheet and scripts it loads): under 60 KB.
 *
 *   deno run -A --lock=deno.dev.lock bench/pages_me.ts
 *
 * Contacts only 127.0.0.1.
 */
import { serverEnv, spawnListening, taskArgs } from "../tests/_server.ts";
import { load, median, seedAccount } from "./_http.ts";
import { testApp } from "../tests/_helpers.ts";
import { addEntry } from "../kv/accounts/journal.ts";
import { pageCost, pageWeight } from "./_page_cost.ts";
import { configureLog } from "../lib/log.ts";

configureLog("error");
await using t = await testApp();
const { account, token } = await t.account("me@example.org", { name: "Bench Person" });
for (let i = 0; i < 20; i++) {
  await addEntry(
    t.kv,
    account.id,
    { text: `Entry ${i} about the river trail.`, public: true },
    t.clock.now(),
  );
}
const env = { remoteAddr: { hostname: "127.0.0.1" } };

const request = (path: string) =>
  new Request(`http://127.0.0.1${path}`, {
    headers: path.startsWith("/api/")
      ? { authorization: `Bearer ${token}` }
      : { cookie: `session=${token}` },
  });

async function once(path: string): Promise<Response> {
  const res = await t.app.fetch(request(path), env);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  return res;
}

const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 3);
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);

/** 1. GET /me against GET /api/me through HTTP, server CPU per request, median of turns. */
async function overHttp(): Promise<{ page: number; api: number; ratio: number }> {
  const dir = await Deno.makeTempDir({ prefix: "bench-pages-" });
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    const { token } = await seedAccount(kvPath, "me@example.org", "Bench Person");
    await using s = await spawnListening(
      await taskArgs("start"),
      serverEnv({
        HOSTNAME: "127.0.0.1",
        PORT: "0",
        KV_PATH: kvPath,
        BASE_URL: "http://127.0.0.1",
      }),
    );
    const page = { cookie: `session=${token}` };
    const api = { authorization: `Bearer ${token}` };
    const check = await fetch(`${s.url}/me`, { headers: page });
    if (check.status !== 200 || !(await check.text()).includes("Your account")) {
      throw new Error(`GET /me answered ${check.status}`);
    }
    const turns: { page: number; api: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const a = await load(s, "/api/me", api, SECONDS, 10);
      const p = await load(s, "/me", page, SECONDS, 10);
      if (a.errors || p.errors) throw new Error("errors or non-2xx answers under load");
      turns.push({ page: p.cpuUs, api: a.cpuUs });
    }
    return {
      page: median(turns.map((t) => t.page)),
      api: median(turns.map((t) => t.api)),
      ratio: median(turns.map((t) => t.page / t.api)),
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const http = await overHttp();
console.log(
  `GET /me over HTTP: ${http.page.toFixed(1)} µs of server CPU per request, GET /api/me ` +
    `${http.api.toFixed(1)} µs: ${http.ratio.toFixed(2)}x (median of ${ROUNDS} turns)\n`,
);

const N = Number(Deno.env.get("BENCH_N") ?? 2000);
for (let i = 0; i < 500; i++) await (await once("/api/me")).arrayBuffer();
const rows: string[] = [];
let failed = http.ratio > 3;
rows.push(
  "| path (in-process) | CPU µs/req | GET /api/me µs/req (same turns) | ratio | weight KB |",
);
rows.push("|---|---:|---:|---:|---:|");
const paths = ["/me", "/me/profile", "/me/journal", "/me/devices", "/me/services", "/me/files"];
for (const path of [...paths, "/me/standing", "/me/work", "/me/data"]) {
  const { us, api, ratio } = await pageCost(once, path, "/api/me", {
    page: N,
    api: N * 4,
    warm: 200,
  });
  const kb = (await pageWeight(once, path)) / 1024;
  if (kb >= 60) failed = true;
  rows.push(
    `| ${path} | ${us.toFixed(0)} | ${api.toFixed(0)} | ${ratio.toFixed(2)} | ${kb.toFixed(1)} |`,
  );
}
console.log(rows.join("\n"));
console.log(
  failed
    ? "\nMISSED: the account page over 3x GET /api/me, or a page at 60 KB or more"
    : "\nthe account page is within 3x GET /api/me; every page under 60 KB",
);
if (failed) Deno.exitCode = 1;
