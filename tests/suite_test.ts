/**
 * `deno task test` runs every test file exactly once, in one of the groups of tests/_groups.ts,
 * whose entries (tests/_group_*.ts) the task runs, all at once.
 */
import assert from "node:assert/strict";
import { expectedSeconds, fileSeconds, GROUPS, groups } from "./_groups.ts";
import { ROOT } from "./_server.ts";

Deno.test("suite: the test task runs every test file once", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const args: string[] = config.tasks.test.split(/\s+/);
  assert.deepEqual(args.filter((a) => a.startsWith("tests/") && a.endsWith(".ts")), [
    "tests/_with_chromium.ts",
    "tests/_group_*.ts",
  ]);
  assert.ok(args.includes(`DENO_JOBS=${GROUPS}`), "every group starts at once");
  const names = [...Deno.readDirSync(`${ROOT}tests`)].map((e) => e.name).sort();
  assert.deepEqual(
    names.filter((n) => /^_group_\d+\.ts$/.test(n)),
    Array.from({ length: GROUPS }, (_, i) => `_group_${i}.ts`).sort(),
  );
  const dealt = groups();
  const grouped = dealt.flat();
  assert.deepEqual([...grouped].sort(), names.filter((n) => n.endsWith("_test.ts")));
  assert.equal(new Set(grouped).size, grouped.length);
  // Each group runs its largest files first, and the groups' expected seconds differ by less
  // than the largest file's: they end together, on small files.
  const seconds = expectedSeconds();
  const loads = dealt.map((files) => files.reduce((sum, f) => sum + seconds.get(f)!, 0));
  for (const [i, files] of dealt.entries()) {
    assert.ok(files.length > 0, `group ${i} has files`);
    const own = files.map((f) => seconds.get(f)!);
    assert.deepEqual(own, [...own].sort((a, b) => b - a), `group ${i} runs largest first`);
  }
  const largest = Math.max(...seconds.values());
  assert.ok(Math.max(...loads) - Math.min(...loads) <= largest, JSON.stringify(loads));
});

Deno.test("suite: the measured seconds are read from a JUnit report, steps apart", () => {
  const junit = `<testsuites><testsuite name="./tests/a_test.ts" tests="3">
    <testcase name="a one" classname="./tests/a_test.ts" time="1.5" line="1" col="1"></testcase>
    <testcase name="a one &gt; a step" classname="./tests/a_test.ts" time="1.0" line="2" col="3">
    </testcase>
    <testcase name="a two" classname="./tests/a_test.ts" time="0.25" line="9" col="1"></testcase>
    </testsuite><testsuite name="./tests/b_test.ts" tests="0"></testsuite></testsuites>`;
  assert.deepEqual([...fileSeconds(junit)], [["a_test.ts", 1.75], ["b_test.ts", 0]]);
  // A file not measured yet has an estimate from its size, more for the kinds that take longer.
  assert.ok(expectedSeconds().size >= GROUPS);
});
