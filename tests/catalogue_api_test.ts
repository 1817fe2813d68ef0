import assert from "node:assert/strict";
import {
  isSlugFree,
  modulesOf,
  publishModule,
  setModuleBy,
  unpublishModule,
} from "../kv/catalogue/catalogue_api.ts";
import { verifyTrail } from "../kv/store/trail.ts";
import { DAY } from "../lib/clock.ts";
import { dumpKv, testApp } from "./_helpers.ts";

type T = Awaited<ReturnType<typeof testApp>>;

/** The modules GET /api/search finds for `q`: title, slug and who they are by. */
async function searchModules(t: T, q: string) {
  const r = await t.req("GET", `/api/search?q=${encodeURIComponent(q)}`);
  return (r.body.modules as { title: string; slug: string; name: string }[])
    .map(({ title, slug, name }) => ({ title, slug, name }));
}

const input = (contributors: number[]) => ({
  slug: "pond-life",
  title: "Pond life through the seasons",
  who: "Primary classes, ages 8 to 11",
  lede: "Children sample a school pond four times a year.",
  about: "A year-long outdoor module with dip nets and magnifiers.",
  area: "nature-based",
  track: "outdoor",
  by: "Grete Olsen",
  facts: [["Duration", "4 sessions"], ["", "dropped"]] as [string, string][],
  gets: ["A species list", " ", "A seasonal poster"],
  contributors,
  proposal: 7,
});

Deno.test("catalogue api: publish, search, profile modules, by, unpublish", async () => {
  await using t = await testApp();
  const { account } = await t.account("grete@example.org", { name: "Grete Olsen" });
  assert.equal(await isSlugFree(t.kv, "pond-life"), true);
  assert.deepEqual(await publishModule(t.deps, input([account.id]), "account:1"), {
    slug: "pond-life",
  });
  assert.equal(await isSlugFree(t.kv, "pond-life"), false);

  const hits = await searchModules(t, "pond seas");
  assert.deepEqual(hits, [{
    title: "Pond life through the seasons",
    slug: "pond-life",
    name: "Grete Olsen",
  }]);
  assert.deepEqual(await searchModules(t, "pond volcano"), []);
  assert.deepEqual(await modulesOf(t.kv, account.id), [
    { title: "Pond life through the seasons", slug: "pond-life", published: "2026-03-02" },
  ]);

  assert.equal(await setModuleBy(t.deps, "pond-life", "", "system"), true);
  assert.equal((await searchModules(t, "pond"))[0].name, "");
  assert.equal(await setModuleBy(t.deps, "nope", "", "system"), false);

  assert.equal(await unpublishModule(t.deps, "pond-life", "account:1"), true);
  assert.deepEqual(await searchModules(t, "pond"), []);
  assert.deepEqual(await modulesOf(t.kv, account.id), []);
  assert.ok(!(await dumpKv(t.kv)).includes('["search","module"'), "no word index of modules");
  assert.equal(await unpublishModule(t.deps, "nope", "account:1"), false);

  // Published again: content kept, published date moves.
  t.clock.advance(3 * DAY);
  await publishModule(t.deps, { ...input([account.id]), title: "Another title" }, "account:1");
  const again = await modulesOf(t.kv, account.id);
  assert.deepEqual(again, [
    { title: "Pond life through the seasons", slug: "pond-life", published: "2026-03-05" },
  ]);
  const trail = await verifyTrail(t.kv);
  assert.equal(trail.ok, true);
  assert.ok(trail.lines >= 5);
});

Deno.test("catalogue api: publish, unpublish and by rewrite the catalogue file", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/catalogue.json`;
  await using t = await testApp({ config: { catalogueFile: file } });
  const { account } = await t.account("a@example.org", { name: "Anna Berg" });
  const onDisk = async () => JSON.parse(await Deno.readTextFile(file));
  await publishModule(t.deps, input([account.id]), "system");
  assert.deepEqual((await onDisk()).modules.map((m: { slug: string }) => m.slug), ["pond-life"]);
  await setModuleBy(t.deps, "pond-life", "", "system");
  assert.equal((await onDisk()).modules[0].by, "");
  await unpublishModule(t.deps, "pond-life", "system");
  assert.deepEqual(await onDisk(), (await t.req("GET", "/api/catalogue")).body);
  assert.equal((await onDisk()).count, 0);
  await Deno.remove(dir, { recursive: true });
});
