/**
 * The account pages' cost next to the JSON call with the same data: server CPU per request
 * of GET /me (cookie) against GET /api/me (bearer), in-process through the app (no HTTP, so
 * the figure is the service's own work), and of the other signed-in pages; plus each page's
 * weight (HTML + the stylesheet and scripts it loads). Target: the account page at most 3x
 * the CPU of GET /api/me; every page under 60 KB.
 *
 *   deno run -A bench/pages_me.ts
 *
 * CPU and weight as bench/_page_cost.ts measures them. Contacts no network address.
 */
import { testApp } from "../tests/_helpers.ts";
import { addEntry } from "../kv/journal.ts";
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

const N = Number(Deno.env.get("BENCH_N") ?? 2000);
for (let i = 0; i < 500; i++) await (await once("/api/me")).arrayBuffer();
const rows: string[] = [];
let failed = false;
rows.push("| path | CPU µs/req | GET /api/me µs/req (same turns) | ratio | weight KB |");
rows.push("|---|---:|---:|---:|---:|");
const paths = ["/me", "/me/profile", "/me/journal", "/me/devices", "/me/services", "/me/files"];
for (const path of [...paths, "/me/standing", "/me/work", "/me/data"]) {
  const { us, api, ratio } = await pageCost(once, path, "/api/me", {
    page: N,
    api: N * 4,
    warm: 200,
  });
  const kb = (await pageWeight(once, path)) / 1024;
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
