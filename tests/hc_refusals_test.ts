/**
 * The refusals on the Healthchecks surfaces, as Healthchecks answers them (hc/api/decorators.py
 * `authorize`, hc/api/views.py `ping_by_slug`, its Spec's slug rule): an `api_key` that is not a
 * string, `?create=1` slugs outside `[a-z0-9-_]{1,100}`, and imports that name a UUID twice or
 * race another import for one UUID (one wins, the other a plain 409, never a 503).
 */
import assert from "node:assert/strict";
import { type TestApp, testApp } from "./_helpers.ts";

async function writeKey(t: TestApp, email: string) {
  const { token } = await t.account(email, { name: "Keeper" });
  const r = await t.req("POST", "/api/me/api-keys", { token, body: { name: "ci" } });
  assert.ok(r.status === 200 || r.status === 201, r.text);
  return { token, key: r.body.key as string };
}

Deno.test("api_key in the body: only a string is a key; an array or a number is 401 missing api key", async () => {
  await using t = await testApp();
  const { token, key } = await writeKey(t, "a@example.org");
  for (const api_key of [[key], { key }, 12345678901234567890123456789012, true, null]) {
    const r = await t.req("POST", "/api/v3/checks/", {
      raw: JSON.stringify({ api_key, name: "Backups" }),
      headers: { "content-type": "application/json" },
    });
    assert.equal(r.status, 401, JSON.stringify(api_key));
    assert.deepEqual(r.body, { error: "missing api key" });
  }
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 0);
  // The string itself still works.
  const made = await t.req("POST", "/api/v3/checks/", {
    raw: JSON.stringify({ api_key: key, name: "Backups" }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(made.status, 201, made.text);
});

Deno.test("?create=1: a slug of 1 to 100 of [a-z0-9-_] makes a check named 2 to 80; longer is 400 invalid url format", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const pk = (await t.req("POST", "/api/me/ping-key", { token })).body.ping_key;
  for (const slug of ["a".repeat(101), "b".repeat(5000)]) {
    const r = await t.req("GET", `/ping/${pk}/${slug}?create=1`);
    assert.equal(r.status, 400, slug.length.toString());
    assert.equal(r.text, "invalid url format");
  }
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 0);
  const long = "c".repeat(100);
  const made = await t.req("GET", `/ping/${pk}/${long}?create=1`);
  assert.equal(made.status, 201, made.text);
  assert.equal(made.text, "Created");
  const one = await t.req("GET", `/ping/${pk}/x?create=1`, { from: "192.0.2.9" });
  assert.equal(one.status, 201, one.text);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items as {
    name: string;
    slug: string;
  }[];
  const bySlug = Object.fromEntries(items.map((s) => [s.slug, s.name]));
  assert.equal(bySlug[long], "c".repeat(80), "the name is the slug, cut to 80");
  assert.equal(bySlug.x, "check x", "a one-character slug's name is at least 2");
  // The check answers its slug as any other.
  assert.equal((await t.req("GET", `/ping/${pk}/${long}`)).text, "OK");
});

const UUID = "6a0f7b52-3c1d-4e8f-9a2b-1c3d5e7f9a0b";
const check = (name: string, uuid = UUID) => ({
  name,
  slug: name.toLowerCase(),
  tags: "",
  desc: "",
  grace: 3600,
  n_pings: 0,
  status: "new",
  timeout: 86400,
  ping_url: `https://hc-ping.com/${uuid}`,
  uuid,
});

Deno.test("import: an export naming one UUID three times makes it once, the others said why", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const data = { checks: [check("First"), check("Second"), check("Third")] };
  const r = await t.req("POST", "/api/me/import", { token, body: { data } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.created.map((c: { name: string }) => c.name), ["First"]);
  assert.deepEqual(r.body.cannot, [
    { from: "Second", why: "its UUID is an earlier check's of this export" },
    { from: "Third", why: "its UUID is an earlier check's of this export" },
  ]);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  assert.equal(items.length, 1);
  assert.equal(items[0].uuid, UUID);
});

Deno.test("import: two accounts importing one new UUID at once: one wins, the other a plain 409", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "A" });
  const b = await t.account("b@example.org", { name: "B" });
  for (let round = 0; round < 4; round++) {
    const uuid = `6a0f7b52-3c1d-4e8f-9a2b-1c3d5e7f9a0${round}`;
    const data = { checks: [check(`Job ${round}`, uuid)] };
    const both = await Promise.all(
      [a, b].map((who) => t.req("POST", "/api/me/import", { token: who.token, body: { data } })),
    );
    const statuses = both.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409], both.map((r) => r.text).join(" | "));
    const lost = both.find((r) => r.status === 409)!;
    assert.match(lost.body.error, /^(a check with one of these UUIDs|nothing to import)/);
    assert.doesNotMatch(lost.text, /contention/);
    // One service holds the UUID, in one account.
    const held = await Promise.all(
      [a, b].map(async (who) =>
        ((await t.req("GET", "/api/me/services", { token: who.token })).body.items as {
          uuid: string;
        }[]).filter((s) => s.uuid === uuid).length
      ),
    );
    assert.equal(held[0] + held[1], 1);
  }
});
