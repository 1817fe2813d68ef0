/**
 * The team's pages in process, driven by web sessions (cookies): a reviewer's session acts for
 * the team through the one caller function (http/guards.ts callerOf; web/_session.ts puts the
 * team flag on the context as the bearer guards do), so the team's forms change what the API
 * would; a collector's session is refused and changes nothing.
 */
import assert from "node:assert/strict";
import { proposal } from "./_forms_fixtures.ts";
import { dumpKv, testApp } from "./_helpers.ts";

const ORIGIN = "http://localhost";
const inboxes = { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" };
const post = (fields: Record<string, string>, cookie: string) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
});

Deno.test("team pages: a reviewer's session moves a proposal on; a collector's is refused", async () => {
  await using t = await testApp({ config: inboxes });
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const made = await t.req("POST", "/api/contributions", {
    token: ada.token,
    body: proposal({ title: "Engines for beginners" }),
  });
  assert.equal(made.status, 201, made.text);
  const id = made.body.id;

  const before = await dumpKv(t.kv);
  const refused = await t.req(
    "POST",
    `/team/proposals/${id}`,
    post({ status: "reviewing", reason: "Looking at it" }, `session=${ada.token}`),
  );
  assert.equal(refused.status, 403);
  assert.equal(await dumpKv(t.kv), before, "nothing stored");

  const moved = await t.req(
    "POST",
    `/team/proposals/${id}`,
    post({ status: "reviewing", reason: "Looking at it" }, `session=${rev.token}`),
  );
  assert.equal(moved.status, 303, moved.text);
  assert.equal(moved.headers.get("location"), `/team/proposals/${id}`);
  const got = await t.req("GET", `/api/contributions/${id}`, { token: rev.token });
  assert.equal(got.body.item.status, "reviewing");
  // The page's sections are headed in words, never a component's name.
  const page = await t.req("GET", `/team/proposals/${id}`, {
    headers: { cookie: `session=${rev.token}` },
  });
  assert.equal(page.status, 200);
  const headings = [...page.text.matchAll(/<h2[^>]*>([^<]*)<\/h2>/g)].map((m) => m[1]);
  assert.ok(headings.includes("History"), headings.join(" | "));
  assert.deepEqual(headings.filter((h) => /[a-z][A-Z]/.test(h)), [], headings.join(" | "));
  // The owner's transition stays the owner's: a reviewer's session is team, not owner.
  const publish = await t.req(
    "POST",
    `/team/proposals/${id}`,
    post({ status: "published", reason: "Ship it" }, `session=${rev.token}`),
  );
  assert.notEqual(publish.status, 303);
  assert.equal(
    (await t.req("GET", `/api/contributions/${id}`, { token: rev.token })).body.item.status,
    "reviewing",
  );
});

Deno.test("team pages: deciding an application grants the role and mails the applicant", async () => {
  await using t = await testApp({ config: inboxes });
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const applied = await t.req("POST", "/api/me/apply", {
    token: ada.token,
    body: { text: "I have taught engines for ten years and would like to add modules." },
  });
  assert.equal(applied.status, 202, applied.text);
  const id = applied.body.application.id;

  const decided = await t.req(
    "POST",
    `/team/applications/${id}`,
    post({ outcome: "approved", reason: "Welcome aboard" }, `session=${rev.token}`),
  );
  assert.equal(decided.status, 303, decided.text);
  const mail = t.mail.last("ada@example.org")!;
  assert.match(mail.subject, /approved/);
  assert.match(mail.text, /Welcome aboard/);
  const me = await t.req("GET", "/api/me", { token: ada.token });
  assert.deepEqual(me.body.roles, ["contributor"]);
  assert.equal(me.body.application.outcome, "approved");

  const mails = t.mail.sent.length;
  const unknown = await t.req(
    "POST",
    `/team/applications/${id + 1000}`,
    post({ outcome: "declined", reason: "Not now" }, `session=${rev.token}`),
  );
  // The list again (web/_form.tsx answers 400) saying why, nothing decided.
  assert.equal(unknown.status, 400);
  assert.match(unknown.text, /<h1>Applications<\/h1>/);
  assert.match(unknown.text, /role="alert"[^]*No such application\./);
  assert.equal(t.mail.sent.length, mails, "no mail for an unknown application");

  // Deciding it a second time (two reviewers at once): the first decision stands, and why.
  const again = await t.req(
    "POST",
    `/team/applications/${id}`,
    post({ outcome: "declined", reason: "Second thoughts" }, `session=${rev.token}`),
  );
  assert.equal(again.status, 400);
  assert.match(
    again.text,
    /role="alert"[^]*<h2>Your decision was not recorded<\/h2>[^]*already approved/,
  );
  // A bad reason on an application with no form here: said in words, no link to another form.
  const both = await t.req(
    "POST",
    `/team/applications/${id + 1000}`,
    post({ outcome: "declined", reason: "" }, `session=${rev.token}`),
  );
  assert.equal(both.status, 400);
  assert.match(both.text, /role="alert"[^]*<li>reason: /);
  assert.doesNotMatch(both.text, /href="#f-reason"/);
  assert.equal(t.mail.sent.length, mails, "no mail for a second decision");
  assert.equal(
    (await t.req("GET", "/api/me", { token: ada.token })).body.application.outcome,
    "approved",
  );
});

Deno.test("team pages: every account's services, a paused heartbeat shown as paused", async () => {
  await using t = await testApp({ config: inboxes });
  const ops = await t.account("ops@example.org", { name: "Ops" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const made = async (name: string) => {
    const r = await t.req("POST", "/api/me/services", {
      token: ops.token,
      body: { name, check: "webhook:", interval: 5 },
    });
    assert.equal(r.status, 200, r.text);
    return r.body.item.id as number;
  };
  const paused = await made("Nightly backup");
  await made("Hourly sync");
  const patch = await t.req("PATCH", `/api/me/services/${paused}`, {
    token: ops.token,
    body: { paused: true },
  });
  assert.equal(patch.status, 200, patch.text);
  const page = await t.req("GET", "/team/services", {
    headers: { cookie: `session=${rev.token}` },
  });
  assert.equal(page.status, 200, page.text);
  const row = (name: string) => page.text.split("<tr>").find((r) => r.includes(name)) ?? "";
  assert.match(row("Nightly backup"), /class="tag state state-paused"><svg[^]*?<\/svg>Paused</);
  assert.match(row("Hourly sync"), /class="tag state state-wait"><svg[^]*?<\/svg>Waiting</);
  assert.match(row("Hourly sync"), /Ops/);
});
