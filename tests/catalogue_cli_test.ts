import assert from "node:assert/strict";
import { atomic, openKv, transact } from "../kv/_atomic.ts";
import { prepareAccount } from "../kv/accounts/accounts.ts";
import { exportCatalogue, importCatalogue } from "../kv/catalogue/catalogue_io.ts";
import { getModule } from "../kv/catalogue/modules.ts";
import { verifyTrail } from "../kv/store/trail.ts";
import { dumpKv, testApp } from "./_helpers.ts";

const root = new URL("..", import.meta.url);

async function run(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/catalogue.ts", ...args],
    cwd: root,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function addAccount(kv: Deno.Kv, email: string, name: string) {
  return await transact(async () => {
    const acc = await prepareAccount(kv, email, name, Date.now(), ["contributor"]);
    return { op: acc.apply(atomic(kv)), result: acc.account };
  });
}

const file = (contributors: string[], over: Record<string, unknown> = {}) => ({
  modules: [{
    slug: "pond-life",
    title: "Pond life through the seasons",
    who: "Primary classes",
    lede: "Children sample a school pond.",
    about: "A year-long outdoor module.",
    note: "Check the bank first",
    meta: "Outdoor",
    state: "finished",
    track: "Outdoor learning",
    area: "nature-based",
    by: "Grete Olsen",
    facts: [["Duration", "4 sessions"]],
    gets: ["A species chart"],
    published: true,
    contributors,
    licence: "CC-BY-4.0",
    audience: ["teacher"],
    level: ["level_1"],
    subject: ["s1001"],
    language: ["en"],
    type: ["lesson_plan", "worksheet"],
    accessibility: [],
    age_min: 8,
    age_max: 11,
    duration: 90,
    group_min: null,
    group_max: 30,
    materials: [{ label: "Key", url: "https://keys.example/pond", type: null, size: null }],
    ...over,
  }],
});

Deno.test("catalogue command: import and export on a KV file another process holds open", async () => {
  const dir = await Deno.makeTempDir();
  const env = { KV_PATH: `${dir}/kv.sqlite3`, CATALOGUE_FILE: `${dir}/catalogue.json` };
  // This process plays the running server: it keeps the KV open and writes while the command runs.
  const kv = await openKv(env.KV_PATH);
  try {
    const grete = await addAccount(kv, "grete@example.org", "Grete Olsen");
    await Deno.writeTextFile(`${dir}/in.json`, JSON.stringify(file(["Grete@Example.org"])));
    let busy = true;
    const writer = (async () => {
      for (let i = 0; busy; i++) await kv.set(["bench_noise", i % 5], i);
    })();
    const imported = await run(["import", `${dir}/in.json`], env);
    busy = false;
    await writer;
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /1 created, 0 updated/);
    const m = (await getModule(kv, "pond-life")).value!;
    assert.equal(m.title, "Pond life through the seasons");
    assert.deepEqual(m.contributors, [grete.id]);
    assert.equal(m.published, true);
    assert.equal(
      await kv.get(["modules_by_account", grete.id, "pond-life"]).then((e) => e.value),
      true,
    );
    const onDisk = JSON.parse(await Deno.readTextFile(env.CATALOGUE_FILE));
    assert.equal(onDisk.modules[0].slug, "pond-life");

    // An unknown contributor address: nothing changes, and the address is named.
    const before = await dumpKv(kv);
    await Deno.writeTextFile(
      `${dir}/bad.json`,
      JSON.stringify(file(["grete@example.org", "ghost@example.org"], { title: "Changed" })),
    );
    const refused = await run(["import", `${dir}/bad.json`], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^import refused: .*ghost@example\.org/);
    assert.equal(await dumpKv(kv), before);

    // An existing slug is updated; export prints the import form.
    await Deno.writeTextFile(
      `${dir}/upd.json`,
      JSON.stringify(file(["grete@example.org"], { title: "Pond life, all year" })),
    );
    const updated = await run(["import", `${dir}/upd.json`], env);
    assert.match(updated.stdout, /0 created, 1 updated/);
    const exported = await run(["export"], env);
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(
      JSON.parse(exported.stdout),
      file(["grete@example.org"], { title: "Pond life, all year" }),
    );
    assert.equal((await verifyTrail(kv)).ok, true);

    assert.equal((await run([], env)).code, 2);
    assert.equal((await run(["import"], env)).code, 2);
    const missing = await run(["import", `${dir}/none.json`], env);
    assert.equal(missing.code, 1);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalogue import: field rules, duplicate slugs, and round trip", async () => {
  await using t = await testApp();
  await t.account("grete@example.org", { name: "Grete Olsen", roles: ["contributor"] });
  const bad: [unknown, RegExp][] = [
    [{}, /modules: /],
    [{ modules: [{ slug: "Bad Slug", title: "Fine title" }] }, /modules\[0\]\.slug/],
    [{ modules: [{ slug: "ok", title: "ab" }] }, /modules\[0\]\.title/],
    [{ modules: [{ slug: "ok", title: "Fine", state: "done" }] }, /modules\[0\]\.state/],
    [{ modules: [{ slug: "ok", title: "Fine", gets: Array(9).fill("x") }] }, /gets/],
    [{ modules: [{ slug: "ok", title: "Fine" }, { slug: "ok", title: "Again" }] }, /twice/],
    [{ modules: [{ slug: "ok", title: "Fine", licence: "CC-BY-5.0" }] }, /modules\[0\]\.licence/],
    [{ modules: [{ slug: "ok", title: "Fine", subject: ["biology"] }] }, /modules\[0\]\.subject/],
    [{ modules: [{ slug: "ok", title: "Fine", age_min: 12, age_max: 8 }] }, /age_max/],
  ];
  for (const [data, re] of bad) {
    await assert.rejects(importCatalogue(t.deps, data), re);
  }
  assert.ok(!(await dumpKv(t.kv)).includes('["modules"'));
  const data = file(["grete@example.org"], { note: "" });
  assert.deepEqual(await importCatalogue(t.deps, data), { created: 1, updated: 0, unchanged: 0 });
  assert.deepEqual(await exportCatalogue(t.kv), data);
  // The same file again changes nothing, not even the trail.
  const lines = (await verifyTrail(t.kv)).lines;
  assert.deepEqual(await importCatalogue(t.deps, data), { created: 0, updated: 0, unchanged: 1 });
  assert.equal((await verifyTrail(t.kv)).lines, lines);
  const pub = await t.req("GET", "/api/catalogue");
  assert.equal(pub.body.modules[0].note, null);
  assert.equal(pub.body.modules[0].licence, "CC-BY-4.0");
  assert.equal(pub.body.modules[0].licence_url, "https://creativecommons.org/licenses/by/4.0/");
  // A module of a file without the metadata states none of it: no licence is assumed.
  await importCatalogue(t.deps, { modules: [{ slug: "bare", title: "Bare module" }] });
  const bare = (await getModule(t.kv, "bare")).value!;
  assert.equal(bare.licence, null);
  assert.deepEqual([bare.language, bare.subject, bare.duration], [[], [], null]);
});

Deno.test("example catalogue: every module imports with the example accounts", async () => {
  await using t = await testApp();
  const people = JSON.parse(await Deno.readTextFile(new URL("data_examples/people.json", root)));
  for (const p of people.accounts) {
    await t.account(p.email, { name: p.name, roles: ["contributor"] });
  }
  const data = JSON.parse(await Deno.readTextFile(new URL("data_examples/catalogue.json", root)));
  const r = await importCatalogue(t.deps, data);
  assert.equal(r.created, data.modules.length);
  assert.ok(r.created >= 5);
  const pub = await t.req("GET", "/api/catalogue");
  assert.equal(
    pub.body.count,
    data.modules.filter((m: { published: boolean }) => m.published).length,
  );
});

Deno.test("cli: importing a command module runs nothing (each runs only as the main module)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const names = [...Deno.readDirSync(new URL("cli/", root))]
      .map((e) => e.name).filter((n) => n.endsWith(".ts") && !n.startsWith("_")).sort();
    assert.ok(names.includes("demo.ts"), names.join());
    const code = names.map((n) => `await import("./cli/${n}");`).join("\n") +
      '\nconsole.log("imported");';
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--lock=deno.lock", code],
      cwd: root,
      env: { KV_PATH: `${dir}/kv.sqlite3` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    assert.equal(out.code, 0, dec.decode(out.stderr));
    assert.equal(dec.decode(out.stdout).trim(), "imported");
    assert.deepEqual([...Deno.readDirSync(dir)], [], "no KV opened");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
