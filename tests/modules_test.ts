import assert from "node:assert/strict";
import { cataloguePart } from "../kv/parts/catalogue.ts";
import { verifyTrail } from "../kv/store/trail.ts";
import { DAY } from "../lib/clock.ts";
import { seedModule } from "./_catalogue.ts";
import { dumpKv, testApp } from "./_helpers.ts";

/** The slugs of the modules GET /api/search finds for `q`. */
async function found(t: Awaited<ReturnType<typeof testApp>>, q: string): Promise<string[]> {
  const r = await t.req("GET", `/api/search?q=${encodeURIComponent(q)}`);
  return (r.body.modules as { slug: string }[]).map((h) => h.slug);
}

async function setup(config = {}) {
  const t = await testApp({ config });
  const grete = await t.account("grete@example.org", {
    name: "Grete Olsen",
    roles: ["contributor"],
  });
  const other = await t.account("other@example.org", { name: "Other Person" });
  const reviewer = await t.account("rev@example.org", { name: "Rita Review", roles: ["reviewer"] });
  await seedModule(t, "pond-life", [grete.account.id]);
  await seedModule(t, "draft-work", [grete.account.id], { published: false });
  await seedModule(t, "solder-club", [other.account.id], { over: { title: "Solder club" } });
  return { t, grete, other, reviewer };
}

Deno.test("modules: listing is the caller's, or every module for the team", async () => {
  const { t, grete, other, reviewer } = await setup();
  await using _ = t;
  assert.equal((await t.req("GET", "/api/me/modules")).status, 401);
  const mine = await t.req("GET", "/api/me/modules", { token: grete.token });
  assert.equal(mine.status, 200);
  assert.equal(mine.body.team, false);
  assert.deepEqual(mine.body.items.map((m: { slug: string }) => m.slug), [
    "draft-work",
    "pond-life",
  ]);
  const stranger = await t.account("new@example.org");
  const none = await t.req("GET", "/api/me/modules", { token: stranger.token });
  assert.deepEqual(none.body, { items: [], team: false });
  const all = await t.req("GET", "/api/me/modules", { token: reviewer.token });
  assert.equal(all.body.team, true);
  assert.equal(all.body.items.length, 3);
  const svc = await t.req("GET", "/api/me/modules", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(svc.status, 200);
  assert.equal(svc.body.team, true);
  assert.equal(svc.body.items.length, 3);
  const bad = await t.req("GET", "/api/me/modules", { headers: { "x-service-token": "wrong" } });
  assert.equal(bad.status, 401);
  const o = await t.req("GET", "/api/me/modules", { token: other.token });
  assert.deepEqual(o.body.items.map((m: { slug: string }) => m.slug), ["solder-club"]);
});

Deno.test("modules: one module has every field; 403 for a non-contributor, 404 unknown", async () => {
  const { t, grete, other, reviewer } = await setup();
  await using _ = t;
  const r = await t.req("GET", "/api/me/modules/pond-life", { token: grete.token });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.item, {
    slug: "pond-life",
    title: "Pond life through the seasons",
    who: "Primary classes, ages 8 to 11",
    lede: "Children sample a school pond four times a year.",
    about: "A year-long outdoor module with dip nets and magnifiers.",
    note: null,
    meta: "",
    state: "development",
    track: "outdoor",
    area: "nature-based",
    by: "Grete Olsen",
    url: "/modules/pond-life",
    updated: "2026-03-02",
    facts: [["Duration", "4 sessions"]],
    gets: ["A species list"],
    contributors: [{ id: grete.account.id, name: "Grete Olsen" }],
    points: 0,
    published: true,
    // Nothing stated: the licence is not assumed.
    licence: null,
    licence_url: null,
    audience: [],
    level: [],
    subject: [],
    language: [],
    type: [],
    accessibility: [],
    age_min: null,
    age_max: null,
    duration: null,
    group_min: null,
    group_max: null,
    materials: [],
  });
  const denied = await t.req("GET", "/api/me/modules/pond-life", { token: other.token });
  assert.equal(denied.status, 403);
  assert.ok(denied.body.error);
  assert.equal(
    (await t.req("GET", "/api/me/modules/pond-life", { token: reviewer.token })).status,
    200,
  );
  assert.equal((await t.req("GET", "/api/me/modules/nope", { token: grete.token })).status, 404);
  assert.equal(
    (await t.req("GET", "/api/me/modules/Bad_Slug!", { token: grete.token })).status,
    404,
  );
  assert.equal((await t.req("GET", "/api/me/modules/pond-life")).status, 401);
});

Deno.test("modules: PATCH edits, stamps updated, one trail line per field, no content", async () => {
  const { t, grete } = await setup();
  await using _ = t;
  t.clock.advance(2 * DAY);
  const r = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    body: {
      title: "  Pond life, all year  ",
      note: "Bring boots",
      meta: "Autumn term",
      state: "finished",
      facts: [["Duration", "4 sessions"], ["", "no label"], ["Group", " "], ["Cost", "none"]],
      gets: ["A species list", "", "A poster"],
      slug: "ignored",
    },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.item.title, "Pond life, all year");
  assert.equal(r.body.item.slug, "pond-life");
  assert.equal(r.body.item.note, "Bring boots");
  assert.equal(r.body.item.state, "finished");
  assert.equal(r.body.item.updated, "2026-03-04");
  assert.deepEqual(r.body.item.facts, [["Duration", "4 sessions"], ["Cost", "none"]]);
  assert.deepEqual(r.body.item.gets, ["A species list", "A poster"]);
  assert.deepEqual(r.body.changed.sort(), ["facts", "gets", "meta", "note", "state", "title"]);

  const trail = await dumpKv(t.kv);
  const lines = trail.split("\n").filter((l) =>
    l.startsWith('["trail",') && l.includes("module.update")
  );
  assert.equal(lines.length, 6);
  assert.ok(lines.every((l) => l.includes(`"actor":"account:${grete.account.id}"`)));
  assert.ok(!lines.some((l) => /Bring boots|Autumn|all year|poster/.test(l)));
  assert.equal((await verifyTrail(t.kv)).ok, true);

  // Empty strings clear note and meta; gets as text lines.
  const cleared = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    body: { note: "", meta: null, gets: "one\ntwo\n\n" },
  });
  assert.equal(cleared.status, 200);
  assert.equal(cleared.body.item.note, null);
  assert.equal(cleared.body.item.meta, "");
  assert.deepEqual(cleared.body.item.gets, ["one", "two"]);

  // Nothing changed: no trail line, updated kept.
  t.clock.advance(DAY);
  const before = (await verifyTrail(t.kv)).lines;
  const same = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    body: { state: "finished" },
  });
  assert.equal(same.status, 200);
  assert.deepEqual(same.body.changed, []);
  assert.equal(same.body.item.updated, "2026-03-04");
  assert.equal((await verifyTrail(t.kv)).lines, before);
});

Deno.test("modules: bad PATCH input answers 400 naming the field and changes nothing", async () => {
  const { t, grete } = await setup();
  await using _ = t;
  const before = await dumpKv(t.kv);
  const cases: [unknown, string][] = [
    [{ title: "ab" }, "title"],
    [{ title: "x".repeat(121) }, "title"],
    [{ who: "x".repeat(161) }, "who"],
    [{ lede: "x".repeat(301) }, "lede"],
    [{ about: "x".repeat(4001) }, "about"],
    [{ note: "x".repeat(2001) }, "note"],
    [{ meta: "x".repeat(161) }, "meta"],
    [{ state: "done" }, "state"],
    [{ facts: Array.from({ length: 13 }, (_, i) => [`l${i}`, "v"]) }, "facts"],
    [{ facts: [["x".repeat(61), "v"]] }, "facts"],
    [{ facts: [["l", "v".repeat(201)]] }, "facts"],
    [{ facts: [["only one"]] }, "facts"],
    [{ gets: Array.from({ length: 9 }, (_, i) => `line ${i}`) }, "gets"],
    [{ gets: [42] }, "gets"],
    [{ title: 42 }, "title"],
    // Control characters and lone surrogates are not text; a title is one line.
    [{ title: "Pond\u0000life" }, "title"],
    [{ title: "Pond\nlife" }, "title"],
    // Two emoji are two characters (four UTF-16 units): under the minimum of 3.
    [{ title: "\u{1F331}\u{1F331}" }, "title"],
    [{ lede: "\u{1F331}".repeat(301) }, "lede"],
    [{ lede: "bell\u0007" }, "lede"],
    [{ about: "half \ud800 a pair" }, "about"],
    [{ facts: [["l\u001b", "v"]] }, "facts"],
    [{ gets: "one\nt\u0000wo" }, "gets"],
    [{}, "body"],
  ];
  for (const [body, field] of cases) {
    const r = await t.req("PATCH", "/api/me/modules/pond-life", { token: grete.token, body });
    assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 60)}: ${r.text}`);
    assert.equal(r.body.field.split(".")[0], field, r.text);
    assert.match(r.body.error, new RegExp(`^${field}`));
  }
  const notJson = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    raw: "{oops",
    headers: { "content-type": "application/json" },
  });
  assert.equal(notJson.status, 400);
  assert.equal(await dumpKv(t.kv), before);
  // Exactly 12 filled pairs and 8 lines are fine (empty pairs do not count).
  const ok = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    body: {
      facts: [...Array.from({ length: 12 }, (_, i) => [`l${i}`, "v"]), ["", ""]],
      gets: Array.from({ length: 8 }, (_, i) => `line ${i}`),
    },
  });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.item.facts.length, 12);
  // At the limits counted in characters, emoji included.
  const wide = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    body: {
      title: "\u{1F331}".repeat(120),
      lede: "\u{1F331}".repeat(300),
      gets: "\u{1F331}".repeat(300),
    },
  });
  assert.equal(wide.status, 200, wide.text);
  assert.notEqual(await dumpKv(t.kv), before);
});

Deno.test("modules: PATCH by a non-contributor 403, by the team allowed", async () => {
  const { t, other, reviewer } = await setup();
  await using _ = t;
  const denied = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: other.token,
    body: { title: "Taken over" },
  });
  assert.equal(denied.status, 403);
  assert.equal(
    (await t.req("PATCH", "/api/me/modules/nope", {
      token: other.token,
      body: { title: "Taken over" },
    })).status,
    404,
  );
  const team = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: reviewer.token,
    body: { lede: "Checked by the team" },
  });
  assert.equal(team.status, 200);
  const svc = await t.req("PATCH", "/api/me/modules/pond-life", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
    body: { who: "Everyone" },
  });
  assert.equal(svc.status, 200);
  assert.ok((await dumpKv(t.kv)).includes('"actor":"service","action":"module.update"'));
});

Deno.test("modules: the catalogue is rewritten at once after each change, file included", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/pub/catalogue.json`;
  const { t, grete } = await setup({ catalogueFile: file });
  await using _ = t;
  const first = await t.req("GET", "/api/catalogue");
  assert.equal(first.status, 200);
  assert.match(first.headers.get("content-type")!, /application\/json/);
  assert.deepEqual(first.body.modules.map((m: { slug: string }) => m.slug), [
    "pond-life",
    "solder-club",
  ]);
  assert.equal(first.body.count, 2);
  assert.equal(first.body.modules[0].contributors[0].name, "Grete Olsen");
  assert.equal(first.body.modules[0].points, undefined);

  const r = await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    body: { title: "Pond life, renamed" },
  });
  assert.equal(r.status, 200);
  const after = await t.req("GET", "/api/catalogue");
  assert.equal(after.body.modules[0].title, "Pond life, renamed");
  const onDisk = JSON.parse(await Deno.readTextFile(file));
  assert.equal(onDisk.modules[0].title, "Pond life, renamed");
  assert.deepEqual(onDisk.modules, after.body.modules);
  // No temporary files are left beside it.
  const names = [...Deno.readDirSync(`${dir}/pub`)].map((e) => e.name);
  assert.deepEqual(names, ["catalogue.json"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("modules: contributors added by address, removed, the last one kept", async () => {
  const { t, grete, other } = await setup();
  await using _ = t;
  const helper = await t.account("helper@example.org", {
    name: "Hal Helper",
    roles: ["contributor"],
  });
  await t.account("noname@example.org", { roles: ["contributor"] });
  const path = "/api/me/modules/pond-life/contributors";
  for (const email of ["nobody@example.org", "noname@example.org", "other@example.org", "bad"]) {
    const r = await t.req("POST", path, { token: grete.token, body: { email } });
    assert.equal(r.status, 400, email);
    assert.equal(r.body.field, "email");
  }
  assert.equal(
    (await t.req("POST", path, { token: other.token, body: { email: "helper@example.org" } }))
      .status,
    403,
  );
  const added = await t.req("POST", path, {
    token: grete.token,
    body: { email: " Helper@Example.org " },
  });
  assert.equal(added.status, 200, added.text);
  assert.deepEqual(added.body.contributors, [
    { id: grete.account.id, name: "Grete Olsen" },
    { id: helper.account.id, name: "Hal Helper" },
  ]);
  const again = await t.req("POST", path, {
    token: grete.token,
    body: { email: "helper@example.org" },
  });
  assert.equal(again.body.contributors.length, 2);
  // The new contributor sees and may edit it.
  const hers = await t.req("GET", "/api/me/modules", { token: helper.token });
  assert.deepEqual(hers.body.items.map((m: { slug: string }) => m.slug), ["pond-life"]);
  assert.equal(
    (await t.req("PATCH", "/api/me/modules/pond-life", {
      token: helper.token,
      body: { meta: "x" },
    })).status,
    200,
  );

  assert.equal((await t.req("DELETE", `${path}/999`, { token: grete.token })).status, 404);
  assert.equal((await t.req("DELETE", `${path}/abc`, { token: grete.token })).status, 404);
  const removed = await t.req("DELETE", `${path}/${grete.account.id}`, { token: helper.token });
  assert.equal(removed.status, 200);
  assert.deepEqual(removed.body.contributors, [{ id: helper.account.id, name: "Hal Helper" }]);
  assert.equal(
    (await t.req("GET", "/api/me/modules/pond-life", { token: grete.token })).status,
    403,
  );
  const last = await t.req("DELETE", `${path}/${helper.account.id}`, { token: helper.token });
  assert.equal(last.status, 409);
  assert.ok(last.body.error);
  const kv = await dumpKv(t.kv);
  assert.ok(!kv.includes(`["modules_by_account",${grete.account.id},"pond-life"]`));
  assert.ok(kv.includes(`["modules_by_account",${helper.account.id},"pond-life"]`));
});

Deno.test("modules: published modules are searchable, unpublished are not", async () => {
  const { t, grete } = await setup();
  await using _ = t;
  assert.deepEqual(await found(t, "solder"), [
    "solder-club",
  ]);
  assert.deepEqual(await found(t, "draft"), []);
  await t.req("PATCH", "/api/me/modules/pond-life", {
    token: grete.token,
    body: { lede: "Frogspawn counts" },
  });
  assert.deepEqual(await found(t, "frogsp"), [
    "pond-life",
  ]);
  assert.deepEqual(
    await found(t, "four times"),
    ["solder-club"],
  );
});

Deno.test("modules: export holds the account's modules and points; erasure leaves them", async () => {
  const { t, grete, other } = await setup();
  await using _ = t;
  await t.req("POST", "/api/modules/solder-club/point", { token: grete.token });
  await t.req("POST", "/api/modules/pond-life/point", { token: grete.token });
  await t.req("POST", "/api/modules/pond-life/point", { token: other.token });
  const exp = await cataloguePart.export(t.deps, grete.account);
  assert.deepEqual((exp.modules as { slug: string }[]).map((m) => m.slug), [
    "draft-work",
    "pond-life",
  ]);
  assert.deepEqual((exp.points as string[]).sort(), ["pond-life", "solder-club"]);
  assert.deepEqual(await cataloguePart.counts!(t.deps, grete.account), { modules: 2 });

  await cataloguePart.erase(t.deps, grete.account, { keep: new Set(), remove: new Set() });
  const pts = await t.req("GET", "/api/points");
  assert.deepEqual(pts.body.counts, { "pond-life": 1, "solder-club": 0 });
  const meta = await t.req("GET", "/api/modules/meta");
  assert.deepEqual(meta.body.items["pond-life"].contributors, []);
  const kv = await dumpKv(t.kv);
  assert.ok(!kv.includes(`["modules_by_account",${grete.account.id},`));
  assert.ok(!kv.includes(`["points_by_account",${grete.account.id},`));
  assert.ok(!kv.includes(`["points","pond-life",${grete.account.id}]`));
  assert.ok(!kv.includes(`"contributors":[${grete.account.id}]`));
  assert.equal((await verifyTrail(t.kv)).ok, true);
});

Deno.test("modules: a contributor's new name shows at once in meta, the catalogue and its file", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/catalogue.json`;
  const { t, grete } = await setup({ catalogueFile: file });
  await using _ = t;
  const names = async () => {
    const meta = await t.req("GET", "/api/modules/meta");
    const cat = await t.req("GET", "/api/catalogue");
    const disk = JSON.parse(await Deno.readTextFile(file));
    const pond = (doc: { modules: { slug: string; contributors: { name: string }[] }[] }) =>
      doc.modules.find((m) => m.slug === "pond-life")!.contributors[0].name;
    return [meta.body.items["pond-life"].contributors[0].name, pond(cat.body), pond(disk)];
  };
  // A module write first, so that the file exists and the published document is cached.
  await t.req("PATCH", "/api/me/modules/pond-life", { token: grete.token, body: { meta: "m" } });
  assert.deepEqual(await names(), ["Grete Olsen", "Grete Olsen", "Grete Olsen"]);
  const r = await t.req("PATCH", "/api/me", { token: grete.token, body: { name: "Grete Berg" } });
  assert.equal(r.status, 200, r.text);
  // No clock advance: the rename itself moves the catalogue.
  assert.deepEqual(await names(), ["Grete Berg", "Grete Berg", "Grete Berg"]);
  await Deno.remove(dir, { recursive: true });
});
