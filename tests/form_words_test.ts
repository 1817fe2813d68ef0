/**
 * Forms that talk like people: a number field says the range it takes, whatever was wrong with
 * the value (−5, 0, 1.5, a word); the error summary lists the fields in the page's order.
 */
import assert from "node:assert/strict";
import { testApp } from "./_helpers.ts";

const ORIGIN = "http://test.local";
const post = (fields: Record<string, string>, cookie: string) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
});

Deno.test("forms: a number's range for every wrong value; the summary in page order", async () => {
  await using t = await testApp();
  const { token } = await t.account("nu@example.org", { name: "Nu" });
  const cookie = `session=${token}`;
  const base = {
    kind: "webhook",
    name: "Nightly backup",
    group: "Jobs",
    interval: "1440",
    threshold: "1",
    schedule: "0 3 * * *",
    tz: "Europe/Berlin",
  };
  for (const grace of ["-5", "0", "1.5", "ten", "99999"]) {
    const r = await t.req("POST", "/me/services", post({ ...base, grace }, cookie));
    assert.equal(r.status, 400, grace);
    const beside = r.text.match(/id="f-grace-error"[^>]*>([^<]*)</)?.[1];
    assert.equal(
      beside,
      "Give a whole number of minutes from 1 to 10\u202f080.",
      `grace ${grace}`,
    );
  }
  const seconds = await t.req(
    "POST",
    "/me/services",
    post({ ...base, schedule: "", tz: "", period_seconds: "30" }, cookie),
  );
  assert.match(
    seconds.text,
    /id="f-period_seconds-error"[^>]*>Give a whole number of seconds from 60 to 31\u202f536\u202f000\./,
  );
  // Name empty and a bad time zone: the summary says the name first, as the page does.
  const both = await t.req(
    "POST",
    "/me/services",
    post({ ...base, name: "", tz: "Mars/Olympus" }, cookie),
  );
  assert.equal(both.status, 400);
  const summary = both.text.split('id="errors"')[1].split("</ul>")[0];
  const order = [...summary.matchAll(/<a href="#f-([a-z_]+)">/g)].map((m) => m[1]);
  assert.deepEqual(order, ["name", "tz"]);
});

Deno.test("forms: the add form sent twice adds one service, and the list says so", async () => {
  await using t = await testApp();
  const { token } = await t.account("tw@example.org", { name: "Tw" });
  const cookie = `session=${token}`;
  const form = { kind: "webhook", name: "Backup", group: "Jobs", interval: "1440", threshold: "1" };
  const first = await t.req("POST", "/me/services", post(form, cookie));
  assert.equal(first.status, 303);
  assert.match(first.headers.get("location")!, /^\/me\/services\/\d+\/hook$/);
  const again = await t.req("POST", "/me/services", post(form, cookie));
  assert.equal(again.status, 303);
  assert.equal(again.headers.get("location"), "/me/services?sent=again");
  const list = await t.req("GET", "/me/services?sent=again", { headers: { cookie } });
  assert.match(list.text, /That form was sent before: its service was added once, not twice\./);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  assert.equal(items.length, 1);
  // Another name is another form.
  const other = await t.req("POST", "/me/services", post({ ...form, name: "Export" }, cookie));
  assert.match(other.headers.get("location")!, /\/hook$/);
});
