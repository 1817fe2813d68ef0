/**
 * How `deno task test` runs the test files: in `GROUPS` workers (tests/_group_*.ts), all started at
 * once, each importing a share of the files, instead of a worker per file. Deno's test runtime
 * spends CPU and memory on every worker before its first test (it sets up a 10-million-entry
 * array for `Deno.bench`), and every worker loads the helpers again (the SMTP sink, puppeteer):
 * with a worker per file that was a large share of the suite's CPU (docs/performance.md, "The
 * test suite").
 *
 * The files are dealt by their measured seconds (tests/_seconds.json), largest first, each to the
 * group with the least so far, and every group runs its share largest first: the groups end
 * together, on small files, so no core idles while one long file finishes (the longest-first
 * rule of scheduling). Dealt by size instead, the files whose seconds go into CPU (the fuzzing, a
 * search over 100 000 entries, every route's refusals) were estimated at a twentieth of their time
 * and ran last in their group, which ended a minute after the others on a loaded machine. A file
 * not measured yet is estimated from its size, weighted by its kind (`estimate`). Five workers
 * keep two cores busy; more only added contention.
 *
 * The measured seconds come from the JUnit reports of suite runs, averaged:
 *   deno task test --junit-path=a.xml   (twice), then
 *   deno run -A tests/_groups.ts a.xml b.xml   (writes tests/_seconds.json)
 * Only their ratios matter: a loaded machine stretches every file alike, nearly.
 *
 * Any file still runs alone with `deno test -A --lock=deno.dev.lock tests/that_test.ts`.
 *
 * Sharing a worker means sharing module state: a test that changes a process-wide value
 * (lib/log.ts's sink, kv/store/ids.ts's order) puts it back, as tests/ids_test.ts does.
 */

export const GROUPS = 5;

const HERE = new URL(".", import.meta.url);
const SECONDS = new URL("_seconds.json", HERE);

/**
 * A file's seconds when it has not been measured: its size, weighted by kind. A kilobyte of a
 * browser file takes about 20 times the seconds of a kilobyte of a unit file (it drives Chromium
 * through pages where a unit test makes a request in the same process), one of an end-to-end file
 * about 10 times (it waits on a server process); 0.25 ms a weighted byte, fitted to the measured
 * files.
 */
export function estimate(name: string, size: number): number {
  const weight = name.endsWith("_browser_test.ts") ? 20 : /_e2e_test\.ts$/.test(name) ? 10 : 1;
  return size * weight * 0.00025;
}

/** Every test file with its expected seconds, measured or estimated. */
export function expectedSeconds(): Map<string, number> {
  const measured: Record<string, number> = JSON.parse(Deno.readTextFileSync(SECONDS));
  const out = new Map<string, number>();
  for (const e of Deno.readDirSync(HERE)) {
    if (!e.isFile || !e.name.endsWith("_test.ts")) continue;
    out.set(
      e.name,
      measured[e.name] ?? estimate(e.name, Deno.statSync(new URL(e.name, HERE)).size),
    );
  }
  return out;
}

/** Every group's test files, in the order the group imports them (largest first). */
export function groups(): string[][] {
  const files = [...expectedSeconds()]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  const loads = Array.from({ length: GROUPS }, () => 0);
  const dealt = loads.map((): string[] => []);
  for (const [name, seconds] of files) {
    const least = loads.indexOf(Math.min(...loads));
    loads[least] += seconds;
    dealt[least].push(name);
  }
  return dealt;
}

/** Imports group `n`'s test files, which register their tests in this worker. */
export async function importGroup(n: number): Promise<void> {
  for (const name of groups()[n]) await import(new URL(name, HERE).href);
}

/** Each file's seconds in a JUnit report of `deno test` (its top-level tests, not steps). */
export function fileSeconds(junit: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const suite of junit.split("<testsuite ").slice(1)) {
    const file = suite.match(/^name="(?:\.\/)?tests\/([^"]+)"/)?.[1];
    if (!file) continue;
    let seconds = 0;
    for (const c of suite.matchAll(/<testcase name="([^"]*)"[^>]*? time="([\d.]+)"/g)) {
      if (!c[1].includes(" &gt; ")) seconds += Number(c[2]); // a step: counted in its test
    }
    out.set(file, seconds);
  }
  return out;
}

if (import.meta.main) {
  if (!Deno.args.length) {
    console.error("usage: deno run -A tests/_groups.ts <junit.xml>...");
    Deno.exit(2);
  }
  const runs = Deno.args.map((path) => fileSeconds(Deno.readTextFileSync(path)));
  const names = [...new Set(runs.flatMap((r) => [...r.keys()]))].sort();
  const average = Object.fromEntries(names.map((name) => {
    const seen = runs.map((r) => r.get(name)).filter((s) => s !== undefined);
    return [name, Math.round(seen.reduce((a, b) => a + b, 0) / seen.length * 10) / 10];
  }));
  Deno.writeTextFileSync(SECONDS, JSON.stringify(average, null, 2) + "\n");
}
