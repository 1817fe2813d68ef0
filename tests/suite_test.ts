/**
 * `deno task test` runs every test file exactly once: the files that wait on a real server or a
 * browser each in a worker of its own (the task names them by pattern), every other one in one
 * of the shared workers of tests/_units.ts.
 */
import assert from "node:assert/strict";
import { OWN_WORKER, UNIT_GROUPS, unitFiles } from "./_units.ts";
import { ROOT } from "./_server.ts";

Deno.test("suite: the test task runs every test file once", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const args: string[] = config.tasks.test.split(/\s+/).filter((a: string) =>
    a.startsWith("tests/")
  );
  const all = [...Deno.readDirSync(`${ROOT}tests`)].map((e) => e.name)
    .filter((n) => n.endsWith("_test.ts")).sort();
  // The task's patterns, as its shell expands them.
  const glob = (pattern: string) =>
    new RegExp(`^${pattern.replace("tests/", "").replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);
  const own = all.filter((n) => args.some((a) => a.includes("*") && glob(a).test(n)));
  assert.deepEqual(own, all.filter((n) => OWN_WORKER.test(n)));
  const groups = Array.from({ length: UNIT_GROUPS }, (_, i) => `tests/_units_${i}.ts`);
  for (const g of groups) assert.ok(args.includes(g), `the task runs ${g}`);
  const grouped = groups.flatMap((_, i) => unitFiles(i));
  assert.deepEqual([...own, ...grouped].sort(), all);
});
