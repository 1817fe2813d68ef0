/**
 * Licence and educational metadata end to end: asked on the proposal form (the licence
 * required), carried by publication into the module, shown on its page as a badge with the
 * attribution to copy, in GET /api/catalogue, and in the module's JSON-LD, which is expanded
 * with a JSON-LD processor (the AMB context served from tests/data/amb/) and checked for the
 * fields AMB and its harvesters need.
 */
import assert from "node:assert/strict";
import { jsonld } from "./_dev_deps.ts";
import { runMigrations } from "../kv/store/migrations.ts";
import { getModule } from "../kv/catalogue/modules.ts";
import { isoDuration } from "../lib/learning.ts";
import { seedModule } from "./_catalogue.ts";
import { testApp } from "./_helpers.ts";

const ORIGIN = "http://localhost";
const post = (fields: Record<string, string>, cookie = "") => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
});

const AMB = "https://w3id.org/kim/amb/context.jsonld";
const S = "http://schema.org/";
const ambContext = JSON.parse(
  await Deno.readTextFile(new URL("./data/amb/context.jsonld", import.meta.url)),
);

/** Expands a record with the AMB context from disk: no request leaves the machine. */
async function expand(doc: object) {
  // deno-lint-ignore require-await
  const documentLoader = async (url: string) => {
    if (url !== AMB) throw new Error(`unexpected context ${url}`);
    return { contextUrl: undefined, documentUrl: url, document: ambContext };
  };
  const [node] = await jsonld.expand(doc, { documentLoader }) as Record<string, unknown>[];
  return node;
}

const ids = (v: unknown) => (v as { "@id": string }[]).map((x) => x["@id"]);
const values = (v: unknown) => (v as { "@value": unknown }[]).map((x) => x["@value"]);

const FORM = {
  name: "Grete Olsen",
  email: "grete@example.org",
  title: "Pond life through the seasons",
  area: "nature-based",
  summary: "Children sample a school pond four times a year.",
  who: "Primary classes that work outdoors",
  licence: "CC-BY-4.0",
  audience_teacher: "on",
  level_level_1: "on",
  age_min: "8",
  age_max: "11",
  subject_s1001: "on",
  language_en: "on",
  type_lesson_plan: "on",
  duration: "90",
  group_max: "30",
  accessibility_largePrint: "on",
  file_label_0: "Worksheet",
  file_url_0: "https://files.example/pond.pdf",
};

Deno.test("metadata: a proposal's licence and metadata reach the published module and its JSON-LD", async () => {
  await using t = await testApp();
  const grete = await t.account("grete@example.org", { name: "Grete Olsen" });
  const owner = await t.account("olga@example.org", { name: "Olga", roles: ["owner"] });
  const cookie = `session=${grete.token}`;

  // The form asks for the licence and refuses a proposal without one, keeping what was typed.
  const form = await t.req("GET", "/contribute", { headers: { cookie } });
  assert.match(form.text, /<label for="f-licence">Licence<\/label>/);
  assert.match(form.text, /<option value="" ?>Choose a licence<\/option>/);
  // English is ticked by default (the site's language), nothing else.
  assert.match(form.text, /name="language_en" checked/);
  assert.doesNotMatch(form.text, /name="audience_teacher" checked/);
  const { licence: _l, ...noLicence } = FORM;
  const refused = await t.req("POST", "/contribute", post({ ...noLicence, age_max: "7" }, cookie));
  assert.equal(refused.status, 400);
  assert.match(refused.text, /id="f-licence-error">Choose a licence/);
  assert.match(refused.text, /name="audience_teacher" checked/);
  assert.match(refused.text, /value="Primary classes that work outdoors"/);
  // Ages that end before they start are refused beside the field.
  const backwards = await t.req("POST", "/contribute", post({ ...FORM, age_max: "7" }, cookie));
  assert.equal(backwards.status, 400);
  assert.match(backwards.text, /id="f-age_max-error">The ages end before they start/);

  const sent = await t.req("POST", "/contribute", post(FORM, cookie));
  assert.equal(sent.status, 303, sent.text);
  const id = Number(sent.headers.get("location")!.match(/id=(\d+)/)![1]);
  const item = (await t.req("GET", `/api/contributions/${id}`, { token: owner.token })).body.item;
  assert.equal(item.licence, "CC-BY-4.0");
  assert.equal(item.who, "Primary classes that work outdoors");
  assert.deepEqual(item.audience, ["teacher"]);
  // The reviewer's page shows them among the proposal's fields.
  const review = await t.req("GET", `/team/proposals/${id}`, {
    headers: { cookie: `session=${owner.token}` },
  });
  assert.equal(review.status, 200);
  assert.match(review.text, /<dt>Licence<\/dt><dd>CC BY 4.0: name the author<\/dd>/);
  assert.match(
    review.text,
    /<dt>For<\/dt><dd><bdi>Primary classes that work outdoors<\/bdi><\/dd>/,
  );
  assert.match(review.text, /<dt>Level<\/dt><dd>Primary<\/dd>/);

  for (const status of ["reviewing", "published"]) {
    const r = await t.req("PATCH", `/api/contributions/${id}`, {
      token: owner.token,
      body: { status, reason: "Ready for teachers" },
    });
    assert.equal(r.status, 200, r.text);
  }
  const cat = await t.req("GET", "/api/catalogue");
  const mod = cat.body.modules[0];
  assert.deepEqual(
    {
      who: mod.who,
      licence: mod.licence,
      licence_url: mod.licence_url,
      audience: mod.audience,
      level: mod.level,
      subject: mod.subject,
      language: mod.language,
      type: mod.type,
      accessibility: mod.accessibility,
      ages: [mod.age_min, mod.age_max],
      duration: mod.duration,
      group: [mod.group_min, mod.group_max],
    },
    {
      who: "Primary classes that work outdoors",
      licence: "CC-BY-4.0",
      licence_url: "https://creativecommons.org/licenses/by/4.0/",
      audience: ["teacher"],
      level: ["level_1"],
      subject: ["s1001"],
      language: ["en"],
      type: ["lesson_plan"],
      accessibility: ["largePrint"],
      ages: [8, 11],
      duration: 90,
      group: [null, 30],
    },
  );

  // The page: the badge links the deed, the attribution is ready to copy, the For row is
  // filled, the file is a link, the metadata in words.
  const page = await t.req("GET", mod.url);
  assert.match(
    page.text,
    /<a class="badge open" href="https:\/\/creativecommons.org\/licenses\/by\/4.0\/" rel="license">/,
  );
  assert.match(
    page.text,
    /value="‘Pond life through the seasons’ by Grete Olsen, CC BY 4.0"/,
  );
  assert.match(page.text, /Copy attribution/);
  assert.match(page.text, /<dt>For<\/dt><dd><bdi>Primary classes that work outdoors<\/bdi>/);
  assert.match(page.text, /<a href="https:\/\/files.example\/pond.pdf">/);
  for (const words of ["Teachers", "Primary", "8 to 11", "Biology", "1 hour 30 minutes"]) {
    assert.ok(page.text.includes(words), words);
  }
  // No request to another origin: the deed is a link, nothing is loaded from it.
  assert.doesNotMatch(page.text, /<(img|script|link)[^>]+(src|href)="https?:\/\/(?!test\.local)/);

  const ld = JSON.parse(
    page.text.match(/<script type="application\/ld\+json">([^<]*)<\/script>/)![1],
  );
  // AMB's own rules of form: the context array with its language, type an array.
  assert.deepEqual(ld["@context"], [AMB, { "@language": "en" }]);
  assert.ok(Array.isArray(ld.type) && ld.type.includes("LearningResource"));
  const node = await expand(ld);
  assert.equal(node["@id"], "http://test.local/modules/pond-life-through-the-seasons");
  assert.deepEqual(node["@type"], [`${S}LearningResource`]);
  assert.deepEqual(values(node[`${S}name`]), ["Pond life through the seasons"]);
  assert.deepEqual(ids(node[`${S}license`]), ["https://creativecommons.org/licenses/by/4.0/"]);
  assert.deepEqual(values(node[`${S}inLanguage`]), ["en"]);
  const publisher = (node[`${S}publisher`] as Record<string, unknown>[])[0];
  assert.deepEqual(publisher["@type"], [`${S}Organization`]);
  assert.ok(values(publisher[`${S}name`])[0]);
  const modified = values(node[`${S}dateModified`])[0] as string;
  assert.ok(!Number.isNaN(Date.parse(modified)), modified);
  assert.deepEqual(ids(node[`${S}educationalLevel`]), [
    "https://w3id.org/kim/educationalLevel/level_1",
  ]);
  assert.deepEqual(ids(node[`${S}learningResourceType`]), [
    "https://w3id.org/kim/hcrt/lesson_plan",
  ]);
  assert.deepEqual(ids(node[`${S}about`]), ["http://w3id.org/kim/schulfaecher/s1001"]);
  assert.deepEqual(ids(node[`${S}audience`]), [
    "http://purl.org/dcx/lrmi-vocabs/educationalAudienceRole/teacher",
  ]);
  assert.deepEqual(values(node[`${S}timeRequired`]), ["PT1H30M"]);
  assert.deepEqual(values(node[`${S}typicalAgeRange`]), ["8-11"]);
  // The track stays a keyword: it is no educational level.
  assert.ok(values(node[`${S}keywords`]).includes("nature-based"));

  // A contributor changes the licence in the editor; "not stated" is one of the choices there.
  const editor = await t.req("GET", `/me/work/modules/${mod.slug}`, { headers: { cookie } });
  assert.match(editor.text, /<option value="CC-BY-4.0" selected/);
  assert.match(editor.text, /<option value="" ?>Licence not stated<\/option>/);
  const patched = await t.req("PATCH", `/api/me/modules/${mod.slug}`, {
    token: grete.token,
    body: { licence: "CC0-1.0", subject: ["s1001", "s1010"] },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.item.licence_url, "https://creativecommons.org/publicdomain/zero/1.0/");
  const bad = await t.req("PATCH", `/api/me/modules/${mod.slug}`, {
    token: grete.token,
    body: { licence: "GPL-3.0", age_min: 12 },
  });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^licence: /);
});

Deno.test("metadata: an API proposal without a licence states none; all rights reserved is no open licence", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const r = await t.req("POST", "/api/contributions", {
    token,
    body: {
      name: "Ada",
      email: "ada@example.org",
      title: "Engines",
      summary: "About engines.",
    },
  });
  assert.equal(r.status, 201, r.text);
  const p = (await t.req("GET", `/api/contributions/${r.body.id}`, { token })).body.item;
  assert.equal(p.licence, null);
  assert.deepEqual(p.language, []);
  const refused = await t.req("POST", "/api/contributions", {
    token,
    body: { name: "Ada", email: "ada@example.org", title: "Engines", summary: "x", duration: 0 },
  });
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /^duration: /);

  const ann = await t.account("ann@example.org", { name: "Ann", roles: ["contributor"] });
  await seedModule(t, "closed", [ann.account.id], { over: { licence: "all-rights-reserved" } });
  const page = await t.req("GET", "/modules/closed");
  assert.match(page.text, /All rights reserved/);
  assert.doesNotMatch(page.text, /Attribution to copy/);
  const ld = JSON.parse(
    page.text.match(/<script type="application\/ld\+json">([^<]*)<\/script>/)![1],
  );
  assert.equal(ld.license, undefined);
});

Deno.test("metadata: the migration gives older modules nothing stated and searches their track", async () => {
  await using t = await testApp();
  const ann = await t.account("ann@example.org", { name: "Ann", roles: ["contributor"] });
  await seedModule(t, "pond", [ann.account.id], {
    over: { track: "Outdoor learning", title: "Pond life", about: "With dip nets." },
  });
  // As a module stored before the metadata: no fields, its index of the old text only.
  const entry = await getModule(t.kv, "pond");
  const old = Object.fromEntries(
    Object.entries(entry.value!).filter(([k]) =>
      !["licence", "audience", "level", "subject", "language", "type", "accessibility"]
        .includes(k) && !/^(age|group)_|^duration$/.test(k)
    ),
  );
  await t.kv.set(entry.key, old);
  for await (const e of t.kv.list({ prefix: ["migrations"] })) {
    if ((e.value as { name: string }).name.startsWith("modules: a licence")) {
      await t.kv.delete(e.key);
    }
  }
  await runMigrations(t.kv, t.clock.now());
  const m = (await getModule(t.kv, "pond")).value!;
  assert.equal(m.licence, null);
  assert.deepEqual([m.audience, m.duration], [[], null]);
  const found = (await t.req("GET", "/api/search?q=outdoor")).body.modules;
  assert.deepEqual(found.map((h: { slug: string }) => h.slug), ["pond"]);
  const page = await t.req("GET", "/modules/pond");
  assert.match(page.text, /Licence not stated/);
});

Deno.test("metadata: durations as ISO 8601", () => {
  assert.equal(isoDuration(45), "PT45M");
  assert.equal(isoDuration(90), "PT1H30M");
  assert.equal(isoDuration(120), "PT2H");
  assert.equal(isoDuration(1440), "P1D");
  assert.equal(isoDuration(1500), "P1DT1H");
});
