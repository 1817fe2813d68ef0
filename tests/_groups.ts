/**
 * How `deno task test` runs the test files: in `GROUPS` workers (tests/_group_*.ts), all started at
 * once, each importing a share of the files, instead of a worker per file. Deno's test runtime
 * spends about 0.3 s of CPU and 80 MB on every worker before its first test (it sets up a
 * 10-million-entry array for `Deno.bench`), and every worker loads the helpers again (the SMTP sink
 * and puppeteer alone take a second): for 129 files that was a third of the suite's CPU.
 *
 * The end-to-end files (`*_e2e_test.ts`) come first in the last `E2E_GROUPS` groups: they mostly
 * wait, on the real server's jobs and a relay, while the other groups use the cores. Then every
 * other file is dealt to the group with the least expected work so far, largest first, so that the
 * groups end together: a group that ends early leaves a core idle while the last one finishes.
 * Five workers keep two cores busy; more only added contention.
 *
 * Any file still runs alone with `deno test -A --lock=deno.dev.lock tests/that_test.ts`.
 *
 * Sharing a worker means sharing module state: a test that changes a process-wide value
 * (lib/log.ts's sink, kv/store/ids.ts's order) puts it back, as tests/ids_test.ts does.
 */

export const GROUPS = 5;
export const E2E_GROUPS = 2;

/** The end-to-end files, which start the last `E2E_GROUPS` groups. */
export const E2E = /_e2e_test\.ts$/;

/**
 * A file's expected work, for dealing: its size, weighted by kind. Measured in one suite run, a
 * kilobyte of a browser file took about 25 times the seconds of a kilobyte of a unit file (it
 * drives Chromium through pages where a unit test makes a request in the same process), and a
 * kilobyte of an end-to-end file about 13 times (it waits on a server process). The weights are
 * rounded down from those (20 and 10): dealt on that run's timings, they gave groups as even.
 */
function weight(name: string, size: number): number {
  if (name.endsWith("_browser_test.ts")) return size * 20;
  return E2E.test(name) ? size * 10 : size;
}

/** Every group's test files, in the order the group imports them. */
export function groups(): string[][] {
  const here = new URL(".", import.meta.url);
  const files = [...Deno.readDirSync(here)]
    .filter((e) => e.isFile && e.name.endsWith("_test.ts"))
    .map((e) => ({
      name: e.name,
      weight: weight(e.name, Deno.statSync(new URL(e.name, here)).size),
    }))
    .sort((a, b) => b.weight - a.weight || a.name.localeCompare(b.name));
  const loads = Array.from({ length: GROUPS }, () => 0);
  const dealt = loads.map((): string[] => []);
  const deal = (file: { name: string; weight: number }, among: number[]) => {
    const least = among.reduce((a, b) => loads[b] < loads[a] ? b : a);
    loads[least] += file.weight;
    dealt[least].push(file.name);
  };
  const all = loads.map((_, i) => i);
  for (const file of files.filter((f) => E2E.test(f.name))) deal(file, all.slice(-E2E_GROUPS));
  for (const file of files.filter((f) => !E2E.test(f.name))) deal(file, all);
  return dealt;
}

/** Imports group `n`'s test files, which register their tests in this worker. */
export async function importGroup(n: number): Promise<void> {
  for (const name of groups()[n]) await import(new URL(name, import.meta.url).href);
}
