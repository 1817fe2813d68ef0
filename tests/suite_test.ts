/**
 * `deno task test` runs every test file exactly once: each in one of the groups of
 * tests/_groups.ts (the end-to-end files in groups of their own), whose entries
 * (tests/_group_*.ts) the task runs, all at once.
 */
import assert from "node:assert/strict";
import { E2E, E2E_GROUPS, groupFiles, GROUPS } from "./_groups.ts";
import { ROOT } from "./_server.ts";

Deno.test("suite: the test task runs every test file once", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const args: string[] = config.tasks.test.split(/\s+/);
  assert.deepEqual(args.filter((a) => a.startsWith("tests/") && a.endsWith(".ts")), [
    "tests/_with_chromium.ts",
    "tests/_group_*.ts",
  ]);
  const count = GROUPS + E2E_GROUPS;
  assert.ok(args.includes(`DENO_JOBS=${count}`), "every group starts at once");
  const names = [...Deno.readDirSync(`${ROOT}tests`)].map((e) => e.name).sort();
  assert.deepEqual(
    names.filter((n) => /^_group_\d+\.ts$/.test(n)),
    Array.from({ length: count }, (_, i) => `_group_${i}.ts`).sort(),
  );
  const groups = Array.from({ length: count }, (_, i) => groupFiles(i));
  const grouped = groups.flat();
  assert.deepEqual([...grouped].sort(), names.filter((n) => n.endsWith("_test.ts")));
  assert.equal(new Set(grouped).size, grouped.length);
  for (const [i, files] of groups.entries()) {
    assert.ok(files.length > 0, `group ${i} has files`);
    assert.ok(files.every((f) => E2E.test(f) === i >= GROUPS), `group ${i} holds one kind`);
  }
});
