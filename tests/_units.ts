/**
 * The test files that run in a shared worker. `deno test` gives every test module a worker of
 * its own, and each worker costs about 0.3 s of CPU and 80 MB before its first test (Deno's test
 * runtime sets up a 10-million-entry array for `Deno.bench` in every worker): for the hundred
 * small test files that was a third of the suite's CPU. `deno task test` runs them in
 * `UNIT_GROUPS` workers instead (tests/_units_*.ts), each importing a share of them; the files
 * that start a real server or a browser (`*_e2e_test.ts`, `*_browser_test.ts`) keep a worker
 * each, since they wait on those and others run meanwhile. Any file still runs alone with
 * `deno test -A tests/that_test.ts`.
 *
 * Sharing a worker means sharing module state: a test that changes a process-wide value
 * (lib/log.ts's sink, kv/ids.ts's order) puts it back, as tests/ids_test.ts does.
 */

export const UNIT_GROUPS = 2;

/** Files with a worker of their own: they wait on a real server process or a browser. */
export const OWN_WORKER = /_(e2e|browser)_test\.ts$/;

/** The test files of group `n` (from 0): every other file, taken in turn by name. */
export function unitFiles(n: number): string[] {
  const names = [...Deno.readDirSync(new URL(".", import.meta.url))]
    .map((e) => e.name)
    .filter((name) => name.endsWith("_test.ts") && !OWN_WORKER.test(name))
    .sort();
  return names.filter((_, i) => i % UNIT_GROUPS === n);
}

/** Imports group `n`'s test files, which register their tests in this worker. */
export async function importUnits(n: number): Promise<void> {
  for (const name of unitFiles(n)) await import(new URL(name, import.meta.url).href);
}
