/**
 * The list of watched services (/me/services) in the dashboard's words: a heartbeat's kind reads
 * "heartbeat", its last signal counts a failure too, and times read as relative words.
 */
import assert from "node:assert/strict";
import { MINUTE } from "../lib/clock.ts";
import { fakeResolver, testApp } from "./_helpers.ts";

/** The cells of the row whose name cell holds `name`, markup stripped. */
function rowCells(html: string, name: string): string[] {
  const row = [...html.matchAll(/<tr>([^]*?)<\/tr>/g)].map((m) => m[1]).find((r) =>
    r.includes(`>${name}<`)
  );
  assert.ok(row, `no row for ${name}`);
  return [...row.matchAll(/<td[^>]*>([^]*?)<\/td>/g)].map((m) =>
    m[1].replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim()
  );
}

Deno.test("services list: a heartbeat's kind, its last signal a failure too, relative times", async () => {
  await using t = await testApp({ resolver: fakeResolver({ "shop.example": ["93.184.216.34"] }) });
  const { token } = await t.account("lia@example.com");
  const cookie = `session=${token}`;
  const hb = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:", interval: 60 },
  });
  assert.equal(hb.status, 200, hb.text);
  const url = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Shop", check: "url:https://shop.example/", interval: 5 },
  });
  assert.equal(url.status, 200, url.text);

  let cells = rowCells(
    (await t.req("GET", "/me/services", { headers: { cookie } })).text,
    "Nightly backup",
  );
  assert.equal(cells[1], "heartbeat");
  assert.equal(cells[4], "never");
  assert.equal(
    rowCells((await t.req("GET", "/me/services", { headers: { cookie } })).text, "Shop")[1],
    "web address",
  );

  // A success sent without a status text reads "OK", as the ping's answer does, not nothing.
  await t.req("GET", new URL(hb.body.hook_url).pathname);
  cells = rowCells(
    (await t.req("GET", "/me/services", { headers: { cookie } })).text,
    "Nightly backup",
  );
  assert.equal(cells[3], "OK");
  const page =
    (await t.req("GET", `/me/services/${hb.body.item.id}`, { headers: { cookie } })).text;
  assert.match(page, /<dt>Last result<\/dt><dd><bdi>OK<\/bdi><\/dd>/);

  // A failure is a signal heard: the column no longer says "never".
  await t.req("GET", `${new URL(hb.body.hook_url).pathname}/fail`);
  t.clock.advance(3 * MINUTE);
  const list = (await t.req("GET", "/me/services", { headers: { cookie } })).text;
  cells = rowCells(list, "Nightly backup");
  assert.equal(cells[4], "3 minutes ago");
  assert.equal(cells[3], "failure signalled");
  assert.match(
    list,
    /<time datetime="[^"]+" title="[^"]+ UTC" data-ago="\d+">3 minutes ago<\/time>/,
  );
});
