/**
 * The Healthchecks import and API agree with dependencies (issue 47, item 1): Healthchecks has
 * none, so imported checks depend on nothing (a `depends_on` in the export is not read); a
 * dependency chosen afterwards through this API or the service's form works, a cycle is refused
 * in a plain sentence, and a later Healthchecks API update of the check keeps it.
 */
import assert from "node:assert/strict";
import { testApp } from "./_helpers.ts";

const HC_EXPORT = JSON.parse(
  await Deno.readTextFile(new URL("./data/healthchecks_v3_checks.json", import.meta.url)),
);

Deno.test("Healthchecks import: no dependencies; chosen later they work, cycles refused", async () => {
  await using t = await testApp();
  const { token } = await t.account("hc@deps.test", { name: "Keeper" });
  // An export with a field of this service's own: not taken from Healthchecks' data.
  const data = structuredClone(HC_EXPORT);
  data.checks[1].depends_on = [1, 2];
  const done = await t.req("POST", "/api/me/import", { token, body: { data } });
  assert.equal(done.status, 200, done.text);
  type Item = { id: number; name: string; depends_on: number[]; uuid?: string };
  const items = async () =>
    (await t.req("GET", "/api/me/services", { token })).body.items as Item[];
  const imported = await items();
  assert.deepEqual(imported.map((s) => s.name), [
    "Filesystem Backup",
    "Database Backup",
    "Weekly report",
    "Log rotate",
  ]);
  for (const s of imported) assert.deepEqual(s.depends_on, [], `${s.name}: none`);
  const [fs, db, weekly] = imported;

  // Chosen through this API: the database backup depends on the file system's.
  const patch = (id: number, depends_on: unknown) =>
    t.req("PATCH", `/api/me/services/${id}`, { token, body: { depends_on } });
  const chosen = await patch(db.id, [fs.id]);
  assert.equal(chosen.status, 200, chosen.text);
  assert.deepEqual(chosen.body.item.depends_on, [fs.id]);
  const cycle = await patch(fs.id, [db.id]);
  assert.equal(cycle.status, 400);
  assert.equal(cycle.body.field, "depends_on");
  assert.equal(
    cycle.body.error,
    'depends_on: "Database Backup" already depends on "Filesystem Backup", and a service ' +
      "cannot depend on itself, even through others",
  );

  // Through the form of the weekly report: ticked by name, the rest of its settings kept.
  const cookie = `session=${token}`;
  const page = await t.req("GET", `/me/services/${weekly.id}`, { headers: { cookie } });
  assert.match(page.text, /<legend>Depends on<\/legend>/);
  const form = new URLSearchParams();
  for (const m of page.text.matchAll(/<input[^>]*>/g)) {
    const name = m[0].match(/name="([^"]+)"/)?.[1];
    const type = m[0].match(/type="([^"]+)"/)?.[1] ?? "text";
    const value = m[0].match(/value="([^"]*)"/)?.[1] ?? "";
    if (!name || type === "submit") continue;
    if (type === "checkbox" || type === "radio") {
      if (/\schecked/.test(m[0])) form.append(name, value || "on");
    } else form.append(name, value.replaceAll("&amp;", "&").replaceAll("&quot;", '"'));
  }
  // The first form of the page is the settings' one; its selects keep their chosen option.
  const settings = page.text.slice(page.text.indexOf("<legend>Depends on</legend>") - 20_000);
  for (const m of settings.matchAll(/<select[^>]*name="([^"]+)"[^>]*>(.*?)<\/select>/gs)) {
    const picked = m[2].match(/<option[^>]*value="([^"]*)"[^>]*selected/)?.[1];
    if (picked !== undefined && !form.has(m[1])) form.set(m[1], picked);
  }
  const box = page.text.match(
    new RegExp(`<input[^>]*name="(d-${db.id})"[^>]*>\\s*<label[^>]*>Database Backup`),
  );
  assert.ok(box, "the dependency's box, labelled by its name");
  form.set(`d-${db.id}`, "on");
  const saved = await t.req("POST", `/me/services/${weekly.id}`, {
    raw: form.toString(),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: "http://test.local",
      cookie,
    },
  });
  assert.equal(saved.status, 303, saved.text.slice(0, 2000));
  const after = await items();
  assert.deepEqual(after.find((s) => s.id === weekly.id)!.depends_on, [db.id]);
  assert.equal(after.find((s) => s.id === weekly.id)!.name, "Weekly report");

  // A Healthchecks API update of the check (it knows no dependencies) keeps them.
  const key = await t.req("POST", "/api/me/api-keys", {
    token,
    body: { name: "ci", readonly: false },
  });
  assert.equal(key.status, 201, key.text);
  const uuid = HC_EXPORT.checks[1].uuid as string;
  const updated = await t.req("POST", `/api/v3/checks/${uuid}`, {
    headers: { "X-Api-Key": key.body.key },
    raw: JSON.stringify({ name: "Database Backup", grace: 1800, depends_on: [] }),
  });
  assert.equal(updated.status, 200, updated.text);
  assert.equal("depends_on" in updated.body, false, "Healthchecks' answer has no such field");
  assert.deepEqual((await items()).find((s) => s.id === db.id)!.depends_on, [fs.id]);
});
