import assert from "node:assert/strict";
import { signature } from "../kv/alerts/channels.ts";
import { fromApprise } from "../lib/channels/apprise.ts";
import { dumpKv, expectLog } from "./_helpers.ts";
import {
  addChannel,
  AT,
  BACK,
  EXPIRY,
  GROUPED,
  LINK,
  OFF,
  receiver,
  REMINDER,
  send,
} from "./_channels.ts";

/**
 * The other channel kinds against the local receiver (tests/_channels.ts): Microsoft Teams,
 * Google Chat, Mattermost, Rocket.Chat, Zulip, Matrix, Gotify, Pushover, Opsgenie, the
 * webhook's body template; secrets sealed in KV, "set" in the export, gone with the account;
 * self-hosted receivers on the networks the server names.
 */

const OG_KEY = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";
const PO_USER = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG";
const PO_APP = "azGDORePK8gMaC0QOYAMyEEuzJnyUi";

Deno.test("kinds: Teams posts one Adaptive Card through a Workflows webhook", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const url = "https://prod.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/" +
    "invoke?api-version=2016-06-01&sig=SECRETSIG";
  const ch = await addChannel(r.t, token, { name: "Teams", kind: "teams", url });
  await send(r.t, ch, OFF);
  const g = r.last();
  assert.equal(g.method, "POST");
  assert.equal(g.host, "prod.westeurope.logic.azure.com");
  assert.equal(
    g.path,
    "/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=SECRETSIG",
  );
  assert.equal(g.headers.get("content-type"), "application/json");
  const card = (body: unknown[]) => ({
    type: "message",
    attachments: [{
      contentType: "application/vnd.microsoft.card.adaptive",
      contentUrl: null,
      content: {
        $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
        type: "AdaptiveCard",
        version: "1.4",
        fallbackText: body[0] && (body[0] as { text: string }).text,
        body,
        actions: [{ type: "Action.OpenUrl", title: "Open the service", url: LINK }],
      },
    }],
  });
  const heading = (text: string, color: string) => ({
    type: "TextBlock",
    text,
    weight: "bolder",
    size: "medium",
    wrap: true,
    style: "heading",
    color,
  });
  assert.deepEqual(
    r.json(),
    card([
      heading('🔴 Watched service "Backup" is off', "attention"),
      { type: "TextBlock", text: "tar: disk full \\<&\\>", wrap: true },
      {
        type: "FactSet",
        facts: [{ title: "State", value: "🔴 Off" }, { title: "At", value: AT }],
      },
    ]),
  );
  await send(r.t, ch, BACK);
  assert.deepEqual(
    r.json(),
    card([
      heading('✅ Watched service "Backup" is back', "good"),
      { type: "TextBlock", text: "ok", wrap: true },
      {
        type: "FactSet",
        facts: [{ title: "State", value: "✅ Back" }, { title: "At", value: AT }],
      },
    ]),
  );
  await send(r.t, ch, REMINDER);
  const rem = r.json() as { attachments: { content: { body: { color: string }[] } }[] };
  assert.equal(rem.attachments[0].content.body[0].color, "warning");
  await send(r.t, ch, EXPIRY);
  const exp = r.json() as { attachments: { content: { body: { text: string }[] } }[] };
  assert.equal(exp.attachments[0].content.body[0].text, '⚠️ Certificate of "Shop" expires soon');
  await send(r.t, ch, GROUPED);
  const grp = r.json() as { attachments: { content: { body: unknown[] } }[] };
  assert.deepEqual(grp.attachments[0].content.body[1], {
    type: "FactSet",
    facts: [
      { title: "Backup", value: "🔴 Off: timed out" },
      { title: "NAS", value: "✅ Back: HTTP 200" },
    ],
  });
  assert.deepEqual(grp.attachments[0].content.body[2], {
    type: "FactSet",
    facts: [
      { title: "Group", value: "LAN" },
      { title: "State", value: "🔴 Off" },
      { title: "At", value: AT },
    ],
  });
});

Deno.test("kinds: Google Chat cards share the outage's thread", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const ch = await addChannel(r.t, token, {
    name: "Chat",
    kind: "google_chat",
    url: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=K&token=T",
  });
  await send(r.t, ch, OFF);
  const g = r.last();
  assert.equal(g.method, "POST");
  assert.equal(
    g.path,
    "/v1/spaces/AAA/messages?key=K&token=T&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD",
  );
  const off = r.json() as { thread: { threadKey: string }; cardsV2: { cardId: string }[] };
  assert.match(off.thread.threadKey, /^service-7-/);
  assert.deepEqual(off, {
    fallbackText: '🔴 Watched service "Backup" is off',
    cardsV2: [{
      cardId: off.cardsV2[0].cardId,
      card: {
        header: { title: 'Watched service "Backup" is off', subtitle: "🔴 Off" },
        sections: [{
          widgets: [
            { textParagraph: { text: "tar: disk full &lt;&amp;&gt;" } },
            {
              buttonList: {
                buttons: [{ text: "Open the service", onClick: { openLink: { url: LINK } } }],
              },
            },
          ],
        }],
      },
    }],
    thread: { threadKey: off.thread.threadKey },
  });
  await send(r.t, ch, BACK);
  const back = r.json() as { thread: { threadKey: string }; cardsV2: unknown[] };
  assert.equal(back.thread.threadKey, off.thread.threadKey, "the back in the off's thread");
  await send(r.t, ch, GROUPED);
  const grp = r.json() as {
    thread: { threadKey: string };
    cardsV2: { card: { sections: { widgets: unknown[] }[] } }[];
  };
  assert.equal(grp.thread.threadKey, "group-LAN");
  assert.deepEqual(grp.cardsV2[0].card.sections[0].widgets[0], {
    decoratedText: { topLabel: "🔴 Off", text: "<b>Backup</b>: timed out", wrapText: true },
  });
  await send(r.t, ch, OFF);
  const next = (r.json() as { thread: { threadKey: string } }).thread.threadKey;
  assert.notEqual(next, off.thread.threadKey, "a new outage, a new thread");
  await send(r.t, ch, REMINDER);
  const rem = r.json() as {
    thread: { threadKey: string };
    cardsV2: { card: { header: unknown } }[];
  };
  assert.equal(rem.thread.threadKey, next, "the reminder in the outage's thread");
  assert.deepEqual(rem.cardsV2[0].card.header, {
    title: 'Watched service "Backup" is still off',
    subtitle: "🔁 Still off",
  });
  await send(r.t, ch, EXPIRY);
  const exp = r.json() as { fallbackText: string; cardsV2: { card: { header: unknown } }[] };
  assert.equal(exp.fallbackText, '⚠️ Certificate of "Shop" expires soon');
  assert.deepEqual(exp.cardsV2[0].card.header, {
    title: 'Certificate of "Shop" expires soon',
    subtitle: "⚠️ Certificate expires soon",
  });
  assert.equal(r.got.length, 6);
});

Deno.test("kinds: Mattermost and Rocket.Chat take Slack's attachments", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const mm = await addChannel(r.t, token, {
    name: "MM",
    kind: "mattermost",
    url: "https://chat.example.org/hooks/xyz",
  });
  const attachment = {
    fallback: '🔴 Watched service "Backup" is off',
    color: "#cf222e",
    title: 'Watched service "Backup" is off',
    title_link: LINK,
    text: "tar: disk full \\<&\\>",
    fields: [
      { short: true, title: "State", value: "🔴 Off" },
      { short: true, title: "At", value: AT },
    ],
  };
  await send(r.t, mm, OFF);
  assert.equal(r.last().path, "/hooks/xyz");
  assert.equal(r.last().headers.get("content-type"), "application/json");
  assert.deepEqual(r.json(), {
    username: "Community catalogue",
    text: '🔴 Watched service "Backup" is off',
    attachments: [attachment],
  });
  const rc = await addChannel(r.t, token, {
    name: "RC",
    kind: "rocket_chat",
    url: "https://chat.example.org/hooks/abc/def",
  });
  await send(r.t, rc, OFF);
  assert.equal(r.last().path, "/hooks/abc/def");
  assert.deepEqual(r.json(), {
    alias: "Community catalogue",
    text: '🔴 Watched service "Backup" is off',
    attachments: [attachment],
  });
  for (const p of [BACK, REMINDER, EXPIRY]) await send(r.t, rc, p);
  const colors = r.got.slice(-3).map((g) => JSON.parse(g.body).attachments[0].color);
  assert.deepEqual(colors, ["#1a7f37", "#bc4c00", "#9a6700"]);
  await send(r.t, mm, GROUPED);
  assert.deepEqual((r.json() as { attachments: { fields: unknown[] }[] }).attachments[0].fields, [
    { short: false, title: "Backup", value: "🔴 Off: timed out" },
    { short: false, title: "NAS", value: "✅ Back: HTTP 200" },
    { short: true, title: "State", value: "🔴 Off" },
    { short: true, title: "At", value: AT },
  ]);
});

Deno.test("kinds: Zulip posts a form as its bot, the service's topic pairing off and back", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const ch = await addChannel(r.t, token, {
    name: "Zulip",
    kind: "zulip",
    site: "https://zulip.example.org",
    bot_email: "alerts-bot@zulip.example.org",
    api_key: "ZKEY123",
    stream: "ops",
  });
  await send(r.t, ch, OFF);
  const g = r.last();
  assert.equal(g.method, "POST");
  assert.equal(g.path, "/api/v1/messages");
  assert.equal(g.headers.get("content-type"), "application/x-www-form-urlencoded");
  assert.equal(
    g.headers.get("authorization"),
    `Basic ${btoa("alerts-bot@zulip.example.org:ZKEY123")}`,
  );
  assert.deepEqual(r.form(), {
    type: "stream",
    to: "ops",
    topic: "Backup",
    content: `🔴 **[Watched service "Backup" is off](${LINK})**\ntar: disk full \\<&\\>`,
  });
  await send(r.t, ch, BACK);
  assert.equal(r.form().topic, "Backup", "the same topic");
  assert.equal(r.form().content, `✅ **[Watched service "Backup" is back](${LINK})**\nok`);
  await send(r.t, ch, GROUPED);
  assert.deepEqual(r.form(), {
    type: "stream",
    to: "ops",
    topic: "LAN",
    content: "🔴 **[2 of 3 services at LAN changed](http://test.local/me/services)**\n" +
      "* 🔴 **Backup**: Off (timed out)\n* ✅ **NAS**: Back (HTTP 200)",
  });
  await send(r.t, ch, REMINDER);
  await send(r.t, ch, EXPIRY);
  assert.equal(r.form().topic, "Shop");
});

Deno.test("kinds: Matrix PUTs an m.notice per post id; the back replies to its off", () =>
  expectLog([
    /"msg":"channel delivery failed".*"kind":"matrix".*"reason":"wrong token or key \(HTTP 401\)/,
  ], async () => {
    await using r = await receiver();
    const { token } = await r.t.account("ops@example.org");
    const ch = await addChannel(r.t, token, {
      name: "Room",
      kind: "matrix",
      homeserver: "https://matrix.example.org",
      room: "!abc:example.org",
      access_token: "syt_secret",
    });
    r.answer = () => Response.json({ event_id: "$off-event" });
    await send(r.t, ch, OFF);
    const g = r.last();
    assert.equal(g.method, "PUT");
    assert.match(
      g.path,
      /^\/_matrix\/client\/v3\/rooms\/!abc%3Aexample\.org\/send\/m\.room\.message\/[\w-]+$/,
    );
    assert.equal(g.headers.get("authorization"), "Bearer syt_secret");
    assert.equal(g.headers.get("content-type"), "application/json");
    assert.deepEqual(r.json(), {
      msgtype: "m.notice",
      body: `🔴 Watched service "Backup" is off\ntar: disk full <&>\n${LINK}`,
      format: "org.matrix.custom.html",
      formatted_body: `🔴 <b><a href="${LINK}">Watched service &quot;Backup&quot; is off</a></b>` +
        "<br>tar: disk full &lt;&amp;&gt;",
      "m.mentions": {},
    });
    r.answer = () => Response.json({ event_id: "$back-event" });
    await send(r.t, ch, BACK);
    assert.deepEqual((r.json() as Record<string, unknown>)["m.relates_to"], {
      "m.in_reply_to": { event_id: "$off-event" },
    });
    assert.notEqual(r.last().path, g.path, "a transaction id per post");
    await send(r.t, ch, GROUPED);
    assert.equal(
      (r.json() as { body: string }).body,
      "🔴 2 of 3 services at LAN changed\nBackup: off (timed out)\nNAS: back (HTTP 200)\n" +
        "http://test.local/me/services",
    );
    r.answer = () => Response.json({ event_id: "$second-off" });
    await send(r.t, ch, OFF);
    await send(r.t, ch, REMINDER);
    assert.deepEqual(r.json(), {
      msgtype: "m.notice",
      body: `🔁 Watched service "Backup" is still off\ntar: disk full <&>\n${LINK}`,
      format: "org.matrix.custom.html",
      formatted_body: `🔁 <b><a href="${LINK}">Watched service &quot;Backup&quot; is still ` +
        "off</a></b><br>tar: disk full &lt;&amp;&gt;",
      "m.mentions": {},
      "m.relates_to": { "m.in_reply_to": { event_id: "$second-off" } },
    });
    await send(r.t, ch, EXPIRY);
    assert.match((r.json() as { body: string }).body, /^⚠️ Certificate of "Shop" expires soon/);
    // The homeserver's refusal in plain words.
    r.answer = () =>
      Response.json({ errcode: "M_UNKNOWN_TOKEN", error: "Invalid access token passed." }, {
        status: 401,
      });
    const test = await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.equal(test.body.status, "wrong token or key (HTTP 401: Invalid access token passed.)");
  }));

Deno.test("kinds: Gotify and Pushover say the priority by state", () =>
  expectLog([
    /"msg":"channel delivery failed".*"kind":"pushover".*"reason":"refused by the receiver \(HTTP 400\)/,
  ], async () => {
    await using r = await receiver();
    const { token } = await r.t.account("ops@example.org");
    const go = await addChannel(r.t, token, {
      name: "Gotify",
      kind: "gotify",
      url: "https://gotify.example.org",
      token: "AppTokenX",
    });
    await send(r.t, go, OFF);
    assert.equal(r.last().method, "POST");
    assert.equal(r.last().path, "/message");
    assert.equal(r.last().headers.get("x-gotify-key"), "AppTokenX");
    assert.deepEqual(r.json(), {
      title: '🔴 Watched service "Backup" is off',
      message: `tar: disk full <&>\n${LINK}`,
      priority: 8,
      extras: {
        "client::display": { contentType: "text/plain" },
        "client::notification": { click: { url: LINK } },
      },
    });
    for (const p of [BACK, REMINDER, EXPIRY, GROUPED]) await send(r.t, go, p);
    assert.deepEqual(r.got.slice(-4).map((g) => JSON.parse(g.body).priority), [5, 8, 5, 8]);

    const po = await addChannel(r.t, token, {
      name: "Pushover",
      kind: "pushover",
      user_key: PO_USER,
      app_token: PO_APP,
    });
    r.answer = () => Response.json({ status: 1, request: "abc" });
    await send(r.t, po, OFF);
    assert.equal(r.last().host, "api.pushover.net");
    assert.equal(r.last().path, "/1/messages.json");
    assert.equal(r.last().headers.get("content-type"), "application/x-www-form-urlencoded");
    assert.deepEqual(r.form(), {
      token: PO_APP,
      user: PO_USER,
      title: '🔴 Watched service "Backup" is off',
      message: `🔴 <b><a href="${LINK}">Watched service &quot;Backup&quot; is off</a></b>\n` +
        "tar: disk full &lt;&amp;&gt;",
      html: "1",
      priority: "1",
      url: LINK,
      url_title: "Open the service",
      timestamp: String(Date.parse(AT) / 1000),
    });
    for (const p of [BACK, REMINDER, EXPIRY, GROUPED]) await send(r.t, po, p);
    assert.deepEqual(
      r.got.slice(-4).map((g) => new URLSearchParams(g.body).get("priority")),
      ["0", "1", "0", "1"],
    );
    r.answer = () =>
      Response.json({
        user: "invalid",
        errors: ["user identifier is not a valid user, group, or subscribed user key"],
        status: 0,
      }, { status: 400 });
    const test = await r.t.req("POST", `/api/me/channels/${po.id}/test`, { token });
    assert.equal(
      test.body.status,
      "refused by the receiver (HTTP 400: user identifier is not a valid user, group, or " +
        "subscribed user key)",
    );
  }));

Deno.test("kinds: Opsgenie creates on off and closes the same alias on back", () =>
  expectLog([
    /"msg":"channel delivery failed".*"kind":"opsgenie".*"reason":"refused by the receiver \(HTTP 422\)/,
  ], async () => {
    await using r = await receiver();
    const { token } = await r.t.account("ops@example.org");
    const ch = await addChannel(r.t, token, {
      name: "Genie",
      kind: "opsgenie",
      api_key: OG_KEY,
      region: "eu",
    });
    r.answer = () =>
      Response.json({ result: "Request will be processed", took: 0.1, requestId: "x" }, {
        status: 202,
      });
    await send(r.t, ch, OFF);
    const g = r.last();
    assert.equal(g.method, "POST");
    assert.equal(g.host, "api.eu.opsgenie.com");
    assert.equal(g.path, "/v2/alerts");
    assert.equal(g.headers.get("authorization"), `GenieKey ${OG_KEY}`);
    assert.equal(g.headers.get("content-type"), "application/json");
    const off = r.json() as { alias: string };
    assert.match(off.alias, /^service-7-/);
    assert.deepEqual(off, {
      message: 'Watched service "Backup" is off',
      alias: off.alias,
      description: `tar: disk full <&>\n${LINK}`,
      priority: "P1",
      source: "Community catalogue",
      entity: "Backup",
      tags: ["off"],
      details: { state: "Off", service: "Backup", kind: "webhook", link: LINK },
    });
    await send(r.t, ch, REMINDER);
    assert.equal((r.json() as { alias: string }).alias, off.alias);
    await send(r.t, ch, BACK);
    assert.equal(r.last().path, `/v2/alerts/${off.alias}/close?identifierType=alias`);
    assert.deepEqual(r.json(), { source: "Community catalogue", note: "The service is back." });
    await send(r.t, ch, EXPIRY);
    const exp = r.json() as { alias: string; priority: string };
    assert.deepEqual([exp.alias, exp.priority], ["certificate-8", "P3"]);
    await send(r.t, ch, GROUPED);
    assert.equal(r.last(-2).path, "/v2/alerts");
    assert.equal(r.last().path, "/v2/alerts/service-9/close?identifierType=alias");
    r.answer = () =>
      Response.json({ message: "Key format is not valid!", took: 0 }, { status: 422 });
    const test = await r.t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
    assert.equal(test.body.status, "refused by the receiver (HTTP 422: Key format is not valid!)");
  }));

Deno.test("kinds: a webhook's body template, signed; secrets sealed, set in the export, erased", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const made = await r.t.req("POST", "/api/me/channels", {
    token,
    body: {
      name: "Custom",
      kind: "webhook",
      url: "https://hooks.example.org/in?key=HOOKSECRET",
      template: '{"msg": "$NAME is $STATE: $STATUS", "at": "$AT", "link": "$LINK"}',
    },
  });
  assert.equal(made.status, 200, made.text);
  const secret: string = made.body.secret;
  const { getChannel } = await import("../kv/alerts/channels.ts");
  const me = (await r.t.req("GET", "/api/me", { token })).body;
  const ch = (await getChannel(r.t.kv, me.id, made.body.item.id))!;
  await send(r.t, ch, { ...OFF, service: { ...OFF.service!, name: 'Back"up' } });
  const g = r.last();
  assert.equal(g.path, "/in?key=HOOKSECRET");
  assert.equal(g.headers.get("content-type"), "application/json");
  assert.equal(g.headers.get("x-signature-256"), signature(secret, g.body));
  assert.ok(g.headers.get("x-webhook-id"));
  assert.deepEqual(r.json(), {
    msg: 'Back"up is Off: tar: disk full <&>',
    at: AT,
    link: LINK,
  });
  // Nothing secret is in KV in the clear, nor in the export.
  const dump = await dumpKv(r.t.kv);
  for (const s of ["HOOKSECRET", secret]) assert.ok(!dump.includes(s), s);
  const exported = await r.t.req("GET", "/api/me/export", { token });
  assert.ok(!exported.text.includes("HOOKSECRET") && !exported.text.includes(secret));
  assert.match(exported.text, /"secrets":\{"url":"set"\}/);
  // An erasure removes the channel and its open outages.
  const pd = await r.t.req("POST", "/api/me/channels", {
    token,
    body: { name: "PD", kind: "pagerduty", routing_key: "R0UT1NGKEY0123456789abcdefghijkl" },
  });
  const pdCh = (await getChannel(r.t.kv, me.id, pd.body.item.id))!;
  await send(r.t, pdCh, OFF);
  assert.ok((await dumpKv(r.t.kv)).includes('["channel_incidents"'));
  const { eraseChannels } = await import("../kv/alerts/channels.ts");
  await eraseChannels(r.t.deps, me.id);
  const after = await dumpKv(r.t.kv);
  assert.ok(!after.includes('["channel_incidents"') && !after.includes('["channels",'));
});

Deno.test("kinds: a self-hosted ntfy on a network the server names; other private addresses refused", async () => {
  await using r = await receiver(
    { channelNetworks: [{ bytes: new Uint8Array([192, 168, 7, 0]), prefix: 24, text: "" }] },
    { "ntfy.lan": ["192.168.7.20"], "hooks.example.org": ["192.168.7.21"] },
  );
  const { token } = await r.t.account("ops@example.org");
  const ntfy = await r.t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Home", kind: "ntfy", url: "https://ntfy.lan/alerts" },
  });
  assert.equal(ntfy.status, 200, ntfy.text);
  // An optional secret left empty is not said to be set.
  assert.deepEqual(ntfy.body.item.secrets, { url: "set" });
  const guarded = await r.t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Guarded", kind: "ntfy", url: "https://ntfy.lan/ops", token: "tk_0123456789" },
  });
  assert.deepEqual(guarded.body.item.secrets, { url: "set", token: "set" });
  // The same network is no place for a kind that is not self-hosted.
  const hook = await r.t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Hook", kind: "slack", url: "https://hooks.example.org/x" },
  });
  assert.equal(hook.status, 400);
  assert.equal(hook.body.field, "url");
  assert.match(hook.body.error, /private address/);
  const test = await r.t.req("POST", `/api/me/channels/${ntfy.body.item.id}/test`, { token });
  assert.equal(test.body.delivered, true, test.text);
  assert.equal(r.last().host, "ntfy.lan");
  // Without the setting, the same address is refused.
  await using plain = await receiver({}, { "ntfy.lan": ["192.168.7.20"] });
  const other = await plain.t.account("x@example.org");
  const refused = await plain.t.req("POST", "/api/me/channels", {
    token: other.token,
    body: { name: "Home", kind: "ntfy", url: "https://ntfy.lan/alerts" },
  });
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /^url: the target is a private address/);
});

Deno.test("kinds: a plain webhook over http on a network the server names, https elsewhere", async () => {
  const lan = { bytes: new Uint8Array([192, 168, 7, 0]), prefix: 24, text: "" };
  const table = { "ha.lan": ["192.168.7.30"], "hooks.test": ["93.184.216.34"] };
  await using r = await receiver({ channelNetworks: [lan] }, table);
  const { token } = await r.t.account("ops@example.org");
  const add = (url: string) =>
    r.t.req("POST", "/api/me/channels", { token, body: { name: "Home", url } });
  const home = await add("http://ha.lan:8123/api/webhook/alerts");
  assert.equal(home.status, 200, home.text);
  assert.equal(home.body.item.url_hint, "http://ha.lan:8123");
  // Plain http on the internet would carry the signature and the alert in the clear.
  const open = await add("http://hooks.test/in");
  assert.equal(open.status, 400);
  assert.equal(open.body.field, "url");
  assert.match(open.body.error, /^url: http is only for a server on a network .*use https$/);
  // Without the setting, the LAN address is refused either way.
  await using plain = await receiver({}, table);
  const other = await plain.t.account("x@example.org");
  const refused = await plain.t.req("POST", "/api/me/channels", {
    token: other.token,
    body: { name: "Home", url: "http://ha.lan:8123/api/webhook/alerts" },
  });
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /^url: http is only for a server on a network/);
});

Deno.test("kinds: Apprise URLs stand for a kind and its fields", async () => {
  const cases: [string, ReturnType<typeof fromApprise>][] = [
    [
      "tgram://123456789:AAE-Token_x/-1001234567890",
      {
        kind: "telegram",
        fields: { bot_token: "123456789:AAE-Token_x", chat_id: "-1001234567890" },
      },
    ],
    [
      "discord://1234/AbC-tok",
      { kind: "discord", fields: { url: "https://discord.com/api/webhooks/1234/AbC-tok" } },
    ],
    [
      "slack://T1ABC/B2DEF/XyZ123",
      { kind: "slack", fields: { url: "https://hooks.slack.com/services/T1ABC/B2DEF/XyZ123" } },
    ],
    [
      "gchat://AAAA/KeY/ToK",
      {
        kind: "google_chat",
        fields: { url: "https://chat.googleapis.com/v1/spaces/AAAA/messages?key=KeY&token=ToK" },
      },
    ],
    ["mmosts://chat.example.org/Tok3n", {
      kind: "mattermost",
      fields: { url: "https://chat.example.org/hooks/Tok3n" },
    }],
    ["ntfy://my-topic", { kind: "ntfy", fields: { url: "https://ntfy.sh/my-topic" } }],
    ["ntfys://tk_AbC@ntfy.example.org/alerts", {
      kind: "ntfy",
      fields: { url: "https://ntfy.example.org/alerts", token: "tk_AbC" },
    }],
    ["gotifys://gotify.example.org/AppTok", {
      kind: "gotify",
      fields: { url: "https://gotify.example.org", token: "AppTok" },
    }],
    ["matrixs://syt_Tok@matrix.example.org/!room:example.org", {
      kind: "matrix",
      fields: {
        homeserver: "https://matrix.example.org",
        room: "!room:example.org",
        access_token: "syt_Tok",
      },
    }],
    [`pover://${PO_USER}@${PO_APP}/phone`, {
      kind: "pushover",
      fields: { user_key: PO_USER, app_token: PO_APP, device: "phone" },
    }],
    ["pagerduty://R0UT1NGKEY0123456789abcdefghijkl@apikey?region=eu", {
      kind: "pagerduty",
      fields: { routing_key: "R0UT1NGKEY0123456789abcdefghijkl", region: "eu" },
    }],
    [`opsgenie://${OG_KEY}`, { kind: "opsgenie", fields: { api_key: OG_KEY } }],
    ["jsons://hooks.example.org/in?x=1", {
      kind: "webhook",
      fields: { url: "https://hooks.example.org/in?x=1" },
    }],
  ];
  for (const [url, want] of cases) assert.deepEqual(fromApprise(url), want, url);
  assert.match((fromApprise("mailto://x@example.org") as { error: string }).error, /^mailto:\/\//);
  assert.match((fromApprise("not a url") as { error: string }).error, /not an Apprise URL/);

  // Through the API: the channel it stands for, its errors said of the URL.
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const bad = await r.t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Phone", apprise: "tgram://nope/42" },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "apprise");
  assert.match(bad.body.error, /^apprise: bot_token: must look like/);
  const made = await r.t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Phone", apprise: "tgram://123456789:AAE-test_token_abcdefghijklmnop/42" },
  });
  assert.equal(made.status, 200, made.text);
  assert.equal(made.body.item.kind, "telegram");
  assert.deepEqual(made.body.item.settings, { chat_id: "42" });
  const test = await r.t.req("POST", `/api/me/channels/${made.body.item.id}/test`, { token });
  assert.equal(test.body.delivered, true);
  assert.equal(r.last().path, "/bot123456789:AAE-test_token_abcdefghijklmnop/sendMessage");
});
