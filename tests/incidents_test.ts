/**
 * Incidents with a timeline (issue 47, item 2), in process: opened, four updates to resolved,
 * each mailed to the page's followers with an unfollow link; bad input in plain words; the
 * Atom feed read by a real XML parser (namespaces, ids, dates); migrated incident notes.
 */
import assert from "node:assert/strict";
import { incidentFeed, incidentOfNote, listIncidents, moveNotes } from "../kv/status/incidents.ts";
import { listNotes, postNote } from "../kv/status/notes.ts";
import { DAY } from "../lib/clock.ts";
import { atomic, commit } from "../kv/_atomic.ts";
import { recordChange } from "../kv/service/history.ts";
import { xmlEscape } from "../lib/atom.ts";
import { DOMParser as XmlParser } from "./_dev_deps.ts";

type Element = NonNullable<
  ReturnType<InstanceType<typeof XmlParser>["parseFromString"]>["documentElement"]
>;
import { type TestApp, testApp } from "./_helpers.ts";

const FAN = "fan@incidents.test";
const ATOM = "http://www.w3.org/2005/Atom";

const tokenIn = (text: string, what: "confirm" | "unfollow") => {
  const m = text.match(new RegExp(`/status/[a-z0-9-]+/${what}\\?token=([0-9]+\\.[A-Za-z0-9_-]+)`));
  if (!m) throw new Error(`no ${what} link in: ${text}`);
  return m[1];
};

async function pageWithFollower(t: TestApp) {
  const { account, token } = await t.account("ops@incidents.test", { name: "Ada Ops" });
  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Shop", check: "webhook:", interval: 60 },
  });
  const shop = made.body.item.id as number;
  const put = await t.req("PUT", "/api/me/status-page", {
    token,
    body: { enabled: true, title: "Riverside", services: [{ id: shop }] },
  });
  assert.equal(put.status, 200, put.text);
  const slug = account.slug;
  const asked = await t.req("POST", `/api/status/${slug}/follow`, { body: { email: FAN } });
  assert.equal(asked.status, 202, asked.text);
  const confirm = tokenIn(t.mail.last(FAN)!.text, "confirm");
  const done = await t.req("POST", `/api/status/${slug}/confirm`, { body: { token: confirm } });
  assert.equal(done.status, 200, done.text);
  return { account, token, shop, slug };
}

Deno.test("incidents: opened, four updates to resolved, a mail per update to the followers", async () => {
  await using t = await testApp();
  const { token, shop } = await pageWithFollower(t);
  const before = t.mail.sent.filter((m) => m.to === FAN).length;
  const opened = await t.req("POST", "/api/me/incidents", {
    token,
    body: {
      title: "Checkout fails",
      services: [shop],
      impact: "major",
      text: "Payments fail for some people; we are looking.",
    },
  });
  assert.equal(opened.status, 201, opened.text);
  const id = opened.body.item.id;
  assert.equal(opened.body.item.state, "investigating");
  assert.equal(opened.body.item.resolved, null);
  const steps = [
    ["identified", "The payment provider's certificate expired."],
    ["monitoring", "A new certificate is in place; watching."],
    ["resolved", "Payments work again for everyone."],
  ] as const;
  for (const [state, text] of steps) {
    t.clock.advance(10 * 60_000);
    const r = await t.req("POST", `/api/me/incidents/${id}/updates`, {
      token,
      body: { state, text },
    });
    assert.equal(r.status, 201, r.text);
  }
  const got = await t.req("GET", `/api/me/incidents/${id}`, { token });
  const item = got.body.item;
  assert.deepEqual(item.updates.map((u: { state: string }) => u.state), [
    "investigating",
    "identified",
    "monitoring",
    "resolved",
  ]);
  assert.equal(item.state, "resolved");
  assert.equal(item.duration_s, 30 * 60);
  const mails = t.mail.sent.filter((m) => m.to === FAN).slice(before);
  assert.deepEqual(mails.map((m) => m.subject), [
    "Riverside: Investigating: Checkout fails",
    "Riverside: Identified: Checkout fails",
    "Riverside: Monitoring: Checkout fails",
    "Riverside: Resolved: Checkout fails",
  ]);
  for (const m of mails) assert.ok(tokenIn(m.text, "unfollow"));
  assert.match(mails[1].text, /certificate expired/);
});

Deno.test("incidents: bad input answers 400 in plain words and changes nothing", async () => {
  await using t = await testApp();
  const { token } = await pageWithFollower(t);
  const cases: [unknown, string][] = [
    [{ title: "x", text: "y" }, "title"],
    [{ title: "A title", text: "   " }, "text"],
    [{ title: "A title", text: "y", impact: "apocalyptic" }, "impact"],
    [{ title: "A title", text: "y", state: "panicking" }, "state"],
    [{ title: "A title", text: "y", services: [424242] }, "services"],
  ];
  for (const [body, field] of cases) {
    const r = await t.req("POST", "/api/me/incidents", { token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.field, field, JSON.stringify(r.body));
    assert.doesNotMatch(r.body.error, /Expected|Invalid enum|ZodError/);
  }
  assert.equal(
    (await listIncidents(t.kv, (await t.req("GET", "/api/me", { token })).body.id, t.clock.now()))
      .length,
    0,
  );
  const missing = await t.req("POST", "/api/me/incidents/99999/updates", {
    token,
    body: { state: "resolved", text: "done" },
  });
  assert.equal(missing.status, 404);
  assert.equal((await t.req("POST", "/api/me/incidents", { body: {} })).status, 401);
});

Deno.test("incidents: the Atom feed parses as Atom 1.0 with a real XML parser", async () => {
  await using t = await testApp();
  const { account, token, shop } = await pageWithFollower(t);
  await t.req("POST", "/api/me/incidents", {
    token,
    body: { title: 'Slow <pages> & "quotes"', services: [shop], text: "Looking <now> & then." },
  });
  t.clock.advance(DAY);
  await t.req("POST", "/api/me/incidents", {
    token,
    body: { title: "Night maintenance", state: "resolved", impact: "none", text: "Done." },
  });
  const list = await listIncidents(t.kv, account.id, t.clock.now());
  const xml = incidentFeed(t.deps, list, {
    id: String(account.id),
    title: "Riverside",
    url: "http://test.local/status/ada-ops",
    owner: "Ada Ops",
    names: new Map([[shop, "Shop"]]),
  }, t.clock.now());
  const errors: string[] = [];
  const doc = new XmlParser({
    onError: (level: string, msg: string) => errors.push(`${level}: ${msg}`),
  }).parseFromString(xml, "application/xml");
  assert.deepEqual(errors, []);
  const feed = doc.documentElement!;
  assert.equal(feed.localName, "feed");
  assert.equal(feed.namespaceURI, ATOM);
  const kids = (el: Element, name: string) =>
    Array.from(el.childNodes).filter((n): n is Element =>
      (n as Element).localName === name && (n as Element).namespaceURI === ATOM
    );
  const one = (el: Element, name: string) => {
    const found = kids(el, name);
    assert.equal(found.length, 1, `one <${name}>`);
    return found[0];
  };
  assert.match(one(feed, "id").textContent!, /^tag:test\.local,2026-12-01:incidents:/);
  assert.equal(one(feed, "title").textContent, "Riverside: incidents");
  assert.ok(!Number.isNaN(Date.parse(one(feed, "updated").textContent!)));
  assert.equal(one(one(feed, "author"), "name").textContent, "Ada Ops");
  const links = kids(feed, "link").map((l) => l.getAttribute("rel"));
  assert.deepEqual(links.sort(), ["alternate", "self"]);
  const entries = kids(feed, "entry");
  assert.equal(entries.length, 2);
  const ids = entries.map((e) => one(e, "id").textContent);
  assert.equal(new Set(ids).size, 2);
  for (const e of entries) {
    for (const name of ["title", "updated", "published", "content"]) one(e, name);
    assert.match(one(e, "updated").textContent!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  }
  const slow = entries.find((e) => one(e, "title").textContent!.startsWith("Slow"))!;
  assert.equal(one(slow, "title").textContent, 'Slow <pages> & "quotes" (Investigating)');
  assert.match(one(slow, "content").textContent!, /Affected: Shop/);
  assert.match(one(slow, "content").textContent!, /Looking <now> & then\./);
  assert.equal(xmlEscape("a\u0000b<"), "ab&lt;");
});

Deno.test("incidents: an old note becomes the first update of an incident", () => {
  const now = Date.UTC(2026, 11, 1);
  const old = incidentOfNote(
    {
      id: 7,
      account: 3,
      kind: "identified",
      text: "The router died.\nReplacing it.",
      at: now - 30 * DAY,
    },
    now,
  );
  assert.equal(old.title, "The router died.");
  assert.equal(old.updates[0].state, "identified");
  assert.equal(old.updates[0].text, "The router died.\nReplacing it.");
  assert.equal(old.resolved, now - 30 * DAY, "older than a week: resolved at its time");
  const fresh = incidentOfNote({
    id: 8,
    account: 3,
    kind: "investigating",
    text: "Slow.",
    at: now - 60_000,
  }, now);
  assert.equal(fresh.resolved, null);
  assert.equal(fresh.state, "investigating");
  const plainNote = incidentOfNote({ id: 9, account: 3, kind: "note", text: "FYI", at: now }, now);
  assert.equal(plainNote.updates[0].state, "monitoring");
});

Deno.test("incidents: the migration moves today's notes, once, mailing nobody", async () => {
  await using t = await testApp();
  const { account } = await pageWithFollower(t);
  await postNote(t.deps, account.id, { kind: "investigating", text: "The shop is slow." });
  t.clock.advance(60_000);
  await postNote(t.deps, account.id, { kind: "resolved", text: "Fast again." });
  const mailed = t.mail.sent.length;
  assert.equal(await moveNotes(t.kv, t.clock.now()), 2);
  assert.equal(await moveNotes(t.kv, t.clock.now()), 0, "run again: nothing left to move");
  assert.deepEqual(await listNotes(t.kv, account.id, t.clock.now()), []);
  const list = await listIncidents(t.kv, account.id, t.clock.now());
  assert.deepEqual(list.map((i) => [i.title, i.state, i.updates.length]), [
    ["Fast again.", "resolved", 1],
    ["The shop is slow.", "investigating", 1],
  ]);
  assert.equal(t.mail.sent.length, mailed, "the followers had the notes' mails");
});

Deno.test("incidents: an outage a maintenance window or a dependency explains says so", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("lan@explained.test");
  const cookie = `session=${token}`;
  const add = async (name: string, depends_on: number[] = []) =>
    (await t.req("POST", "/api/me/services", {
      token,
      body: { name, check: "webhook:", interval: 60, depends_on },
    })).body.item.id as number;
  const router = await add("LAN router");
  const nas = await add("NAS", [router]);
  const shop = await add("Shop");
  const now = t.clock.now();
  const win = await t.req("POST", "/api/me/maintenance", {
    token,
    body: {
      name: "Shop move",
      services: [shop],
      groups: [],
      places: [],
      from: new Date(now).toISOString(),
      to: new Date(now + 3_600_000).toISOString(),
    },
  });
  assert.equal(win.status, 201, win.text);
  const op = atomic(t.kv);
  recordChange(op, account.id, router, now - 60_000, { state: "off", status: "missing" });
  recordChange(op, account.id, nas, now - 60_000, { state: "off", status: "missing" });
  recordChange(op, account.id, shop, now - 60_000, { state: "off", status: "missing" });
  await commit(op);
  const open = (services: number[]) =>
    t.req("POST", "/api/me/incidents", {
      token,
      body: { title: "Things are off", services, text: "Looking." },
    });
  const a = (await open([nas])).body.item.id;
  const b = (await open([shop])).body.item.id;
  const c = (await open([router])).body.item.id;
  t.clock.advance(10 * 60_000);
  const page = async (id: number) =>
    (await t.req("GET", `/me/incidents/${id}`, { headers: { cookie } })).text;
  assert.match(
    await page(a),
    /Explained: <bdi>NAS was unreachable because LAN router, which it depends on, was down\.<\/bdi>/,
  );
  assert.match(await page(b), /Shop was in a planned maintenance window/);
  assert.doesNotMatch(await page(c), /Explained:/);
});

Deno.test("incidents: followers hear of those the page shows (its services, or none named)", async () => {
  await using t = await testApp();
  const { token } = await pageWithFollower(t);
  const other = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Intranet", check: "webhook:", interval: 60 },
  });
  const before = t.mail.sent.filter((m) => m.to === FAN).length;
  const open = (title: string, services: number[]) =>
    t.req("POST", "/api/me/incidents", { token, body: { title, services, text: "Looking." } });
  assert.equal((await open("Intranet slow", [other.body.item.id])).status, 201);
  assert.equal((await open("Everything slow", [])).status, 201);
  const got = t.mail.sent.filter((m) => m.to === FAN).slice(before).map((m) => m.subject);
  assert.deepEqual(got, ["Riverside: Investigating: Everything slow"]);
});
