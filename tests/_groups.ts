/**
 * How `deno task test` runs the test files: all but the end-to-end ones in `GROUPS` workers
 * (tests/_group_*.ts), each importing a share of the files, instead of a worker per file.
 * Deno's test runtime spends about 0.3 s of CPU and 80 MB on every worker before its first test
 * (it sets up a 10-million-entry array for `Deno.bench`), and every worker loads the helpers
 * again (the SMTP sink and puppeteer alone take a second): for 129 files that was a third of the
 * suite's CPU. Three workers keep two cores busy while one of them waits on a server or a
 * browser; a fourth only added contention. The end-to-end files keep a worker each, started
 * alongside (the task's `DENO_JOBS` is `GROUPS` and two more): they mostly wait, and grouped, a
 * wait of theirs held up every file after them. Any file still runs alone with
 * `deno test -A --lock=deno.dev.lock tests/that_test.ts`.
 *
 * Sharing a worker means sharing module state: a test that changes a process-wide value
 * (lib/log.ts's sink, kv/ids.ts's order) puts it back, as tests/ids_test.ts does.
 */

export const GROUPS = 3;

/**
 * Files with a worker of their own: they wait, on the real server's jobs and a relay, for times
 * that a loaded machine can stretch, and in a shared worker every file after them would wait too.
 */
export const OWN_WORKER = /_e2e_test\.ts$/;

/**
 * The test files of group `n` (from 0). The largest files tend to take longest: dealt out by size
 * in turn, largest first, the groups end at about the same time.
 */
export function groupFiles(n: number): string[] {
  const here = new URL(".", import.meta.url);
  const files = [...Deno.readDirSync(here)]
    .filter((e) => e.isFile && e.name.endsWith("_test.ts") && !OWN_WORKER.test(e.name))
    .map((e) => ({ name: e.name, size: Deno.statSync(new URL(e.name, here)).size }))
    .sort((a, b) => b.size - a.size || a.name.localeCompare(b.name));
  return files.filter((_, i) => i % GROUPS === n).map((f) => f.name);
}

/** Imports group `n`'s test files, which register their tests in this worker. */
export async function importGroup(n: number): Promise<void> {
  for (const name of groupFiles(n)) await import(new URL(name, import.meta.url).href);
}
