/**
 * Several status pages per account (issue 46, item 3): the single page of before becomes the
 * first by migration (its address, settings and followers kept); other pages at addresses of
 * their own through /api/me/status-pages (made, changed, deleted; a taken or bad slug refused
 * naming `slug`), each with its services in groups in the owner's order and followers of its
 * own; the settings form keeps every value after an error and says what was saved; the report
 * page offers every page.
 */
import assert from "node:assert/strict";
import { movePagesToFirst } from "../kv/status/settings.ts";
import { type TestApp, testApp } from "./_helpers.ts";

const ORIGIN = "http://test.local";

const tokenIn = (text: string, what: "confirm" | "unfollow") => {
  const m = text.match(
    new RegExp(`/status/([a-z0-9-]+)/${what}\\?token=([0-9]+\\.[A-Za-z0-9_-]+)`),
  );
  if (!m) throw new Error(`no ${what} link in: ${text}`);
  return { slug: m[1], token: m[2] };
};

async function follow(t: TestApp, slug: string, email: string) {
  const asked = await t.req("POST", `/api/status/${slug}/follow`, { body: { email } });
  assert.equal(asked.status, 202, asked.text);
  const link = tokenIn(t.mail.last(email)!.text, "confirm");
  assert.equal(link.slug, slug, "the link names the page followed");
  const done = await t.req("POST", `/api/status/${slug}/confirm`, { body: { token: link.token } });
  assert.equal(done.status, 200, done.text);
  assert.equal(done.body.path, `/status/${slug}`);
}

async function owner(t: TestApp) {
  const { account, token } = await t.account("ops@pages.test", { name: "Riverside IT" });
  const ids: Record<string, number> = {};
  for (const [name, group] of [["Web", "Public"], ["Mail", "Public"], ["Printer", "Jobs"]]) {
    const r = await t.req("POST", "/api/me/services", {
      token,
      body: { name, check: "webhook:", interval: 60, group },
    });
    assert.equal(r.status, 200, r.text);
    ids[name] = r.body.item.id;
  }
  return { account, token, ids };
}

Deno.test("status pages: the page of before becomes the first, address and followers kept", async () => {
  await using t = await testApp();
  const { account, token, ids } = await owner(t);
  // As stored before several pages: one record under the account, a follower of it.
  await t.kv.set(["status_pages", account.id], {
    enabled: true,
    title: "Riverside",
    services: [{ id: ids.Web, note: "Moved on Sunday" }],
  });
  await t.kv.delete(["status_pages", account.id, 1]);
  assert.equal(await movePagesToFirst(t.kv), 1);
  assert.equal(await movePagesToFirst(t.kv), 0, "once");
  assert.equal((await t.kv.get(["status_pages", account.id])).value, null);
  const first = await t.req("GET", "/api/me/status-page", { token });
  assert.equal(first.body.title, "Riverside");
  assert.deepEqual(first.body.services, [{ id: ids.Web, note: "Moved on Sunday", group: "" }]);
  assert.equal(first.body.path, `/status/${account.slug}`);
  const listed = await t.req("GET", "/api/me/status-pages", { token });
  assert.deepEqual(listed.body.items.map((p: { id: number; slug: string }) => [p.id, p.slug]), [
    [1, account.slug],
  ]);
  const pub = await t.req("GET", `/api/status/${account.slug}`);
  assert.equal(pub.status, 200);
  assert.equal(pub.body.services[0].note, "Moved on Sunday");
  await follow(t, account.slug, "fan@pages.test");
  assert.equal((await t.req("GET", "/api/me/status-page", { token })).body.followers, 1);
});

Deno.test("status pages: several, each at its own address with groups in the owner's order", async () => {
  await using t = await testApp();
  const { account, token, ids } = await owner(t);
  const first = await t.req("PUT", "/api/me/status-page", {
    token,
    body: { enabled: true, title: "Everything", services: [{ id: ids.Web }, { id: ids.Mail }] },
  });
  assert.equal(first.status, 200, first.text);
  const make = (body: unknown) => t.req("POST", "/api/me/status-pages", { token, body });
  const office = await make({
    slug: "riverside-office",
    enabled: true,
    title: "Office",
    services: [
      { id: ids.Printer, group: "Floor 2" },
      { id: ids.Mail },
      { id: ids.Web, group: "Floor 2", note: "Slow in the mornings" },
    ],
  });
  assert.equal(office.status, 201, office.text);
  const item = office.body.item;
  assert.equal(item.id, 2);
  assert.equal(item.path, "/status/riverside-office");
  assert.equal(item.followers, 0);

  // Refusals, each naming `slug` in a plain sentence.
  const other = await t.account("else@pages.test", { name: "Elsewhere" });
  for (
    const [slug, words] of [
      ["riverside-office", /\/status\/riverside-office is taken/],
      [other.account.slug, /is taken/],
      ["Not A Slug!", /lower-case letters, digits and hyphens/],
      ["-edge", /lower-case letters/],
    ]
  ) {
    const r = await make({ slug, enabled: true });
    assert.equal(r.status, 400, `${slug}: ${r.text}`);
    assert.equal(r.body.field, "slug");
    assert.match(r.body.error, words as RegExp);
  }
  const foreign = await t.req("POST", "/api/me/services", {
    token: other.token,
    body: { name: "Theirs", check: "webhook:" },
  });
  const theirs = await make({
    slug: "x-page",
    enabled: true,
    services: [{ id: foreign.body.item.id }],
  });
  assert.equal(theirs.status, 400);
  assert.equal(theirs.body.field, "services");

  // The public page: its services under its headings, in the order given.
  const pub = await t.req("GET", "/api/status/riverside-office");
  assert.equal(pub.status, 200, pub.text);
  assert.equal(pub.body.title, "Office");
  assert.deepEqual(
    pub.body.services.map((s: { name: string; group: string }) => [s.name, s.group]),
    [
      ["Printer", "Floor 2"],
      ["Mail", "Public"],
      ["Web", "Floor 2"],
    ],
  );
  const html = (await t.req("GET", "/status/riverside-office")).text;
  const at = (s: string) => html.indexOf(s);
  assert.ok(at("<h2><bdi>Floor 2</bdi></h2>") < at("<h2><bdi>Public</bdi></h2>"), html);
  assert.ok(at("<h3><bdi>Printer</bdi></h3>") < at("<h3><bdi>Web</bdi></h3>"));
  assert.ok(at("<h3><bdi>Web</bdi></h3>") < at("<h2><bdi>Public</bdi></h2>"), "Web under Floor 2");
  assert.match(html, /Slow in the mornings/);
  // The first page unchanged at the account's address.
  const mine = await t.req("GET", `/api/status/${account.slug}`);
  assert.deepEqual(mine.body.services.map((s: { name: string }) => s.name), ["Web", "Mail"]);

  // Followers of one page: an incident about the printer reaches the office page's only.
  await follow(t, "riverside-office", "office@pages.test");
  await follow(t, account.slug, "all@pages.test");
  const pages = await t.req("GET", "/api/me/status-pages", { token });
  assert.deepEqual(pages.body.items.map((p: { followers: number }) => p.followers), [1, 1]);
  const opened = await t.req("POST", "/api/me/incidents", {
    token,
    body: { title: "Printer jam", services: [ids.Printer], text: "Paper everywhere." },
  });
  assert.equal(opened.status, 201, opened.text);
  const got = (to: string) =>
    t.mail.sent.filter((m) => m.to === to && /Printer jam/.test(m.subject));
  assert.equal(got("office@pages.test").length, 1);
  assert.equal(got("all@pages.test").length, 0, "the first page does not list the printer");
  assert.match(got("office@pages.test")[0].subject, /^Office: /);
  const out = tokenIn(got("office@pages.test")[0].text, "unfollow");
  assert.equal(out.slug, "riverside-office");

  // A new address: the old one is gone, the follower's link follows the page.
  const moved = await t.req("PUT", "/api/me/status-pages/2", {
    token,
    body: { ...item, slug: "office", services: [{ id: ids.Printer }] },
  });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.body.item.path, "/status/office");
  assert.equal((await t.req("GET", "/api/status/riverside-office")).status, 404);
  assert.equal((await t.req("GET", "/api/status/office")).status, 200);
  const left = await t.req("POST", "/api/status/office/unfollow", { body: { token: out.token } });
  assert.equal(left.status, 200, left.text);
  assert.equal(left.body.path, "/status/office");
  assert.equal((await t.req("GET", "/api/me/status-pages/2", { token })).body.item.followers, 0);
  assert.equal((await t.req("GET", "/api/me/status-page", { token })).body.followers, 1);

  // Deleted: its address answers 404, its followers are gone; the first page stays.
  await follow(t, "office", "office2@pages.test");
  const del = await t.req("DELETE", "/api/me/status-pages/2", { token });
  assert.equal(del.status, 200, del.text);
  assert.equal((await t.req("GET", "/api/status/office")).status, 404);
  assert.equal((await t.req("GET", "/status/office")).status, 404);
  assert.equal((await t.req("DELETE", "/api/me/status-pages/2", { token })).status, 404);
  for await (const f of t.kv.list<{ email: string }>({ prefix: ["followers", account.id] })) {
    assert.notEqual(f.value.email, "office2@pages.test");
  }
  assert.equal((await t.req("GET", `/api/status/${account.slug}`)).status, 200);
  assert.equal((await t.req("GET", "/api/me/status-pages/2", { token })).status, 404);
});

const form = (fields: Record<string, string>, cookie: string) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
});

Deno.test("status pages: the form keeps every value after an error and says what was saved", async () => {
  await using t = await testApp();
  const { token, ids } = await owner(t);
  const cookie = `session=${token}`;
  const made = await t.req("POST", "/me/status-pages", form({ slug: "lab", title: "" }, cookie));
  assert.equal(made.status, 303, made.text);
  const where = made.headers.get("location")!;
  assert.match(where, /^\/me\/status-pages\/2\?saved=1$/);
  const fresh = await t.req("GET", where, { headers: { cookie } });
  assert.match(fresh.text, /Saved\. Not published: \/status\/lab answers &quot;not found&quot;/);
  // The same form again (Back and submit) makes nothing and says so; another at its address is
  // refused beside the field.
  const again = await t.req("POST", "/me/status-pages", form({ slug: "lab", title: "" }, cookie));
  assert.equal(again.status, 303);
  assert.equal(again.headers.get("location"), "/me/status-pages?sent=again");
  const listed = await t.req("GET", "/me/status-pages?sent=again", { headers: { cookie } });
  assert.match(listed.text, /That form was sent before: its page was made once, not twice\./);
  const pages = (await t.req("GET", "/api/me/status-pages", { token })).body.items;
  assert.deepEqual(pages.map((p: { slug: string }) => p.slug), ["lab"]);
  const taken = await t.req(
    "POST",
    "/me/status-pages",
    form({ slug: "lab", title: "Lab" }, cookie),
  );
  assert.equal(taken.status, 400);
  assert.match(taken.text, /id="f-slug-error"[^>]*>\/status\/lab is taken/);

  const typed = {
    enabled: "on",
    slug: "lab",
    title: "The lab",
    link: "ftp://not-a-site",
    [`show-${ids.Printer}`]: "on",
    [`note-${ids.Printer}`]: "Toner low",
    [`group-${ids.Printer}`]: "Basement",
    [`place-${ids.Printer}`]: "2",
    [`show-${ids.Web}`]: "on",
    [`place-${ids.Web}`]: "x",
  };
  const bad = await t.req("POST", "/me/status-pages/2", form(typed, cookie));
  assert.equal(bad.status, 400);
  const html = bad.text;
  assert.match(html, /<input[^>]*id="f-enabled"[^>]*checked/);
  assert.match(html, /<input[^>]*id="f-title"[^>]*value="The lab"/);
  assert.match(html, /<input[^>]*id="f-link"[^>]*value="ftp:\/\/not-a-site"/);
  assert.match(html, new RegExp(`<input type="checkbox" id="s-${ids.Printer}"[^>]*checked`));
  assert.match(html, new RegExp(`<input type="checkbox" id="s-${ids.Web}"[^>]*checked`));
  assert.doesNotMatch(html, new RegExp(`<input type="checkbox" id="s-${ids.Mail}"[^>]*checked`));
  assert.match(html, /value="Toner low"/);
  assert.match(html, /value="Basement"/);
  // Each message beside its field; the summary in the page's order.
  assert.match(html, /id="f-link-error"[^>]*>[^<]*https:\/\//);
  assert.match(
    html,
    new RegExp(`id="f-place-${ids.Web}-error"[^>]*>[^<]*whole number from 1 to 30`),
  );
  const from = html.indexOf('class="errors"');
  const summary = html.slice(from, html.indexOf("</ul>", from));
  assert.ok(summary.indexOf("#f-link") < summary.indexOf(`#f-place-${ids.Web}`), summary);
  assert.match(summary, /Place of Web<\/a>: The place is a whole number/);
  // Nothing stored.
  const still = await t.req("GET", "/api/me/status-pages/2", { token });
  assert.equal(still.body.item.enabled, false);
  assert.deepEqual(still.body.item.services, []);

  const good = await t.req(
    "POST",
    "/me/status-pages/2",
    form({ ...typed, link: "https://lab.example.org", [`place-${ids.Web}`]: "1" }, cookie),
  );
  assert.equal(good.status, 303, good.text.slice(0, 500));
  const saved = await t.req("GET", good.headers.get("location")!, { headers: { cookie } });
  assert.match(
    saved.text,
    /Saved\. Published at \/status\/lab with 2 services: Web, Printer; title &quot;The lab&quot;\./,
  );
  const api = (await t.req("GET", "/api/me/status-pages/2", { token })).body.item;
  assert.deepEqual(api.services, [
    { id: ids.Web, note: "", group: "" },
    { id: ids.Printer, note: "Toner low", group: "Basement" },
  ]);
  assert.equal(api.link, "https://lab.example.org");

  // The list of pages, and the report page offering each one.
  const list = await t.req("GET", "/me/status-pages", { headers: { cookie } });
  assert.match(list.text, /href="\/status\/lab">\/status\/lab</);
  const reports = await t.req("GET", "/me/reports", { headers: { cookie } });
  assert.match(reports.text, /<option value="p-lab"[^>]*>Status page The lab \(\/status\/lab\)/);
  const lab = await t.req("GET", "/me/reports?what=p-lab", { headers: { cookie } });
  assert.equal(lab.status, 200);
  const report = lab.text.slice(lab.text.indexOf('<article class="report"'));
  assert.match(report, /<bdi>The lab<\/bdi>: March 2026/);
  assert.match(report, /<bdi>Printer<\/bdi>/);
  assert.doesNotMatch(report, /<bdi>Mail<\/bdi>/);
});
