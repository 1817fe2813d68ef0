import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { getChannel, MAX_ATTEMPTS } from "../kv/alerts/channels.ts";
import { deliverDue as outboxJob, enqueuePosts, sendNow } from "../kv/alerts/outbox.ts";
import { atomic, commit } from "../kv/_atomic.ts";
import { MINUTE } from "../lib/clock.ts";
import { dumpKv, expectLog } from "./_helpers.ts";
import {
  addChannel,
  AT,
  BACK,
  EXPIRY,
  type Got,
  GROUPED,
  LINK,
  OFF,
  receiver,
  REMINDER,
  send,
} from "./_channels.ts";

/**
 * Each channel kind's requests against a local receiver standing for its provider (127.0.0.1,
 * injected resolver): the exact method, path, headers and body its API documents, for an off,
 * its back, a reminder, a certificate expiry and a group. Secrets sealed and never shown.
 */

const SLACK_URL = "https://hooks.slack.com/services/T000/B000/XXXXSECRET";
const TG_TOKEN = "123456789:AAE-test_token_abcdefghijklmnop";
const PD_KEY = "R0UT1NGKEY0123456789abcdefghijkl";

Deno.test("kinds: Slack sends Block Kit in an attachment coloured by state", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const ch = await addChannel(r.t, token, { name: "Ops", kind: "slack", url: SLACK_URL });
  assert.ok(!JSON.stringify(ch).includes("XXXXSECRET"), "the address is sealed");
  const list = await r.t.req("GET", "/api/me/channels", { token });
  assert.deepEqual(list.body.items[0].secrets, { url: "set" });
  assert.equal(list.body.items[0].url_hint, "https://hooks.slack.com");
  assert.ok(!list.text.includes("XXXXSECRET"));

  const sent = await send(r.t, ch, OFF);
  assert.deepEqual(sent, { ok: true, status: "delivered (HTTP 200)" });
  const g = r.last();
  assert.equal(g.method, "POST");
  assert.equal(g.host, "hooks.slack.com");
  assert.equal(g.path, "/services/T000/B000/XXXXSECRET");
  assert.equal(g.headers.get("content-type"), "application/json");
  const title = 'Watched service "Backup" is off';
  const plain = (text: string) => ({ type: "plain_text", text, emoji: true });
  const open = (url: string) => ({
    type: "button",
    text: { type: "plain_text", text: "Open the service" },
    url,
  });
  assert.deepEqual(r.json(), {
    text: `🔴 ${title}`,
    mrkdwn: false,
    attachments: [{
      color: "#cf222e",
      fallback: `🔴 ${title}`,
      blocks: [
        {
          type: "section",
          text: plain(`${title}\ntar: disk full &lt;&amp;&gt;`),
          accessory: open(LINK),
        },
        { type: "context", elements: [{ type: "mrkdwn", text: `🔴 Off · ${AT}` }] },
      ],
    }],
  });

  await send(r.t, ch, BACK);
  const back = r.json() as { text: string; attachments: { color: string }[] };
  assert.equal(back.text, '✅ Watched service "Backup" is back');
  assert.equal(back.attachments[0].color, "#1a7f37");
  await send(r.t, ch, REMINDER);
  assert.equal((r.json() as { attachments: { color: string }[] }).attachments[0].color, "#bc4c00");
  await send(r.t, ch, EXPIRY);
  assert.deepEqual((r.json() as { attachments: { blocks: unknown[] }[] }).attachments[0].blocks, [
    {
      type: "section",
      text: plain(
        'Certificate of "Shop" expires soon\n' +
          "The certificate expires 2026-03-09T00:00:00.000Z (within 7 days).",
      ),
      accessory: open("http://test.local/me/services/8"),
    },
    {
      type: "context",
      elements: [{ type: "mrkdwn", text: `⚠️ Certificate expires soon · ${AT}` }],
    },
  ]);
  await send(r.t, ch, GROUPED);
  assert.deepEqual(r.json(), {
    text: "🔴 2 of 3 services at LAN changed",
    mrkdwn: false,
    attachments: [{
      color: "#cf222e",
      fallback: "🔴 2 of 3 services at LAN changed",
      blocks: [
        {
          type: "section",
          text: plain("2 of 3 services at LAN changed"),
          accessory: open("http://test.local/me/services"),
        },
        { type: "section", text: plain("🔴 Backup: Off\ntimed out") },
        { type: "section", text: plain("✅ NAS: Back\nHTTP 200") },
        { type: "context", elements: [{ type: "mrkdwn", text: `🔴 Off · ${AT}` }] },
      ],
    }],
  });
  assert.equal(r.got.length, 5);
});

Deno.test("kinds: Discord sends one embed, its colour by state, no mentions", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const ch = await addChannel(r.t, token, {
    name: "Ops",
    kind: "discord",
    url: "https://discord.com/api/webhooks/123/tok-en",
  });
  await send(r.t, ch, OFF);
  assert.equal(r.last().method, "POST");
  assert.equal(r.last().path, "/api/webhooks/123/tok-en");
  assert.equal(r.last().headers.get("content-type"), "application/json");
  assert.deepEqual(r.json(), {
    content: '🔴 Watched service "Backup" is off',
    embeds: [{
      title: 'Watched service "Backup" is off',
      url: LINK,
      description: "tar: disk full \\<&\\>",
      color: 0xcf222e,
      timestamp: AT,
      fields: [{ name: "State", value: "🔴 Off", inline: true }],
      footer: { text: "Community catalogue" },
    }],
    allowed_mentions: { parse: [] },
  });
  await send(r.t, ch, BACK);
  const back = r.json() as { embeds: { color: number; fields: unknown[] }[] };
  assert.equal(back.embeds[0].color, 0x1a7f37);
  assert.deepEqual(back.embeds[0].fields, [{ name: "State", value: "✅ Back", inline: true }]);
  await send(r.t, ch, REMINDER);
  assert.equal((r.json() as { embeds: { color: number }[] }).embeds[0].color, 0xbc4c00);
  await send(r.t, ch, EXPIRY);
  assert.equal((r.json() as { embeds: { color: number }[] }).embeds[0].color, 0x9a6700);
  await send(r.t, ch, GROUPED);
  const group = r.json() as { embeds: Record<string, unknown>[] };
  assert.equal(group.embeds[0].description, undefined);
  assert.deepEqual(group.embeds[0].fields, [
    { name: "Backup", value: "🔴 Off: timed out", inline: false },
    { name: "NAS", value: "✅ Back: HTTP 200", inline: false },
  ]);
});

Deno.test("kinds: Telegram sendMessage with escaped HTML; the back replies to its off", () =>
  expectLog([
    /"msg":"channel delivery failed".*"kind":"telegram".*"reason":"unknown chat: the bot cannot see it \(HTTP 400\)/,
    /"msg":"channel delivery failed".*"kind":"telegram".*"reason":"wrong token or key \(HTTP 401\)/,
    /"msg":"channel delivery failed".*"kind":"telegram".*"reason":"rate limited by the receiver \(HTTP 429\); retried in 7 s/,
  ], async () => {
    await using r = await receiver();
    const { token } = await r.t.account("ops@example.org");
    const bad = await r.t.req("POST", "/api/me/channels", {
      token,
      body: { name: "Phone", kind: "telegram", bot_token: "nope", chat_id: "42" },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.field, "bot_token");
    const ch = await addChannel(r.t, token, {
      name: "Phone",
      kind: "telegram",
      bot_token: TG_TOKEN,
      chat_id: "-1001234567890",
    });
    r.answer = () => Response.json({ ok: true, result: { message_id: 321 } });
    await send(r.t, ch, OFF);
    const off = r.last();
    assert.equal(off.method, "POST");
    assert.equal(off.host, "api.telegram.org");
    assert.equal(off.path, `/bot${TG_TOKEN}/sendMessage`);
    assert.equal(off.headers.get("content-type"), "application/json");
    assert.deepEqual(r.json(), {
      chat_id: -1001234567890,
      text: `🔴 <b><a href="${LINK}">Watched service &quot;Backup&quot; is off</a></b>\n` +
        "tar: disk full &lt;&amp;&gt;",
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
    });
    await send(r.t, ch, REMINDER);
    assert.deepEqual((r.json() as Record<string, unknown>).reply_parameters, {
      message_id: 321,
      allow_sending_without_reply: true,
    });
    await send(r.t, ch, BACK);
    assert.deepEqual(r.json(), {
      chat_id: -1001234567890,
      text: `✅ <b><a href="${LINK}">Watched service &quot;Backup&quot; is back</a></b>\nok`,
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
      reply_parameters: { message_id: 321, allow_sending_without_reply: true },
    });
    // The next outage is a new thread.
    r.answer = () => Response.json({ ok: true, result: { message_id: 400 } });
    await send(r.t, ch, OFF);
    assert.equal((r.json() as Record<string, unknown>).reply_parameters, undefined);
    await send(r.t, ch, EXPIRY);
    assert.equal(
      (r.json() as { text: string }).text,
      '⚠️ <b><a href="http://test.local/me/services/8">Certificate of &quot;Shop&quot; expires ' +
        "soon</a></b>\nThe certificate expires 2026-03-09T00:00:00.000Z (within 7 days).",
    );
    await send(r.t, ch, GROUPED);
    assert.equal(
      (r.json() as { text: string }).text,
      '🔴 <b><a href="http://test.local/me/services">2 of 3 services at LAN changed</a></b>\n' +
        "🔴 <b>Backup</b>: Off (timed out)\n✅ <b>NAS</b>: Back (HTTP 200)",
    );

    // The provider's refusals in plain words.
    r.answer = () =>
      Response.json({ ok: false, error_code: 400, description: "Bad Request: chat not found" }, {
        status: 400,
      });
    const unknown = await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.deepEqual(unknown.body, {
      ok: true,
      delivered: false,
      status: "unknown chat: the bot cannot see it (HTTP 400: Bad Request: chat not found)",
    });
    r.answer = () =>
      Response.json({ ok: false, error_code: 401, description: "Unauthorized" }, { status: 401 });
    const wrong = await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.equal(wrong.body.status, "wrong token or key (HTTP 401: Unauthorized)");
    r.answer = () =>
      Response.json({
        ok: false,
        error_code: 429,
        description: "Too Many Requests: retry after 7",
        parameters: { retry_after: 7 },
      }, { status: 429 });
    const limited = await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.equal(
      limited.body.status,
      "rate limited by the receiver (HTTP 429: Too Many Requests: retry after 7); retried in 7 s",
    );
    const view = (await r.t.req("GET", "/api/me/channels", { token })).body.items[0];
    assert.equal(view.state, "failing");
    assert.match(view.last_error.error, /rate limited/);
    assert.deepEqual(view.secrets, { bot_token: "set" });
    assert.deepEqual(view.settings, { chat_id: "-1001234567890" });
    // A delivered test clears the failure.
    r.answer = () => Response.json({ ok: true, result: { message_id: 9 } });
    await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.equal((await r.t.req("GET", "/api/me/channels", { token })).body.items[0].state, "ok");
    assert.equal((await getChannel(r.t.kv, ch.account, ch.id))!.failure, null);
  }));

Deno.test("kinds: ntfy publishes JSON with priority and tags by state, and the token", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const ch = await addChannel(r.t, token, {
    name: "Push",
    kind: "ntfy",
    url: "https://ntfy.sh/backup-alerts-x1",
    token: "tk_secret",
  });
  await send(r.t, ch, OFF);
  const g = r.last();
  assert.equal(g.method, "POST");
  assert.equal(g.host, "ntfy.sh");
  assert.equal(g.path, "/");
  assert.equal(g.headers.get("authorization"), "Bearer tk_secret");
  assert.equal(g.headers.get("content-type"), "application/json");
  const view = { action: "view", label: "Open the service", url: LINK };
  assert.deepEqual(r.json(), {
    topic: "backup-alerts-x1",
    title: 'Watched service "Backup" is off',
    message: "tar: disk full <&>",
    priority: 5,
    tags: ["red_circle"],
    click: LINK,
    actions: [view],
  });
  await send(r.t, ch, BACK);
  assert.deepEqual(r.json(), {
    topic: "backup-alerts-x1",
    title: 'Watched service "Backup" is back',
    message: "ok",
    priority: 3,
    tags: ["green_circle"],
    click: LINK,
    actions: [view],
  });
  await send(r.t, ch, REMINDER);
  const rem = r.json() as Record<string, unknown>;
  assert.deepEqual([rem.priority, rem.tags], [4, ["red_circle", "repeat"]]);
  await send(r.t, ch, EXPIRY);
  const exp = r.json() as Record<string, unknown>;
  assert.deepEqual([exp.priority, exp.tags], [4, ["warning"]]);
  await send(r.t, ch, GROUPED);
  const grp = r.json() as Record<string, unknown>;
  assert.equal(grp.message, "Backup: off (timed out)\nNAS: back (HTTP 200)");
  assert.equal(grp.priority, 5);
});

Deno.test("kinds: PagerDuty triggers on off and resolves the same dedup_key on back", () =>
  expectLog([
    /"msg":"channel delivery failed".*"kind":"pagerduty".*"reason":"refused by the receiver \(HTTP 400\)/,
  ], async () => {
    await using r = await receiver();
    const { token } = await r.t.account("ops@example.org");
    const ch = await addChannel(r.t, token, {
      name: "On call",
      kind: "pagerduty",
      routing_key: PD_KEY,
    });
    r.answer = (g) =>
      Response.json({
        status: "success",
        message: "Event processed",
        dedup_key: JSON.parse(g.body).dedup_key,
      }, { status: 202 });
    await send(r.t, ch, OFF);
    const g = r.last();
    assert.equal(g.method, "POST");
    assert.equal(g.host, "events.pagerduty.com");
    assert.equal(g.path, "/v2/enqueue");
    assert.equal(g.headers.get("content-type"), "application/json");
    const off = r.json() as { dedup_key: string };
    assert.match(off.dedup_key, /^service-7-/);
    assert.deepEqual(off, {
      routing_key: PD_KEY,
      event_action: "trigger",
      dedup_key: off.dedup_key,
      payload: {
        summary: 'Watched service "Backup" is off',
        source: "Backup",
        severity: "critical",
        timestamp: AT,
        component: "webhook",
        class: "off",
        custom_details: { state: "Off", status: "tar: disk full <&>" },
      },
      client: "Community catalogue",
      client_url: LINK,
      links: [{ href: LINK, text: "Open the service" }],
    });
    // A reminder repeats the open incident; the back resolves it.
    await send(r.t, ch, REMINDER);
    const rem = r.json() as { dedup_key: string; event_action: string };
    assert.deepEqual([rem.event_action, rem.dedup_key], ["trigger", off.dedup_key]);
    await send(r.t, ch, BACK);
    assert.deepEqual(r.json(), {
      routing_key: PD_KEY,
      event_action: "resolve",
      dedup_key: off.dedup_key,
    });
    // The next outage is another incident.
    await send(r.t, ch, OFF);
    const again = r.json() as { dedup_key: string };
    assert.notEqual(again.dedup_key, off.dedup_key);
    // A certificate's warning, under the certificate's key.
    await send(r.t, ch, EXPIRY);
    const exp = r.json() as { dedup_key: string; payload: { severity: string } };
    assert.deepEqual([exp.dedup_key, exp.payload.severity], ["certificate-8", "warning"]);
    // A group: one event per service; NAS's back resolves NAS's incident, Backup's stays open.
    const n = r.got.length;
    await send(r.t, ch, GROUPED);
    assert.equal(r.got.length, n + 2);
    const [a, b] = [r.json(-2), r.json(-1)] as Record<string, unknown>[];
    assert.deepEqual([a.event_action, a.dedup_key], ["trigger", again.dedup_key]);
    assert.equal((a.payload as { summary: string }).summary, "Backup: off (timed out)");
    assert.deepEqual(b, { routing_key: PD_KEY, event_action: "resolve", dedup_key: "service-9" });
    // A test opens and resolves one incident of its own.
    const m = r.got.length;
    const test = await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.deepEqual(test.body, { ok: true, delivered: true, status: "delivered (HTTP 202)" });
    assert.equal(r.got.length, m + 2);
    const [tt, tr] = [r.json(-2), r.json(-1)] as Record<string, unknown>[];
    assert.deepEqual([tt.event_action, tr.event_action], ["trigger", "resolve"]);
    assert.equal(tt.dedup_key, tr.dedup_key);
    // PagerDuty's refusal in its own words.
    r.answer = () =>
      Response.json({
        status: "invalid event",
        message: "Event object is invalid",
        errors: ["Length of 'routing_key' is incorrect (should be 32 characters)"],
      }, { status: 400 });
    const refused = await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.equal(
      refused.body.status,
      "refused by the receiver (HTTP 400: Length of 'routing_key' is incorrect (should be 32 " +
        "characters))",
    );
  }));

Deno.test("kinds: a 429's Retry-After is waited out; a receiver failing every retry is marked broken, its owner mailed once", () =>
  expectLog([
    /"msg":"channel delivery failed".*"kind":"slack".*"reason":"rate limited by the receiver \(HTTP 429\); retried in 900 s/,
    /"msg":"channel delivery failed".*"kind":"slack".*"reason":"unknown address, chat or room \(HTTP 404\)/,
  ], async () => {
    await using r = await receiver();
    const { token } = await r.t.account("ops@example.org");
    const ch = await addChannel(r.t, token, { name: "Ops", kind: "slack", url: SLACK_URL });
    r.answer = () =>
      new Response("rate_limited", { status: 429, headers: { "Retry-After": "900" } });
    const first = await send(r.t, ch, OFF);
    assert.deepEqual(first, {
      ok: false,
      status: "rate limited by the receiver (HTTP 429: rate_limited); retried in 900 s",
      retryAfter: 900_000,
    });
    // Not before the 15 minutes it asked for (the backoff alone would try after 2).
    r.t.clock.advance(14 * MINUTE);
    await outboxJob(r.t.deps);
    assert.equal(r.got.length, 1);
    r.answer = () => new Response("no_service", { status: 404 });
    r.t.clock.advance(MINUTE + 1);
    await outboxJob(r.t.deps);
    assert.equal(r.got.length, 2);
    assert.equal(r.last().body, r.got[0].body, "the same alert again");
    // Every retry fails: after MAX_ATTEMPTS tries the post is given up and the channel broken.
    for (let i = 0; i < 20 && r.got.length < MAX_ATTEMPTS; i++) {
      r.t.clock.advance(6 * 60 * MINUTE);
      await outboxJob(r.t.deps);
    }
    assert.equal(r.got.length, MAX_ATTEMPTS);
    r.t.clock.advance(6 * 60 * MINUTE);
    await outboxJob(r.t.deps);
    assert.equal(r.got.length, MAX_ATTEMPTS, "given up");
    assert.ok(!(await dumpKv(r.t.kv)).includes('["outbox"'));
    const view = (await r.t.req("GET", "/api/me/channels", { token })).body.items[0];
    assert.equal(view.state, "broken");
    assert.equal(view.last_error.error, "unknown address, chat or room (HTTP 404: no_service)");
    const mails = r.t.mail.sent.filter((m) => m.to === "ops@example.org");
    assert.equal(mails.length, 1);
    assert.equal(mails[0].subject, 'Alert channel "Ops" is broken');
    assert.match(mails[0].text, /did not take an alert in 6 tries/);
    assert.match(mails[0].text, /HTTP 404: no_service/);
    assert.match(mails[0].text, /http:\/\/test\.local\/me\/channels/);
    // Another alert that fails every retry mails nothing more.
    await send(r.t, ch, BACK);
    for (let i = 0; i < 10; i++) {
      r.t.clock.advance(6 * 60 * MINUTE);
      await outboxJob(r.t.deps);
    }
    assert.equal(r.got.length, 2 * MAX_ATTEMPTS);
    assert.equal(r.t.mail.sent.filter((m) => m.to === "ops@example.org").length, 1);
    // It delivers again: no longer broken.
    r.answer = () => new Response("ok");
    await send(r.t, ch, OFF);
    const healed = (await r.t.req("GET", "/api/me/channels", { token })).body.items[0];
    assert.deepEqual([healed.state, healed.last_error, healed.broken_since], ["ok", null, null]);
  }));

Deno.test("kinds: a heartbeat's real off and back pair on PagerDuty and Opsgenie, the off retried first", () =>
  expectLog([
    /"msg":"channel delivery failed".*"kind":"pagerduty".*"reason":"the receiver failed \(HTTP 503\)/,
    /"msg":"channel delivery failed".*"kind":"opsgenie".*"reason":"the receiver failed \(HTTP 503\)/,
  ], async () => {
    await using r = await receiver();
    const { token } = await r.t.account("ops@example.org");
    const pd = await addChannel(r.t, token, { name: "PD", kind: "pagerduty", routing_key: PD_KEY });
    const og = await addChannel(r.t, token, {
      name: "OG",
      kind: "opsgenie",
      api_key: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
    });
    const svc = await r.t.req("POST", "/api/me/services", {
      token,
      body: { name: "Nightly", check: "webhook:", interval: 5, channels: [pd.id, og.id] },
    });
    assert.equal(svc.status, 200, svc.text);
    const hook = new URL(svc.body.hook_url).pathname;
    await r.t.req("GET", hook);
    r.t.clock.advance(5 * MINUTE);
    await runDueChecks(r.t.deps);
    // The off fails at first on both: it opens the outage anyway, and is retried.
    let down = true;
    r.answer = () =>
      down ? new Response("busy", { status: 503 }) : new Response("{}", { status: 202 });
    await r.t.req("POST", `${hook}/fail`, { body: { status: "exit 2" } });
    await runDueChecks(r.t.deps);
    const offs = r.got.filter((g) => g.method === "POST").length;
    assert.equal(offs, 2);
    down = false;
    r.t.clock.advance(3 * MINUTE);
    await outboxJob(r.t.deps);
    const trigger = r.got.map((g) => JSON.parse(g.body)).findLast((b) =>
      b.event_action === "trigger"
    );
    const create = r.got.findLast((g) => g.path === "/v2/alerts")!;
    const alias = JSON.parse(create.body).alias;
    assert.equal(trigger.payload.summary, 'Watched service "Nightly" is off');
    assert.match(trigger.payload.custom_details.status, /^failure signalled .*: exit 2$/);
    // Back: PagerDuty resolves the trigger's key, Opsgenie closes the created alias.
    await r.t.req("GET", hook);
    await runDueChecks(r.t.deps);
    const resolve = r.got.map((g) => JSON.parse(g.body)).findLast((b) =>
      b.event_action === "resolve"
    );
    assert.deepEqual(resolve, {
      routing_key: PD_KEY,
      event_action: "resolve",
      dedup_key: trigger.dedup_key,
    });
    assert.equal(
      r.last(r.got.findLastIndex((g) => g.path.includes("/close")) - r.got.length).path,
      `/v2/alerts/${alias}/close?identifierType=alias`,
    );
    assert.ok(!(await dumpKv(r.t.kv)).includes('["channel_incidents"'), "the outage closed");
  }));

Deno.test("kinds: a back queued while its off is being posted follows it at once, not at the next run", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const ch = await addChannel(r.t, token, {
    name: "Hook",
    url: "https://hooks.example.org/alerts",
  });
  // A receiver that holds the off until the back's own delivery has found it being posted.
  const held = Promise.withResolvers<void>();
  const posting = Promise.withResolvers<void>();
  r.answer = (g: Got) => {
    if (JSON.parse(g.body).event !== "off") return Response.json({ ok: true });
    posting.resolve();
    return held.promise.then(() => Response.json({ ok: true }));
  };
  const queue = async (payload: typeof OFF) => {
    const op = atomic(r.t.kv);
    const ids = enqueuePosts(op, [ch], payload, r.t.clock.now(), [7]);
    await commit(op);
    return ids;
  };
  const off = sendNow(r.t.deps, (await queue(OFF))[0]);
  await posting.promise;
  const back = await sendNow(r.t.deps, (await queue(BACK))[0]);
  assert.deepEqual(back, { ok: false, status: "waits for an earlier alert" });
  held.resolve();
  assert.equal((await off).ok, true);
  assert.deepEqual(r.got.map((g) => JSON.parse(g.body).event), ["off", "back"]);
  assert.ok(!(await dumpKv(r.t.kv)).includes('["outbox"'), "nothing left for the job");
});
