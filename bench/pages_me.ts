/**
 * The account pages' cost next to the JSON call with the same data: server CPU per request
 * of GET /me (cookie) against GET /api/me (bearer), in-process through the app (no HTTP, so
 * the figure is the service's own work), and of the other signed-in pages; plus each page's
 * weight (HTML + the stylesheet and scripts it loads). Target: the account page at most 3x
 * the CPU of GET /api/me; every page under 60 KB.
 *
 *   deno run -A bench/pages_me.ts
 *
 * CPU from /proc/self/stat (user + system), median of 5 runs. Contacts no network address.
 */
import { testApp } from "../tests/_helpers.ts";
import { addEntry } from "../kv/journal.ts";
import { asset } from "../web/_static.ts";
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

function cpuMs(): number {
  const f = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

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

/** CPU µs per request of `n` requests to `path`. */
async function run(path: string, n: number): Promise<number> {
  const t0 = cpuMs();
  for (let i = 0; i < n; i++) await (await once(path)).arrayBuffer();
  return ((cpuMs() - t0) * 1000) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * The page's cost and its ratio to GET /api/me, measured in turns (API, page, API, page...)
 * so that the load of other processes on the machine falls on both alike: median of 7.
 */
async function cost(path: string, n: number): Promise<{ us: number; api: number; ratio: number }> {
  for (let i = 0; i < 200; i++) await (await once(path)).arrayBuffer();
  const pages: number[] = [];
  const apis: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < 7; r++) {
    const a = await run("/api/me", n * 4);
    const p = await run(path, n);
    apis.push(a);
    pages.push(p);
    ratios.push(p / a);
  }
  return { us: median(pages), api: median(apis), ratio: median(ratios) };
}

/** HTML plus the stylesheet and scripts of /static/ it links to. */
async function weight(path: string): Promise<number> {
  const html = await (await once(path)).text();
  let total = new TextEncoder().encode(html).length;
  for (const m of html.matchAll(/\/static\/([a-z0-9._-]+)\?v=/gi)) {
    total += asset(m[1])?.body.length ?? 0;
  }
  return total;
}

const N = Number(Deno.env.get("BENCH_N") ?? 2000);
for (let i = 0; i < 500; i++) await (await once("/api/me")).arrayBuffer();
const rows: string[] = [];
let failed = false;
rows.push("| path | CPU µs/req | GET /api/me µs/req (same turns) | ratio | weight KB |");
rows.push("|---|---:|---:|---:|---:|");
const paths = ["/me", "/me/profile", "/me/journal", "/me/devices", "/me/services", "/me/files"];
for (const path of [...paths, "/me/standing", "/me/work", "/me/data"]) {
  const { us, api, ratio } = await cost(path, N);
  const kb = (await weight(path)) / 1024;
  if (path === "/me" && ratio > 3) failed = true;
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
