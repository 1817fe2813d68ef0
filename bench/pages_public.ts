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
 * CPU from /proc/self/stat (user + system), measured in alternating turns, median of 7.
 */
import { testApp } from "../tests/_helpers.ts";
import { sampleModule, seedModule } from "../tests/_catalogue.ts";
import { importCatalogue } from "../kv/catalogue_io.ts";
import { asset } from "../web/_static.ts";
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

function cpuMs(): number {
  const f = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function once(path: string): Promise<Response> {
  const res = await t.app.fetch(new Request(`http://127.0.0.1${path}`), env);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  return res;
}

async function run(path: string, n: number): Promise<number> {
  const t0 = cpuMs();
  for (let i = 0; i < n; i++) await (await once(path)).arrayBuffer();
  return ((cpuMs() - t0) * 1000) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function cost(path: string, api: string, n: number) {
  for (let i = 0; i < 100; i++) await (await once(path)).arrayBuffer();
  const pages: number[] = [];
  const apis: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < 7; r++) {
    const a = await run(api, n);
    const p = await run(path, n);
    apis.push(a);
    pages.push(p);
    ratios.push(p / a);
  }
  return { us: median(pages), api: median(apis), ratio: median(ratios) };
}

async function weight(path: string): Promise<number> {
  const html = await (await once(path)).text();
  let total = new TextEncoder().encode(html).length;
  for (const m of html.matchAll(/\/static\/([a-z0-9._-]+)\?v=/gi)) {
    total += asset(m[1])?.body.length ?? 0;
  }
  return total;
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
  const { us, api, ratio } = await cost(path, "/api/catalogue", N);
  const kb = (await weight(path)) / 1024;
  if (ratio > 3 || kb >= 60) failed = true;
  rows.push(
    `| ${path} | ${us.toFixed(0)} | ${api.toFixed(0)} | ${ratio.toFixed(2)} | ${kb.toFixed(1)} |`,
  );
}
for (
  const path of ["/", "/search?q=pond", "/request", "/contribute", "/sign-in", "/api-reference"]
) {
  const kb = (await weight(path)) / 1024;
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
