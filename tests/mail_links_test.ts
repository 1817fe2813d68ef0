/**
 * Every mail links to the page where its reader acts. One flow in process drives every kind
 * of mail the service sends (sign-in and proposal links, new-device notice, alert, the team's
 * proposal and request notices, decisions, publication, application outcome, invitation,
 * dormant notice); after each step the new mails' links are checked: each is a page of this
 * service (BASE_URL, never /api/...), known to the table below, and opening it as the
 * reader (signed in where the page needs it) answers 200 with the expected heading.
 */
import assert from "node:assert/strict";
import { noticeDormant } from "../kv/accounts/dormant.ts";
import { DAY } from "../lib/clock.ts";
import type { Mail } from "../lib/mail.ts";
import { systemConnector } from "../lib/net.ts";
import { proposal } from "./_forms_fixtures.ts";
import { fakeResolver, testApp } from "./_helpers.ts";
import { localHttp } from "./_servers.ts";

const BASE = "http://test.local";
const TEAM = "team@inbox.test";
const REPORTS = "reports@inbox.test";

/** Each page a mail may link to, and the heading it must show to its reader. */
const PAGES: [path: RegExp, heading: RegExp][] = [
  [/^\/me\?verify=[A-Za-z0-9_%-]+$/, /^(Sign in|Confirm your proposal)$/],
  [/^\/me$/, /^Your account$/],
  [/^\/me\/devices$/, /^Devices$/],
  [/^\/me\/services\/\d+$/, /^Shop front/],
  [/^\/team\/proposals\/\d+$/, /^#\d+ (River walks|Pond life)$/],
  [/^\/team\/requests$/, /^Requests$/],
  [/^\/contribute\/status\?id=\d+(&key=[A-Za-z0-9_%-]+)?$/, /^Proposal \d+: [\w ]+$/],
  [/^\/modules\/river-walks$/, /^River walks/],
];

const h1 = (html: string) =>
  html.match(/<h1[^>]*>([^]*?)<\/h1>/)?.[1].replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();

Deno.test("every mail links to a page of the service that answers its reader", async () => {
  let up = true;
  const shop = localHttp(() => up ? new Response("fine") : new Response("down", { status: 500 }));
  try {
    await using t = await testApp({
      config: { teamInbox: TEAM, reportInbox: REPORTS },
      connector: systemConnector,
      resolver: fakeResolver(),
    });
    /** The session cookie each reader opens their mail with (inboxes: the owner's). */
    const cookies = new Map<string, string>();
    let seen = 0;
    const kinds = new Set<string>();
    let opened = 0;

    /** Checks the links of the mails sent since the last call; answers those mails. */
    const checkNewMails = async (): Promise<Mail[]> => {
      const mails = t.mail.sent.slice(seen);
      seen = t.mail.sent.length;
      for (const mail of mails) {
        kinds.add(mail.subject.replace(/#\d+|"[^"]*"|: .*$/g, "").replace(/\s+/g, " ").trim());
        const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
        for (const link of links) {
          assert.ok(link.startsWith(`${BASE}/`), `${mail.subject}: ${link} is not ours`);
          const path = link.slice(BASE.length);
          assert.doesNotMatch(path, /^\/api\//, `${mail.subject}: ${link} is the raw API`);
          const page = PAGES.find(([re]) => re.test(path));
          assert.ok(page, `${mail.subject}: ${link} is no known page`);
          const cookie = path.startsWith("/me?verify=") ? undefined : cookies.get(mail.to);
          const res = await t.req("GET", path, { headers: cookie ? { cookie } : {} });
          assert.equal(res.status, 200, `${mail.subject}: ${link} answered ${res.status}`);
          assert.match(h1(res.text) ?? "", page[1], `${mail.subject}: ${link}`);
          opened++;
          // A signed-in page is not shown to whoever else holds the mail.
          if (/^\/(me|team)\//.test(path) || path === "/me") {
            const stranger = await t.req("GET", path);
            assert.equal(stranger.status, 303, `${link} without a session`);
          }
        }
      }
      return mails;
    };

    /** Signs in through the mailed link, checking the mail before the link is used. */
    const signIn = async (email: string) => {
      const from = "198.51.100.7";
      const asked = await t.req("POST", "/api/verify/request", {
        body: { email, purpose: "login", age_ok: true, name: "Ann Example" },
        from,
      });
      assert.equal(asked.status, 202);
      const mails = await checkNewMails();
      assert.ok(mails.some((m) => m.to === email && /\/me\?verify=/.test(m.text)));
      const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken(email)}`, { from });
      assert.equal(v.status, 200, v.text);
      cookies.set(email, `session=${v.body.token}`);
      await checkNewMails();
      return v.body.token as string;
    };

    const owner = await t.account("olga@example.com", { name: "Olga", roles: ["owner"] });
    const ownerCookie = `session=${owner.token}`;
    for (const inbox of [TEAM, REPORTS]) cookies.set(inbox, ownerCookie);
    cookies.set("olga@example.com", ownerCookie);

    // Sign-in, then a second device: the new-device notice links to the devices page.
    await signIn("ann@example.com");
    const ann = await signIn("ann@example.com");
    assert.ok(kinds.has("New sign-in to your account"), [...kinds].join(", "));

    // A proposal from the signed-in address: confirmed at once, the team told.
    const sent = await t.req("POST", "/api/contributions", {
      token: ann,
      body: proposal({ email: "ann@example.com", title: "River walks" }),
    });
    assert.equal(sent.status, 201, sent.text);
    const id = sent.body.id;
    await checkNewMails();
    // A proposal without signing in: the confirmation link and the status page (with its key).
    const anon = await t.req("POST", "/api/contributions", {
      body: proposal({ email: "bea@example.org", title: "Pond life" }),
      from: "203.0.113.9",
    });
    assert.equal(anon.status, 201, anon.text);
    await checkNewMails();

    // The team's decisions, then publication: the submitter is mailed each time.
    for (
      const change of [{ status: "reviewing" }, { status: "admitted", reason: "A good start" }]
    ) {
      const r = await t.req("PATCH", `/api/contributions/${id}`, {
        token: owner.token,
        body: change,
      });
      assert.equal(r.status, 200, r.text);
      await checkNewMails();
    }
    const pub = await t.req("PATCH", `/api/contributions/${id}`, {
      token: owner.token,
      body: { status: "published" },
    });
    assert.equal(pub.status, 200, pub.text);
    await checkNewMails();

    // A request, and a report about the module: the team's notices.
    for (const kind of ["module", "report"]) {
      const r = await t.req("POST", "/api/requests", {
        body: {
          name: "Carl",
          email: "carl@example.net",
          kind,
          text: "Please look at the river module.",
          module: "river-walks",
        },
        from: "203.0.113.10",
      });
      assert.equal(r.status, 202, r.text);
      await checkNewMails();
    }

    // An application and its outcome; the new contributor invites someone.
    const applied = await t.req("POST", "/api/me/apply", {
      token: ann,
      body: { text: "I teach outdoors and would add river modules." },
    });
    assert.equal(applied.status, 202, applied.text);
    const appId = applied.body.application.id;
    const decided = await t.req("PATCH", `/api/applications/${appId}`, {
      token: owner.token,
      body: { outcome: "approved", reason: "Welcome aboard" },
    });
    assert.equal(decided.status, 200, decided.text);
    await checkNewMails();
    const invited = await t.req("POST", "/api/me/invites", {
      token: ann,
      body: { email: "newbie@example.com", message: "Come along" },
    });
    assert.equal(invited.status, 201, invited.text);
    await checkNewMails();

    // A watched service that fails: the alert links to the service's page.
    const added = await t.req("POST", "/api/me/services", {
      token: owner.token,
      body: { name: "Shop front", check: `url:http://127.0.0.1:${shop.port}/` },
    });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.item.state, "ok");
    // It goes off, then comes back: the owner is mailed each time.
    for (const [state, word] of [["off", "is off"], ["ok", "is back"]]) {
      up = state === "ok";
      const checked = await t.req("POST", `/api/me/services/${added.body.item.id}/check`, {
        token: owner.token,
      });
      assert.equal(checked.status, 200, checked.text);
      assert.equal(checked.body.item.state, state);
      const alert = await checkNewMails();
      assert.ok(alert.some((m) => m.to === "olga@example.com" && m.subject.endsWith(word)));
    }

    // A year later, the dormant notice; its reader signs in again to act on it.
    t.clock.advance(366 * DAY);
    assert.ok(await noticeDormant(t.deps) >= 1);
    // Its readers sign in again (their sessions are a year old) before opening it.
    const dormant = t.mail.sent.splice(seen);
    assert.ok(dormant.length >= 2);
    for (const m of dormant) assert.ok(["ann@example.com", "olga@example.com"].includes(m.to));
    await signIn("ann@example.com");
    await signIn("olga@example.com");
    t.mail.sent.push(...dormant);
    await checkNewMails();

    assert.ok(opened >= 20, `${opened} links opened`);
    // Every kind of mail was seen (and its links checked).
    for (
      const kind of [
        "Your sign-in link",
        "New sign-in to your account",
        "Confirm your proposal",
        "Proposal confirmed",
        "Your proposal is admitted",
        "Your proposal is published",
        "We received your message",
        "Request (module) from",
        "Report (report) from",
        "Your application was approved",
        "invites you to the community catalogue",
        "Watched service is off",
        "Watched service is back",
        "Your account has been quiet for a year",
      ]
    ) {
      assert.ok([...kinds].some((k) => k.includes(kind)), `${kind} in ${[...kinds].join(" | ")}`);
    }
    assert.ok(t.mail.sent.some((m) => m.to === "newbie@example.com"), "the invitation");
    assert.ok(t.mail.sent.some((m) => m.to === TEAM && /\/team\/requests/.test(m.text)));
  } finally {
    await shop.close();
  }
});
