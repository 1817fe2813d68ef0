/**
 * `deno task test` runs every test file exactly once, in one of the groups of tests/_groups.ts,
 * whose entries (tests/_group_*.ts) the task runs, all at once.
 */
import assert from "node:assert/strict";
import { E2E, E2E_GROUPS, GROUPS, groups } from "./_groups.ts";
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
  for (const [i, files] of dealt.entries()) {
    assert.ok(files.length > 0, `group ${i} has files`);
    // The end-to-end files start the last groups, before anything else there.
    const e2e = files.filter((f) => E2E.test(f));
    if (i < GROUPS - E2E_GROUPS) assert.deepEqual(e2e, [], `group ${i}`);
    else assert.deepEqual(files.slice(0, e2e.length), e2e, `group ${i} starts with them`);
  }
});
