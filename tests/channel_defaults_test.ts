import assert from "node:assert/strict";
import { dumpKv, fakeResolver, type Res, testApp } from "./_helpers.ts";

/**
 * Which services a channel alerts (issue 44): "use for new services" (on for the first channel
 * and, unless unticked, for each one after), "apply to all my services", the services a
 * channel is used by, a new service's default channels (native API and the add form), the
 * Healthchecks API's own meaning of `channels`, imports, and the dashboard's flag of a service
 * nobody hears about. In process: the API, then the pages as a browser posts them.
 */

const RESOLVER = fakeResolver({ "hooks.test": ["93.184.216.34"] });
const ORIGIN = "http://localhost";

const ok = (r: Res, status = 200) => assert.equal(r.status, status, r.text);

async function setUp() {
  const t = await testApp({ resolver: RESOLVER });
  const { token, account } = await t.account("ops@example.org", { name: "Ops" });
  const api = async (method: string, path: string, body?: unknown) =>
    await t.req(method, path, { token, ...(body === undefined ? {} : { body }) });
  const channel = async (name: string, more: Record<string, unknown> = {}) => {
    const r = await api("POST", "/api/me/channels", {
      name,
      url: `https://hooks.test/${name}`,
      ...more,
    });
    ok(r);
    return r.body.item as { id: number; for_new_services: boolean; services: number };
  };
  const service = async (name: string, more: Record<string, unknown> = {}) => {
    const r = await api("POST", "/api/me/services", { name, check: "webhook:", ...more });
    ok(r);
    return r.body.item as { id: number; channels: number[] };
  };
  return { t, token, account, api, channel, service };
}

const used = async (api: (m: string, p: string) => Promise<Res>) =>
  Object.fromEntries(
    (await api("GET", "/api/me/channels")).body.items.map((
      c: { name: string; services: number },
    ) => [c.name, c.services]),
  );

Deno.test("channel defaults: every channel is for new services unless unticked; a new service naming none gets them", async () => {
  const { t, api, channel, service } = await setUp();
  await using _t = t;
  const before = await service("Before any channel");
  assert.deepEqual(before.channels, []);
  const first = await channel("Pager");
  assert.equal(first.for_new_services, true, "the first channel");
  assert.equal(first.services, 0, "not applied to the service there was");
  const second = await channel("Chat");
  assert.equal(second.for_new_services, true, "a later channel, as Healthchecks gives each");
  const quiet = await channel("Scratch", { for_new_services: false });
  assert.equal(quiet.for_new_services, false);

  // Omitted: the defaults; [] none; a list exactly that list.
  assert.deepEqual((await service("Backup")).channels, [first.id, second.id]);
  assert.deepEqual((await service("Mail only", { channels: [] })).channels, []);
  assert.deepEqual((await service("Chosen", { channels: [quiet.id] })).channels, [quiet.id]);
  assert.deepEqual(await used(api), { Pager: 1, Chat: 1, Scratch: 1 });
  // A checked kind takes the defaults too.
  const site = await api("POST", "/api/me/services", {
    name: "Site",
    check: "tcp:hooks.test:443",
  });
  assert.equal(site.status, 200, site.text);

  // Off for new services: the next service leaves it out; existing ones keep it.
  const off = await api("PATCH", `/api/me/channels/${second.id}`, { for_new_services: false });
  ok(off);
  assert.equal(off.body.item.for_new_services, false);
  assert.equal(off.body.item.services, 2);
  assert.deepEqual((await service("After")).channels, [first.id]);
  assert.deepEqual(await used(api), { Pager: 3, Chat: 2, Scratch: 1 });

  // Bad input: a plain 400 naming the field, nothing stored; another's or no channel: 404.
  const other = await t.account("else@example.org", { name: "Else" });
  const kept = await dumpKv(t.kv);
  for (const body of [{ for_new_services: "yes" }, {}, { name: "x" }]) {
    const r = await api("PATCH", `/api/me/channels/${first.id}`, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(typeof r.body.error, "string");
    assert.doesNotMatch(r.body.error, /zod|Expected|invalid_type/i);
  }
  const gone = await api("PATCH", "/api/me/channels/999999", { for_new_services: true });
  assert.equal(gone.status, 404);
  const theirs = await t.req("PATCH", `/api/me/channels/${first.id}`, {
    token: other.token,
    body: { for_new_services: false },
  });
  assert.equal(theirs.status, 404);
  assert.equal(await dumpKv(t.kv), kept);
  // Another account's new service gets none of these.
  const elsewhere = await t.req("POST", "/api/me/services", {
    token: other.token,
    body: { name: "Their job", check: "webhook:" },
  });
  assert.deepEqual(elsewhere.body.item.channels, []);
  // An id of another account's channel is refused as before.
  const foreign = await t.req("POST", "/api/me/services", {
    token: other.token,
    body: { name: "Their job", check: "webhook:", channels: [first.id] },
  });
  assert.equal(foreign.status, 400);
  assert.equal(foreign.body.field, "channels");
});

Deno.test("apply to all my services: each service once, the counts, at creation too; removal counts down", async () => {
  const { t, api, channel, service } = await setUp();
  await using _t = t;
  const a = await service("Job A", { channels: [] });
  const b = await service("Job B", { channels: [] });
  const pager = await channel("Pager");
  // A new channel is applied to no existing service unless asked.
  assert.equal(pager.services, 0);
  const applied = await api("POST", `/api/me/channels/${pager.id}/apply`);
  ok(applied);
  assert.deepEqual(applied.body, { ok: true, services: 2, added: 2 });
  const again = await api("POST", `/api/me/channels/${pager.id}/apply`);
  assert.deepEqual(again.body, { ok: true, services: 2, added: 0 });
  const items = (await api("GET", "/api/me/services")).body.items;
  for (const s of items) assert.deepEqual(s.channels, [pager.id], s.name);
  assert.equal((await api("POST", "/api/me/channels/999999/apply")).status, 404);

  // At creation, with apply_to_all: every service there is, besides its other channels.
  const chat = await channel("Chat", { apply_to_all: true });
  assert.equal(chat.services, 2);
  const both = (await api("GET", "/api/me/services")).body.items;
  for (const s of both) assert.deepEqual(s.channels, [pager.id, chat.id], s.name);
  const listed = (await api("GET", "/api/me/channels")).body.items;
  assert.deepEqual(listed.map((c: { services: number }) => c.services), [2, 2]);

  // A service removed counts down; a channel removed leaves every service.
  ok(await api("DELETE", `/api/me/services/${b.id}`));
  assert.deepEqual(await used(api), { Pager: 1, Chat: 1 });
  ok(await api("DELETE", `/api/me/channels/${chat.id}`));
  const left = (await api("GET", `/api/me/services`)).body.items;
  assert.deepEqual(left.map((s: { id: number; channels: number[] }) => [s.id, s.channels]), [
    [a.id, [pager.id]],
  ]);
});

Deno.test("Healthchecks API keeps its meaning of channels: none unless named, * all; imports get the defaults", async () => {
  const { t, token, api, channel, service } = await setUp();
  await using _t = t;
  const a = await channel("Alpha");
  const b = await channel("Beta");
  const quiet = await channel("Scratch", { for_new_services: false });
  // The native API's default, for the contrast below.
  assert.deepEqual((await service("Native")).channels, [a.id, b.id]);
  const made = await t.req("POST", "/api/me/api-keys", { token, body: { name: "ci" } });
  assert.equal(made.status, 201, made.text);
  const hc = (path: string, body: unknown) =>
    t.req("POST", path, { headers: { "X-Api-Key": made.body.key }, raw: JSON.stringify(body) });
  // "By default, this API call assigns no integrations to the newly created check."
  const bare = await hc("/api/v3/checks/", { name: "bare" });
  ok(bare, 201);
  assert.equal(bare.body.channels, "");
  const all = await hc("/api/v3/checks/", { name: "all", channels: "*" });
  assert.equal(all.body.channels, [a.id, b.id, quiet.id].map(String).sort().join(","));
  const none = await hc("/api/v3/checks/", { name: "none", channels: "" });
  assert.equal(none.body.channels, "");
  const named = await hc("/api/v3/checks/", { name: "named", channels: "Beta" });
  assert.equal(named.body.channels, String(b.id));
  // An update without channels keeps them.
  const updated = await hc(`/api/v3/checks/${all.body.uuid}`, { desc: "nightly" });
  assert.equal(updated.body.channels, all.body.channels);

  // An import brings no integrations of its own: its services alert the channels for new
  // services, as one added by hand does (a check failing at import time is heard of).
  const data = JSON.parse(
    await Deno.readTextFile(new URL("./data/healthchecks_v3_checks.json", import.meta.url)),
  );
  const imported = await api("POST", "/api/me/import", { data });
  ok(imported);
  const items = (await api("GET", "/api/me/services")).body.items as {
    name: string;
    channels: number[];
  }[];
  const fromImport = items.filter((s) =>
    !["Native", "bare", "all", "none", "named"].includes(s.name)
  );
  assert.equal(fromImport.length, imported.body.created.length);
  assert.ok(fromImport.length >= 3);
  for (const s of fromImport) assert.deepEqual(s.channels, [a.id, b.id], s.name);
});

// ---- the pages, as a browser posts them ----

const form = (fields: [string, string][], cookie: string) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: {
    "content-type": "application/x-www-form-urlencoded",
    origin: ORIGIN,
    cookie,
  },
});

/** The checkbox of `label` on a page, and whether it is ticked. */
function box(html: string, label: string): { name: string; ticked: boolean } | null {
  const labelled = new RegExp(`<label for="([^"]+)">${label}</label>`).exec(html);
  if (!labelled) return null;
  const input = new RegExp(`<input[^>]*id="${labelled[1]}"[^>]*>`).exec(html)![0];
  return { name: /name="([^"]+)"/.exec(input)![1], ticked: /\bchecked\b/.test(input) };
}

Deno.test("pages: the add form ticks the default channels; unticked means none; channels page counts and applies; dashboard flags nobody told", async () => {
  const { t, token, api, channel, service } = await setUp();
  await using _t = t;
  const cookie = `session=${token}`;
  const page = (path: string) => t.req("GET", path, { headers: { cookie } });

  // No channel yet: the form says alerts go by mail and where to add one.
  const empty = await page("/me/services/new?kind=webhook");
  assert.match(
    empty.text,
    /Alerts go by mail\. <a href="\/me\/channels">Add an alert channel<\/a>/,
  );

  const pager = await channel("Pager");
  const scratch = await channel("Scratch", { for_new_services: false });
  const add = await page("/me/services/new?kind=webhook");
  ok(add);
  assert.match(add.text, /<legend>Alert channels besides mail<\/legend>/);
  assert.deepEqual(box(add.text, "Pager \\(Webhook\\)"), {
    name: `channel_${pager.id}`,
    ticked: true,
  });
  assert.deepEqual(box(add.text, "Scratch \\(Webhook\\)"), {
    name: `channel_${scratch.id}`,
    ticked: false,
  });

  const base: [string, string][] = [
    ["kind", "webhook"],
    ["interval", "1440"],
    ["threshold", "1"],
    ["group", "Jobs"],
    ["alerts", "on"],
  ];
  /** The add form posted with these boxes ticked (the form lists the channels). */
  const addWith = (name: string, ticked: number[]) =>
    t.req(
      "POST",
      "/me/services",
      form([
        ...base,
        ["name", name],
        ["channels_listed", "1"],
        ...ticked.map((id): [string, string] => [`channel_${id}`, "on"]),
      ], cookie),
    );
  // Sent as shown: the ticked channel. Every box unticked: none. Scratch ticked by hand: that one.
  const sent = await addWith("Nightly backup", [pager.id]);
  assert.equal(sent.status, 303, sent.text);
  assert.equal((await addWith("Mail only", [])).status, 303);
  assert.equal((await addWith("Chosen", [scratch.id])).status, 303);
  // Wrong input: the form again, the boxes as they were sent.
  const wrong = await addWith("x", [scratch.id]);
  assert.equal(wrong.status, 400);
  assert.equal(box(wrong.text, "Pager \\(Webhook\\)")!.ticked, false);
  assert.equal(box(wrong.text, "Scratch \\(Webhook\\)")!.ticked, true);
  const byName = Object.fromEntries(
    (await api("GET", "/api/me/services")).body.items.map((
      s: { name: string; channels: number[] },
    ) => [s.name, s.channels]),
  );
  assert.deepEqual(byName, {
    "Nightly backup": [pager.id],
    "Mail only": [],
    "Chosen": [scratch.id],
  });

  // The channels page: how many services use each, the apply button where some do not.
  const list = await page("/me/channels");
  ok(list);
  const rowOf = (html: string, name: string) =>
    html.split("<tr>").find((r) => r.includes(`<td data-label="Name"><bdi>${name}</bdi>`)) ??
      html.split("<tr>").find((r) => r.includes(`>${name}<`))!;
  assert.match(rowOf(list.text, "Pager"), /<td data-label="Services">1 of 3<\/td>/);
  assert.match(rowOf(list.text, "Pager"), /✓ Ticked for new services/);
  assert.match(rowOf(list.text, "Scratch"), /Not ticked for new services/);
  assert.match(list.text, /aria-label="Apply to all my services: Pager"/);
  const applied = await t.req("POST", `/me/channels/${pager.id}/apply`, form([], cookie));
  assert.equal(applied.status, 303);
  assert.equal(applied.headers.get("location"), "/me/channels?shown=1");
  const after = await page("/me/channels?shown=1");
  assert.match(after.text, /Pager<\/bdi>\s*now alerts 3 services\s*\(added to 2\)\./);
  assert.match(rowOf(after.text, "Pager"), /<td data-label="Services">All of 3<\/td>/);
  assert.doesNotMatch(after.text, /aria-label="Apply to all my services: Pager"/);
  // Unticked on the page: new services leave it out.
  const off = await t.req("POST", `/me/channels/${pager.id}/for-new`, form([], cookie));
  assert.equal(off.status, 303);
  assert.match(rowOf((await page("/me/channels")).text, "Pager"), /Not ticked for new services/);
  assert.deepEqual((await service("Later")).channels, []);
  // A channel nobody uses says so in words.
  const unused = await channel("Spare", { for_new_services: false });
  assert.ok(unused.id);
  assert.match(rowOf((await page("/me/channels")).text, "Spare"), /⚠️ None of 4/);

  // A channel's add form offers both choices, ticked; unticked, neither happens.
  const newForm = await page("/me/channels/new/webhook");
  assert.equal(box(newForm.text, "Use for new services")!.ticked, true);
  assert.equal(box(newForm.text, "Also alert my 4 existing services")!.ticked, true);
  const plain = await t.req(
    "POST",
    "/me/channels/new/webhook",
    form([
      ["name", "Plain"],
      ["url", "https://hooks.test/plain"],
    ], cookie),
  );
  assert.equal(plain.status, 303, plain.text);
  const ticked = await t.req(
    "POST",
    "/me/channels/new/webhook",
    form([
      ["name", "Everywhere"],
      ["url", "https://hooks.test/everywhere"],
      ["for_new_services", "on"],
      ["apply_to_all", "on"],
    ], cookie),
  );
  assert.equal(ticked.status, 303, ticked.text);
  const chans = (await api("GET", "/api/me/channels")).body.items as {
    name: string;
    services: number;
    for_new_services: boolean;
  }[];
  const find = (n: string) => chans.find((c) => c.name === n)!;
  assert.deepEqual([find("Plain").services, find("Plain").for_new_services], [0, false]);
  assert.deepEqual([find("Everywhere").services, find("Everywhere").for_new_services], [4, true]);

  // The dashboard flags a service whose alerts are off, and only that one.
  const muted = await service("Muted job", { alerts: false, channels: [] });
  assert.ok(muted.id);
  const board = await page("/watch");
  ok(board);
  const rows = board.text.split('<tr class="watched ').slice(1);
  const flagged = rows.filter((r) => r.includes("Nobody is told when this goes off"));
  assert.equal(flagged.length, 1);
  assert.match(flagged[0], /Muted job/);
  assert.match(flagged[0], /class="tag state state-warn unheard"[^>]*><svg class="icon"/);
});
