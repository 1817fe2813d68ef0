import assert from "node:assert/strict";
import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import { deliverDue } from "../kv/alerts/outbox.ts";
import { systemConnector } from "../lib/net.ts";
import { dumpKv, expectLog, type TestApp, testApp } from "./_helpers.ts";
import { localHttp } from "./_servers.ts";

/**
 * Incident notes and followers of a status page, through the JSON API with the fake clock:
 * notes newest first for 90 days; follow, confirm (a GET confirms nothing), the mails of an
 * alert and a note, unfollow; rate limits; pending follows dropped; erasure.
 */

const FAN = "fan@example.net";

/** An owner with a published page listing one checked service (failing on demand). */
async function ownerWithPage(t: TestApp, port: number) {
  const { account, token } = await t.account("ops@example.org", {
    name: "Ada Ops",
    roles: ["owner"],
  });
  const site = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Public site", check: `url:http://127.0.0.1:${port}/health` },
  });
  assert.equal(site.status, 200, site.text);
  const put = await t.req("PUT", "/api/me/status-page", {
    token,
    body: { enabled: true, title: "Riverside", services: [{ id: site.body.item.id }] },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.followers, 0);
  return { account, token, site: site.body.item.id as number, slug: account.slug };
}

const tokenIn = (text: string, what: "confirm" | "unfollow") => {
  const m = text.match(new RegExp(`/status/[a-z0-9-]+/${what}\\?token=([0-9]+\\.[A-Za-z0-9_-]+)`));
  if (!m) throw new Error(`no ${what} link in: ${text}`);
  return m[1];
};

Deno.test("status notes: posted, newest first on the page, 90 days, deleted; bad input 400", async () => {
  await using t = await testApp();
  const { token, slug } = await ownerWithPage(t, 9);
  const bad = await t.req("POST", "/api/me/status-page/notes", {
    token,
    body: { kind: "panicking", text: "x" },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "kind");
  const empty = await t.req("POST", "/api/me/status-page/notes", {
    token,
    body: { kind: "note", text: "   " },
  });
  assert.equal(empty.status, 400);
  assert.equal(empty.body.field, "text");
  assert.equal((await t.req("POST", "/api/me/status-page/notes", { body: {} })).status, 401);

  const first = await t.req("POST", "/api/me/status-page/notes", {
    token,
    body: { kind: "investigating", text: "The LAN switch is down." },
  });
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.item.kind, "investigating");
  t.clock.advance(30 * MINUTE);
  const second = await t.req("POST", "/api/me/status-page/notes", {
    token,
    body: { kind: "resolved", text: "Replaced the switch." },
  });
  const page = await t.req("GET", `/api/status/${slug}`);
  assert.deepEqual(page.body.notes.map((n: { kind: string }) => n.kind), [
    "resolved",
    "investigating",
  ]);
  assert.equal(page.body.notes[1].at, first.body.item.at);
  const mine = await t.req("GET", "/api/me/status-page/notes", { token });
  assert.equal(mine.body.items.length, 2);

  // Deleted: gone from the page; another's id is 404.
  const del = await t.req("DELETE", `/api/me/status-page/notes/${second.body.item.id}`, { token });
  assert.equal(del.status, 200);
  const other = await t.account("x@example.org", { name: "Xavier" });
  assert.equal(
    (await t.req("DELETE", `/api/me/status-page/notes/${first.body.item.id}`, {
      token: other.token,
    })).status,
    404,
  );
  assert.equal((await t.req("GET", `/api/status/${slug}`)).body.notes.length, 1);

  // Kept 90 days.
  t.clock.advance(89 * DAY);
  assert.equal((await t.req("GET", `/api/status/${slug}`)).body.notes.length, 1);
  t.clock.advance(DAY);
  assert.equal((await t.req("GET", `/api/status/${slug}`)).body.notes.length, 0);
});

Deno.test("follow: confirm by POST only, alert and note mailed, unfollow deletes the address", async () => {
  let failing = false;
  const srv = localHttp(() => failing ? new Response("no", { status: 503 }) : new Response("ok"));
  try {
    await using t = await testApp({ connector: systemConnector });
    const { token, site, slug } = await ownerWithPage(t, srv.port);
    await t.req("POST", `/api/me/services/${site}/check`, { token });

    const unknown = await t.req("POST", "/api/status/nobody/follow", { body: { email: FAN } });
    assert.equal(unknown.status, 404);
    const badMail = await t.req("POST", `/api/status/${slug}/follow`, { body: { email: "x" } });
    assert.equal(badMail.status, 400);
    assert.equal(badMail.body.field, "email");

    const asked = await t.req("POST", `/api/status/${slug}/follow`, { body: { email: FAN } });
    assert.equal(asked.status, 202, asked.text);
    const confirmMail = t.mail.last(FAN)!;
    assert.match(confirmMail.subject, /Confirm following the status page "Riverside"/);
    const confirm = tokenIn(confirmMail.text, "confirm");

    // Opening the link (a scanner, a preview) shows a button and confirms nothing.
    const opened = await t.req("GET", `/status/${slug}/confirm?token=${confirm}`);
    assert.equal(opened.status, 200);
    assert.match(opened.text, /<form method="post"/);
    assert.match(opened.text, /Confirm following/);
    assert.equal((await t.req("GET", "/api/me/status-page", { token })).body.followers, 0);
    assert.equal((await t.req("HEAD", `/status/${slug}/confirm?token=${confirm}`)).status, 200);

    // Not followed yet: an alert reaches no one but the owner.
    failing = true;
    const sent = t.mail.sent.length;
    await t.req("POST", `/api/me/services/${site}/check`, { token });
    assert.deepEqual(t.mail.sent.slice(sent).map((m) => m.to), ["ops@example.org"]);
    failing = false;
    await t.req("POST", `/api/me/services/${site}/check`, { token });

    const done = await t.req("POST", `/api/status/${slug}/confirm`, { body: { token: confirm } });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.path, `/status/${slug}`);
    const again = await t.req("POST", `/api/status/${slug}/confirm`, { body: { token: confirm } });
    assert.equal(again.status, 410, "the link works once");
    const settings = await t.req("GET", "/api/me/status-page", { token });
    assert.equal(settings.body.followers, 1);
    assert.ok(!settings.text.includes(FAN), "the owner never sees who");

    // Asking again while following: the same answer, no mail.
    const before = t.mail.sent.length;
    assert.equal(
      (await t.req("POST", `/api/status/${slug}/follow`, { body: { email: FAN } })).status,
      202,
    );
    assert.equal(t.mail.sent.length, before);

    // The service goes off and comes back: one mail each, with an unfollow link.
    failing = true;
    await t.req("POST", `/api/me/services/${site}/check`, { token });
    const off = t.mail.last(FAN)!;
    assert.equal(off.subject, 'Riverside: "Public site" is off');
    assert.ok(!off.text.includes("127.0.0.1"), "no target in a follower's mail");
    tokenIn(off.text, "unfollow");
    failing = false;
    await t.req("POST", `/api/me/services/${site}/check`, { token });
    assert.equal(t.mail.last(FAN)!.subject, 'Riverside: "Public site" is back');

    // A note reaches the follower.
    await t.req("POST", "/api/me/status-page/notes", {
      token,
      body: { kind: "identified", text: "A power cut in building B." },
    });
    const note = t.mail.last(FAN)!;
    assert.equal(note.subject, "Riverside: Identified");
    assert.match(note.text, /A power cut in building B\./);
    const out = tokenIn(note.text, "unfollow");
    assert.equal(t.mail.sent.filter((m) => m.to === FAN).length, 4, "confirm, off, back, note");

    // The unfollow page shows one button; the POST deletes the address.
    const outPage = await t.req("GET", `/status/${slug}/unfollow?token=${out}`);
    assert.equal(outPage.status, 200);
    assert.match(outPage.text, /Stop following/);
    assert.equal((await t.req("GET", "/api/me/status-page", { token })).body.followers, 1);
    const gone = await t.req("POST", `/api/status/${slug}/unfollow`, { body: { token: out } });
    assert.equal(gone.status, 200, gone.text);
    assert.equal((await t.req("GET", "/api/me/status-page", { token })).body.followers, 0);
    assert.ok(!(await dumpKv(t.kv)).includes(FAN.split("@")[0]), "the address is gone");
    // An older mail's link: not following any more, as asked.
    assert.equal(
      (await t.req("POST", `/api/status/${slug}/unfollow`, {
        body: { token: tokenIn(off.text, "unfollow") },
      })).status,
      200,
    );
    const wrong = await t.req("POST", `/api/status/${slug}/unfollow`, {
      body: { token: "x".repeat(43) },
    });
    assert.equal(wrong.status, 410);
    await t.req("POST", "/api/me/status-page/notes", {
      token,
      body: { kind: "note", text: "Nobody follows now." },
    });
    assert.equal(t.mail.sent.filter((m) => m.to === FAN).length, 4, "no mail after unfollow");
  } finally {
    await srv.close();
  }
});

Deno.test("follow: an unfollow drops the page's mail still queued to the address (relay down)", () =>
  expectLog([/"msg":"mail delivery failed".*"reason":"relay down"/], async () => {
    await using t = await testApp();
    const { token, slug } = await ownerWithPage(t, 9);
    await t.req("POST", `/api/status/${slug}/follow`, { body: { email: FAN } });
    const ok = await t.req("POST", `/api/status/${slug}/confirm`, {
      body: { token: tokenIn(t.mail.last(FAN)!.text, "confirm") },
    });
    assert.equal(ok.status, 200, ok.text);
    const note = (text: string) =>
      t.req("POST", "/api/me/status-page/notes", { token, body: { kind: "note", text } });
    await note("Maintenance tonight.");
    const out = tokenIn(t.mail.last(FAN)!.text, "unfollow");
    // The relay is down: the next note's mail to the follower waits in the outbox.
    t.mail.failWith = new Error("relay down");
    assert.equal((await note("Still working on it.")).status, 201);
    assert.ok((await dumpKv(t.kv)).includes(FAN), "queued to the follower");

    const gone = await t.req("POST", `/api/status/${slug}/unfollow`, { body: { token: out } });
    assert.equal(gone.status, 200, gone.text);
    assert.ok(!(await dumpKv(t.kv)).includes(FAN.split("@")[0]), "no trace of the address");
    // The relay is back and the retry runs: nothing goes to the former follower.
    t.mail.failWith = null;
    const sent = t.mail.sent.length;
    t.clock.advance(DAY);
    await deliverDue(t.deps);
    assert.deepEqual(t.mail.sent.slice(sent).filter((m) => m.to === FAN), []);
  }));

Deno.test("follow: rate limits per address and per client; pending follows end after 7 days", async () => {
  await using t = await testApp();
  const { token, slug } = await ownerWithPage(t, 9);
  const ask = (email: string, from: string) =>
    t.req("POST", `/api/status/${slug}/follow`, { body: { email }, from });
  for (let i = 0; i < 3; i++) assert.equal((await ask(FAN, `203.0.113.${i}`)).status, 202);
  const tooMany = await ask(FAN, "203.0.113.9");
  assert.equal(tooMany.status, 429);
  assert.ok(Number(tooMany.headers.get("retry-after")) > 0);
  for (let i = 0; i < 5; i++) {
    assert.equal((await ask(`p${i}@example.net`, "198.51.100.7")).status, 202);
  }
  assert.equal((await ask("p9@example.net", "198.51.100.7")).status, 429, "per client address");
  // Only the last confirmation link of an address works.
  const tokens = t.mail.sent.filter((m) => m.to === FAN).map((m) => tokenIn(m.text, "confirm"));
  assert.equal(tokens.length, 3);
  const old = await t.req("POST", `/api/status/${slug}/confirm`, { body: { token: tokens[0] } });
  assert.equal(old.status, 410);

  // Seven days later the pending follow is gone: its link no longer works.
  t.clock.advance(7 * DAY + HOUR);
  const late = await t.req("POST", `/api/status/${slug}/confirm`, { body: { token: tokens[2] } });
  assert.equal(late.status, 410);
  assert.equal((await t.req("GET", "/api/me/status-page", { token })).body.followers, 0);
  // The address can follow again.
  assert.equal((await ask(FAN, "203.0.113.50")).status, 202);
  const fresh = tokenIn(t.mail.last(FAN)!.text, "confirm");
  assert.equal(
    (await t.req("POST", `/api/status/${slug}/confirm`, { body: { token: fresh } })).status,
    200,
  );
});

Deno.test("follow: erasure of the owner removes followers, notes and their count; export holds them", async () => {
  await using t = await testApp();
  const fresh = await t.signIn("owner@example.org", { name: "Olga Owner" });
  const token = fresh.token;
  const me = await t.req("GET", "/api/me", { token });
  const slug = me.body.slug ?? me.body.account?.slug;
  await t.req("PUT", "/api/me/status-page", { token, body: { enabled: true } });
  await t.req("POST", `/api/status/${slug}/follow`, { body: { email: FAN } });
  const ok = await t.req("POST", `/api/status/${slug}/confirm`, {
    body: { token: tokenIn(t.mail.last(FAN)!.text, "confirm") },
  });
  assert.equal(ok.status, 200, ok.text);
  await t.req("POST", `/api/status/${slug}/follow`, { body: { email: "pending@example.net" } });
  await t.req("POST", "/api/me/status-page/notes", {
    token,
    body: { kind: "investigating", text: "Flibbertigibbet outage" },
  });
  const exp = await t.req("GET", "/api/me/export", { token });
  assert.equal(exp.status, 200, exp.text);
  assert.equal(exp.body.status_followers.count, 1);
  assert.equal(exp.body.status_notes[0].text, "Flibbertigibbet outage");
  assert.ok(!exp.text.includes(FAN), "followers' addresses are theirs");

  const r = await t.req("DELETE", "/api/me", { token });
  assert.equal(r.status, 200, r.text);
  const dump = await dumpKv(t.kv);
  for (
    const s of [FAN, "pending@example.net", "Flibbertigibbet", '["followers"', '["follower_count"']
  ) {
    assert.ok(!dump.includes(s), `KV still holds ${s}`);
  }
});

const ORIGIN = "http://localhost";
const form = (fields: Record<string, string>, cookie = "") => ({
  raw: new URLSearchParams(fields).toString(),
  headers: {
    "content-type": "application/x-www-form-urlencoded",
    origin: ORIGIN,
    ...(cookie ? { cookie } : {}),
  },
});

Deno.test("pages: notes posted on /me/status-page, the timeline and the follow flow on /status/<slug>", async () => {
  await using t = await testApp();
  const { token, slug } = await ownerWithPage(t, 9);
  const cookie = `session=${token}`;

  // A note through the form: a bad one shows the form again with the message by its field.
  const empty = await t.req(
    "POST",
    "/me/status-page/notes",
    form({ kind: "note", text: "" }, cookie),
  );
  assert.equal(empty.status, 400);
  assert.match(empty.text, /aria-invalid="true"/);
  assert.match(empty.text, /id="f-text-error"/);
  const posted = await t.req(
    "POST",
    "/me/status-page/notes",
    form({ kind: "investigating", text: "Router <b>restarting</b>" }, cookie),
  );
  assert.equal(posted.status, 303);
  assert.equal(posted.headers.get("location"), "/me/status-page?posted=1#notes");
  const settings = await t.req("GET", "/me/status-page?posted=1", { headers: { cookie } });
  assert.match(settings.text, /Note posted\./);
  assert.match(settings.text, /0 people follow/);
  const noteId = settings.text.match(/\/me\/status-page\/notes\/(\d+)\/delete/)![1];

  const pub = await t.req("GET", `/status/${slug}`);
  assert.equal(pub.status, 200);
  // In visitors' words: an announcement still open on top, said once.
  assert.match(pub.text, /<h2 id="open-h">Announcements<\/h2>/);
  // Not an outage: the box is an announcement's, numbered newest highest as incident updates are.
  assert.match(pub.text, /<section aria-labelledby="open-h" class="open-note"><h2/);
  assert.match(pub.text, /<ol class="timeline" reversed>/);
  assert.doesNotMatch(pub.text, /Notes<\/h2>|Latest notes|Earlier announcements/);
  assert.match(pub.text, /<strong>Investigating<\/strong>/);
  assert.match(pub.text, /Router &lt;b&gt;restarting&lt;\/b&gt;/);

  // Following through the page: a bad address beside its field, then 303 and the notice.
  const bad = await t.req("POST", `/status/${slug}/follow`, form({ email: "nope" }));
  assert.equal(bad.status, 400);
  assert.match(bad.text, /id="f-email-error"/);
  // Over the limit of one address (3 an hour): the form again, the wait in plain words
  // beside the field, 429 and Retry-After kept.
  const other = "other@example.net";
  for (let i = 0; i < 3; i++) {
    const ok = await t.req("POST", `/status/${slug}/follow`, {
      ...form({ email: other }),
      from: `203.0.113.${i}`,
    });
    assert.equal(ok.status, 303);
  }
  const limited = await t.req("POST", `/status/${slug}/follow`, {
    ...form({ email: other }),
    from: "203.0.113.9",
  });
  assert.equal(limited.status, 429);
  // 3 an hour, judged over the hour that ends now: the first comes back 20 minutes past the
  // clock hour's end.
  assert.equal(limited.headers.get("retry-after"), "4800");
  assert.match(limited.text, /<h2 id="follow">Follow by mail<\/h2>/);
  assert.match(
    limited.text,
    /id="f-email-error"[^>]*>[^<]*Too many requests for now; try again in 2 hours\./,
  );
  assert.match(limited.text, /value="other@example.net"/);
  assert.doesNotMatch(limited.text, /seconds/);
  const asked = await t.req("POST", `/status/${slug}/follow`, form({ email: FAN }));
  assert.equal(asked.status, 303);
  assert.equal(asked.headers.get("location"), `/status/${slug}?follow=sent`);
  assert.match((await t.req("GET", `/status/${slug}?follow=sent`)).text, /confirmation link/);
  const confirm = tokenIn(t.mail.last(FAN)!.text, "confirm");
  const done = await t.req("POST", `/status/${slug}/confirm`, form({ token: confirm }));
  assert.equal(done.status, 303);
  assert.equal(done.headers.get("location"), `/status/${slug}?follow=followed`);
  const used = await t.req("GET", `/status/${slug}/confirm?token=${confirm}`);
  assert.equal(used.status, 410);
  assert.match(
    (await t.req("GET", "/me/status-page", { headers: { cookie } })).text,
    /1 person follows/,
  );

  // The note deleted through its button; a second note reaches the follower, who unfollows.
  const del = await t.req("POST", `/me/status-page/notes/${noteId}/delete`, form({}, cookie));
  assert.equal(del.status, 303);
  assert.doesNotMatch((await t.req("GET", `/status/${slug}`)).text, /Router/);
  await t.req(
    "POST",
    "/me/status-page/notes",
    form({ kind: "resolved", text: "All fine." }, cookie),
  );
  const out = tokenIn(t.mail.last(FAN)!.text, "unfollow");
  const left = await t.req("POST", `/status/${slug}/unfollow`, form({ token: out }));
  assert.equal(left.status, 303);
  assert.equal(left.headers.get("location"), `/status/${slug}/unfollowed`);
  assert.match((await t.req("GET", `/status/${slug}/unfollowed`)).text, /no longer follow/);
  assert.match((await t.req("GET", "/me/status-page", { headers: { cookie } })).text, /0 people/);
  // Without the form's origin, nothing happens (the cross-site check).
  const foreign = await t.req("POST", `/status/${slug}/follow`, {
    raw: "email=x%40example.org",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.test" },
  });
  assert.equal(foreign.status, 403);
});
