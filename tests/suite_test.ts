/**
 * `deno task test` runs every test file exactly once: the end-to-end files each in a worker of
 * their own (the task names them by pattern), every other file in one of the groups of
 * tests/_groups.ts, whose entries (tests/_group_*.ts) the task runs.
 */
import assert from "node:assert/strict";
import { groupFiles, GROUPS, OWN_WORKER } from "./_groups.ts";
import { ROOT } from "./_server.ts";

Deno.test("suite: the test task runs every test file once", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const args: string[] = config.tasks.test.split(/\s+/);
  assert.ok(args.includes("tests/_group_*.ts"), "the task runs every group");
  assert.ok(args.includes("tests/*_e2e_test.ts"), "the task runs the end-to-end files");
  assert.ok(OWN_WORKER.test("x_e2e_test.ts"), "the pattern the task names");
  const names = [...Deno.readDirSync(`${ROOT}tests`)].map((e) => e.name).sort();
  assert.deepEqual(
    names.filter((n) => /^_group_\d+\.ts$/.test(n)),
    Array.from({ length: GROUPS }, (_, i) => `_group_${i}.ts`),
  );
  const all = names.filter((n) => n.endsWith("_test.ts"));
  const own = all.filter((n) => n.endsWith("_e2e_test.ts"));
  const grouped = Array.from({ length: GROUPS }, (_, i) => groupFiles(i)).flat();
  assert.deepEqual([...own, ...grouped].sort(), all);
  assert.equal(new Set(grouped).size, grouped.length);
});
