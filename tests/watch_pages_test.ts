import assert from "node:assert/strict";
import { HOUR } from "../lib/clock.ts";
import { systemConnector } from "../lib/net.ts";
import { fakeResolver, testApp } from "./_helpers.ts";
import { localHttp } from "./_servers.ts";

/** The monitoring pages, in process: service page sections, channels, status page. */

const ORIGIN = "http://localhost";
const form = (fields: Record<string, string> | [string, string][], cookie: string) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: {
    "content-type": "application/x-www-form-urlencoded",
    origin: ORIGIN,
    cookie,
  },
});

Deno.test("pages: service page with bars, chart, events, channels, badge; status page", async () => {
  const srv = localHttp(() => new Response("fine"));
  try {
    await using t = await testApp({
      connector: systemConnector,
      resolver: fakeResolver({ "hooks.test": ["93.184.216.34"] }),
    });
    const { account, token } = await t.account("ops@example.org", {
      name: "Ada Ops",
      roles: ["owner"],
    });
    const cookie = `session=${token}`;
    const site = (await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Public site", check: `url:http://127.0.0.1:${srv.port}/` },
    })).body.item;
    const hb = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Backup", check: "webhook:" },
    });
    const hook = new URL(hb.body.hook_url).pathname;
    await t.req("GET", `${hook}/start`);
    t.clock.advance(HOUR / 60);
    await t.req("POST", `${hook}/0`, {
      raw: "<b>12 files</b>",
      headers: { "content-type": "text/plain" },
    });

    // The checked service: 90 bars, uptime (measured for 16 minutes now), the response-time chart.
    t.clock.advance(15 * HOUR / 60);
    const page = await t.req("GET", `/me/services/${site.id}`, { headers: { cookie } });
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /<h2 id="days">Last 90 days<\/h2>/);
    assert.match(page.text, /Uptime, 90 days<\/dt><dd>100 %<\/dd>/);
    const bars = page.text.split('aria-label="Daily uptime')[1].split("</svg>")[0];
    assert.equal(bars.match(/<rect /g)?.length, 90);
    // A service younger than an hour: its chart shows the last hour, where its checks are seen.
    assert.match(page.text, /aria-label="Response time of Public site over the last 1 hour/);
    assert.match(page.text, /<h2 id="incidents">Incidents<\/h2>\s*<ul|No incidents in the last 90/);
    assert.match(page.text, /data-live="\/watch\/live\?service=\d+"/);
    // Its last result says its time once: the check's words hold it.
    const result = page.text.match(/<dt>Last result<\/dt>\s*<dd>([^]*?)<\/dd>/)?.[1];
    assert.match(result ?? "", /^<bdi>HTTP 200 in \d+ ms<\/bdi>$/);
    assert.doesNotMatch(page.text, /style="/, "no inline style (CSP)");

    // The heartbeat: its events, the body escaped, the paired duration.
    const hbPage = await t.req("GET", `/me/services/${hb.body.item.id}`, { headers: { cookie } });
    assert.match(hbPage.text, /<h2 id="events">Events<\/h2>/);
    assert.match(hbPage.text, /success \(exit 0\)/);
    assert.match(hbPage.text, /60 s/);
    assert.ok(hbPage.text.includes("&lt;b&gt;12 files&lt;/b&gt;"), "the body is escaped");
    assert.doesNotMatch(hbPage.text, /Response time of/);

    // Channels: added through the form (303), the secret shown after the redirect, again on a
    // reload, not on the plain list; chosen on the service.
    const sent = await t.req(
      "POST",
      "/me/channels/new/webhook",
      form({ name: "Team chat", url: "https://hooks.test/in" }, cookie),
    );
    assert.equal(sent.status, 303, sent.text);
    assert.equal(sent.headers.get("location"), "/me/channels?shown=1");
    const added = await t.req("GET", "/me/channels?shown=1", { headers: { cookie } });
    assert.match(added.text, /Its signing secret is shown on this page for 15 minutes/);
    const secret = added.text.match(/id="secret"[^>]*value="([A-Za-z0-9_-]{43})"/)?.[1];
    assert.ok(secret, "the secret on the page");
    const again = await t.req("GET", "/me/channels?shown=1", { headers: { cookie } });
    assert.ok(again.text.includes(secret), "a reload shows it again");
    assert.equal((await t.req("GET", "/api/me/channels", { token })).body.items.length, 1);
    const list = await t.req("GET", "/me/channels", { headers: { cookie } });
    assert.ok(list.text.includes("https://hooks.test") && !list.text.includes(secret));
    // Another session of the same account does not see it.
    const other = `session=${(await t.signIn("ops@example.org")).token}`;
    const elsewhere = await t.req("GET", "/me/channels?shown=1", { headers: { cookie: other } });
    assert.ok(!elsewhere.text.includes(secret));
    t.clock.advance(16 * 60_000);
    const later = await t.req("GET", "/me/channels?shown=1", { headers: { cookie } });
    assert.ok(!later.text.includes(secret), "gone after 15 minutes");
    const bad = await t.req(
      "POST",
      "/me/channels/new/webhook",
      form({ name: "X1", url: "http://a" }, cookie),
    );
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Add a Webhook channel/);
    const chId = (await t.req("GET", "/api/me/channels", { token })).body.items[0].id;
    const chosen = await t.req(
      "POST",
      `/me/services/${site.id}/channels`,
      form([["channel", String(chId)]], cookie),
    );
    assert.equal(chosen.status, 303);
    const svc = (await t.req("GET", "/api/me/services", { token })).body.items[0];
    assert.deepEqual(svc.channels, [chId]);

    // Badge from the page.
    assert.equal(
      (await t.req("POST", `/me/services/${site.id}/badge`, form({}, cookie))).status,
      303,
    );
    const withBadge = await t.req("GET", `/me/services/${site.id}`, { headers: { cookie } });
    assert.match(withBadge.text, /<img src="\/api\/badges\/[A-Za-z0-9_-]{22}\.svg"/);

    // The status page: chosen through the form, public at /status/<slug>.
    const saved = await t.req(
      "POST",
      "/me/status-page",
      form({
        enabled: "on",
        title: "Ada's status",
        [`show-${site.id}`]: "on",
        [`note-${site.id}`]: "Maintenance on Sunday",
      }, cookie),
    );
    assert.equal(saved.status, 303);
    const pub = await t.req("GET", `/status/${account.slug}`);
    assert.equal(pub.status, 200, pub.text);
    assert.match(pub.text, /Ada&#39;s status|Ada's status/);
    assert.match(pub.text, /Public site/);
    assert.match(pub.text, /Maintenance on Sunday/);
    assert.match(pub.text, /90-day uptime: 100 %/);
    for (const hidden of ["127.0.0.1", String(srv.port), "Backup", "HTTP 200", hook]) {
      assert.ok(!pub.text.includes(hidden), `not shown: ${hidden}`);
    }
    assert.equal((await t.req("GET", "/status/nobody-here")).status, 404);
  } finally {
    await srv.close();
  }
});

Deno.test("pages: a heartbeat's next run due, the same on its page and the list (resumed, failed, new)", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ada Ops", roles: ["owner"] });
  const cookie = `session=${token}`;
  const add = async (body: Record<string, unknown>) => {
    const made = await t.req("POST", "/api/me/services", { token, body });
    return { id: made.body.item.id as number, hook: new URL(made.body.hook_url).pathname };
  };
  const backup = await add({ name: "Backup", check: "webhook:", interval: 60 });
  const fresh = await add({ name: "Fresh job", check: "webhook:", interval: 60 });
  const nightly = await add({
    name: "Nightly",
    check: "webhook:",
    schedule: "0 3 * * *",
    tz: "UTC",
  });
  const nextOnPage = async (id: number) => {
    const page = await t.req("GET", `/me/services/${id}`, { headers: { cookie } });
    return page.text.match(/<dt>Next expected<\/dt>\s*<dd>([^]*?)<\/dd>/)![1]
      .replace(/<[^>]+>/g, "");
  };
  const nextInList = async (name: string) => {
    const list = (await t.req("GET", "/watch", { headers: { cookie } })).text;
    const row = list.split('<tr class="watched').find((r) => r.includes(`>${name}<`))!;
    return row.match(/<td class="c-next"[^>]*>([^]*?)<\/td>/)![1];
  };
  await t.req("GET", backup.hook);
  // Paused for two hours, then resumed: late one period after the resume, not after the ping.
  await t.req("PATCH", `/api/me/services/${backup.id}`, { token, body: { paused: true } });
  t.clock.advance(2 * HOUR);
  await t.req("PATCH", `/api/me/services/${backup.id}`, { token, body: { paused: false } });
  t.clock.advance(HOUR / 3);
  assert.equal(await nextOnPage(backup.id), "in 40 minutes");
  assert.match(await nextInList("Backup"), />in 40 minutes</);
  // A failure is heard from as well: one period after it.
  await t.req("GET", `${backup.hook}/fail`);
  t.clock.advance(HOUR / 2);
  assert.equal(await nextOnPage(backup.id), "in 30 minutes");
  assert.match(await nextInList("Backup"), />in 30 minutes</);
  // Late: its next run's time has passed without it, which reads as due, never as done.
  t.clock.advance(HOUR / 2 + 15 * 60_000);
  assert.equal(await nextOnPage(backup.id), "due 15 minutes ago");
  assert.match(await nextInList("Backup"), /due <time[^>]*>15 minutes ago</);
  // Never pinged: on a schedule, its job's next time; on a period, none yet, with the reason.
  assert.match(await nextOnPage(nightly.id), /^in \d+ hours?$/);
  assert.equal(await nextOnPage(fresh.id), "one period after its first ping");
  assert.match(
    await nextInList("Fresh job"),
    /title="Expected one period after its first ping">—</,
  );
});
