/**
 * What the page benchmarks (bench/pages_me.ts, bench/pages_public.ts) share: server CPU per
 * request from /proc/self/stat (user + system, 10 ms ticks, so runs are long and the figure is
 * a median), measured in alternating turns of the JSON call and the page so that the load of
 * other processes falls on both alike; and a page's weight (HTML plus the stylesheet and
 * scripts of /static/ it links to).
 */
import { asset } from "../web/_static.ts";
import { cpuMs } from "./_cpu.ts";

/** Answers one request in-process; throws unless it answered 200. */
export type Once = (path: string) => Promise<Response>;

/** CPU µs per request of `n` requests to `path`. */
async function run(once: Once, path: string, n: number): Promise<number> {
  const t0 = cpuMs();
  for (let i = 0; i < n; i++) await (await once(path)).arrayBuffer();
  return ((cpuMs() - t0) * 1000) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface CostRuns {
  /** Requests of the page per turn, and of the JSON call. */
  page: number;
  api: number;
  /** Page requests before measuring. */
  warm: number;
}

/** The page's cost and its ratio to the JSON call, median of 7 alternating turns. */
export async function pageCost(
  once: Once,
  path: string,
  api: string,
  runs: CostRuns,
): Promise<{ us: number; api: number; ratio: number }> {
  for (let i = 0; i < runs.warm; i++) await (await once(path)).arrayBuffer();
  const pages: number[] = [];
  const apis: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < 7; r++) {
    const a = await run(once, api, runs.api);
    const p = await run(once, path, runs.page);
    apis.push(a);
    pages.push(p);
    ratios.push(p / a);
  }
  return { us: median(pages), api: median(apis), ratio: median(ratios) };
}

/** HTML plus the stylesheet and scripts of /static/ it links to, in bytes. */
export async function pageWeight(once: Once, path: string): Promise<number> {
  const html = await (await once(path)).text();
  let total = new TextEncoder().encode(html).length;
  for (const m of html.matchAll(/\/static\/([a-z0-9._-]+)\?v=/gi)) {
    total += asset(m[1])?.body.length ?? 0;
  }
  return total;
}
