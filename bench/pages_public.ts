/**
 * The public pages' cost next to the JSON call with the same data: server CPU per request of
 * the catalogue page (GET /catalogue) and a module page (GET /modules/<slug>) against
 * GET /api/catalogue (the public call that returns the modules' fields; no JSON call returns a
 * single published module), in-process through the app (no HTTP, so the figure is the
 * service's own work), over the example catalogue plus generated modules; plus each public
 * page's weight (HTML + the stylesheet and scripts it loads). Targets: both pages at most 3x
 * the CPU of the JSON call; every page under 60 KB (the API reference aside).
 *
 *   deno run -A --lock=deno.dev.lock bench/pages_public.ts
 *
 * CPU and weight as bench/_page_cost.ts measures them (alternating turns, median of 7).
 */
import { testApp } from "../tests/_helpers.ts";
import { sampleModule, seedModule } from "../tests/_catalogue.ts";
import { importCatalogue } from "../kv/catalogue/catalogue_io.ts";
import { pageCost, pageWeight } from "./_page_cost.ts";
import { configureLog } from "../lib/log.ts";

configureLog("error");
await using t = await testApp();
const root = new URL("../data_examples/", import.meta.url);
const people = JSON.parse(await Deno.readTextFile(new URL("people.json", root)));
const ids: number[] = [];
for (const p of people.accounts) {
  ids.push((await t.account(p.email, { name: p.name, roles: ["contributor"] })).account.id);
}
await importCatalogue(t.deps, JSON.parse(await Deno.readTextFile(new URL("catalogue.json", root))));
const MODULES = Number(Deno.env.get("BENCH_MODULES") ?? 200);
for (let i = 0; i < MODULES; i++) {
  await seedModule(t, `generated-${i}`, [ids[i % ids.length]], {
    over: { ...sampleModule(`generated-${i}`), title: `Generated module ${i}` },
  });
}
const env = { remoteAddr: { hostname: "127.0.0.1" } };

async function once(path: string): Promise<Response> {
  const res = await t.app.fetch(new Request(`http://127.0.0.1${path}`), env);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  return res;
}

const N = Number(Deno.env.get("BENCH_N") ?? 300);
for (let i = 0; i < 100; i++) await (await once("/api/catalogue")).arrayBuffer();
const total = (await (await once("/api/catalogue")).json()).count;
const rows = [
  `${total} published modules.`,
  "",
  "| path | CPU µs/req | GET /api/catalogue µs/req (same turns) | ratio | weight KB |",
  "|---|---:|---:|---:|---:|",
];
let failed = false;
for (const path of ["/catalogue", "/modules/pond-life-through-the-seasons"]) {
  const { us, api, ratio } = await pageCost(once, path, "/api/catalogue", {
    page: N,
    api: N,
    warm: 100,
  });
  const kb = (await pageWeight(once, path)) / 1024;
  if (ratio > 3 || kb >= 60) failed = true;
  rows.push(
    `| ${path} | ${us.toFixed(0)} | ${api.toFixed(0)} | ${ratio.toFixed(2)} | ${kb.toFixed(1)} |`,
  );
}
for (
  const path of ["/", "/search?q=pond", "/request", "/contribute", "/sign-in", "/api-reference"]
) {
  const kb = (await pageWeight(once, path)) / 1024;
  if (kb >= 60 && path !== "/api-reference") failed = true;
  rows.push(`| ${path} | | | | ${kb.toFixed(1)} |`);
}
console.log(rows.join("\n"));
console.log(
  failed
    ? "\nMISSED: a public page over 3x its JSON call, or a page at 60 KB or more"
    : "\nthe catalogue and module pages are within 3x GET /api/catalogue; pages under 60 KB",
);
if (failed) Deno.exitCode = 1;
