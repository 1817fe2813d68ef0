/**
 * How `deno task test` runs the test files: in `GROUPS + E2E_GROUPS` workers (tests/_group_*.ts),
 * each importing a share of the files, instead of a worker per file. Deno's test runtime spends
 * about 0.3 s of CPU and 80 MB on every worker before its first test (it sets up a 10-million-entry
 * array for `Deno.bench`), and every worker loads the helpers again (the SMTP sink and puppeteer
 * alone take a second): for 129 files that was a third of the suite's CPU.
 *
 * - Groups 0 to `GROUPS - 1` share the unit, page and browser files. Three keep two cores busy
 *   while one of them waits on a server or a browser; a fourth only added contention.
 * - The last `E2E_GROUPS` share the end-to-end files (`*_e2e_test.ts`). These mostly wait, on the
 *   real server's jobs and a relay, so they do not hold up the other files' groups. They still take
 *   their turns in two chains, each far shorter than a group of the others.
 *
 * The task's `DENO_JOBS` is the number of groups, so all of them start at once. Any file still runs
 * alone with `deno test -A --lock=deno.dev.lock tests/that_test.ts`.
 *
 * Sharing a worker means sharing module state: a test that changes a process-wide value
 * (lib/log.ts's sink, kv/ids.ts's order) puts it back, as tests/ids_test.ts does.
 */

export const GROUPS = 3;
export const E2E_GROUPS = 2;

/** The end-to-end files, which take the last `E2E_GROUPS` groups. */
export const E2E = /_e2e_test\.ts$/;

/**
 * What a file is expected to cost, for dealing: its size, and a browser file's size several
 * times over. A line of a browser test drives Chromium through a page, while a line of a unit
 * test makes a request in the same process. Measured per file in one suite run, the browser
 * files took about eight times the seconds per kilobyte of the others.
 */
function weight(name: string, size: number): number {
  return name.endsWith("_browser_test.ts") ? size * 5 : size;
}

/**
 * The test files of group `n` (from 0). Dealt largest first, each to the group with the least
 * weight so far, so the groups end at about the same time.
 */
export function groupFiles(n: number): string[] {
  const e2e = n >= GROUPS;
  const count = e2e ? E2E_GROUPS : GROUPS;
  const here = new URL(".", import.meta.url);
  const files = [...Deno.readDirSync(here)]
    .filter((e) => e.isFile && e.name.endsWith("_test.ts") && E2E.test(e.name) === e2e)
    .map((e) => ({
      name: e.name,
      weight: weight(e.name, Deno.statSync(new URL(e.name, here)).size),
    }))
    .sort((a, b) => b.weight - a.weight || a.name.localeCompare(b.name));
  const loads = Array.from({ length: count }, () => 0);
  const mine: string[] = [];
  for (const file of files) {
    const least = loads.indexOf(Math.min(...loads));
    loads[least] += file.weight;
    if (least === (e2e ? n - GROUPS : n)) mine.push(file.name);
  }
  return mine;
}

/** Imports group `n`'s test files, which register their tests in this worker. */
export async function importGroup(n: number): Promise<void> {
  for (const name of groupFiles(n)) await import(new URL(name, import.meta.url).href);
}
