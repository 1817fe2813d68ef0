/**
 * A person's words in every channel kind's message, checked against the provider's own rules:
 * a service named with `<!channel>`, `@all`, Markdown, HTML, `&`, quotes and a line break, its
 * status and its group likewise, sent off, back, still off and grouped to each kind's receiver
 * (tests/_channels.ts). No text may mention everyone, format, or break the message: Slack's
 * control characters are entities and a person's words sit in `plain_text`; Markdown kinds
 * escape every markup character; Mattermost's, Rocket.Chat's and Zulip's `@` mention nobody;
 * HTML kinds (Telegram's parse_mode, Matrix's formatted_body, Pushover's html=1, Google Chat's
 * cards) hold only their own tags; plain-text kinds carry the words as they are.
 */
import assert from "node:assert/strict";
import type { AlertPayload } from "../kv/alerts/channels.ts";
import { addChannel, AT, type Got, receiver, send } from "./_channels.ts";

const NAME = `<!channel> *Backup* _db_ <b>x</b> & "q" 'q'\nnext @all`;
const NAME_LINE = NAME.replace("\n", " ");
const STATUS = `<@here> **x** & <i>y</i> "q"\n- item @everyone`;
const GROUP = "LAN <users/all> *x*";

const titled = (event: "off" | "back" | "reminder", words: string): AlertPayload => ({
  event,
  title: `Watched service "${NAME}" ${words}`,
  text: STATUS,
  service: {
    id: 7,
    name: NAME,
    kind: "webhook",
    state: event === "back" ? "ok" : "off",
    status: STATUS,
  },
  at: AT,
  link: "http://test.local/me/services/7",
});

const PAYLOADS: AlertPayload[] = [
  titled("off", "is off"),
  titled("back", "is back"),
  titled("reminder", "is still off"),
  {
    event: "off",
    title: `2 of 3 services at ${GROUP} changed`,
    text: `${NAME}: off (${STATUS})`,
    service: null,
    services: [
      { id: 7, name: NAME, kind: "webhook", state: "off", status: STATUS },
      { id: 9, name: "NAS & <co>", kind: "url", state: "ok", status: "HTTP 200 _ok_" },
    ],
    group: { name: GROUP, total: 3 },
    at: AT,
    link: "http://test.local/me/services",
  },
];

/** Every string anywhere in a JSON value, with the path of keys that leads to it. */
function strings(v: unknown, path = ""): { path: string; text: string }[] {
  if (typeof v === "string") return [{ path, text: v }];
  if (Array.isArray(v)) return v.flatMap((x, i) => strings(x, `${path}[${i}]`));
  if (v && typeof v === "object") {
    return Object.entries(v).flatMap(([k, x]) => strings(x, path ? `${path}.${k}` : k));
  }
  return [];
}

/** No name arrives with its line break (a name is one line everywhere people read it). */
function namesOnOneLine(all: { path: string; text: string }[]) {
  for (const s of all) assert.ok(!s.text.includes("'q'\nnext"), `a name broke a line at ${s.path}`);
}

/** A Markdown character a person typed, not escaped with a backslash. */
const UNESCAPED_MD = /(?<!\\)[*_~`|<>\[\]#]/;

/** Only these tags, and `&` only in the entities each HTML kind reads. */
function onlyTags(text: string, where: string, tags: RegExp) {
  const bare = text.replace(tags, "");
  assert.doesNotMatch(bare, /[<>]/, `a raw < or > at ${where}: ${text}`);
  assert.doesNotMatch(bare, /&(?!amp;|lt;|gt;|quot;)/, `a raw & at ${where}: ${text}`);
}

const OUR_TAGS = /<\/?b>|<a href="[^"<>]*">|<\/a>|<br>/g;

const KINDS: {
  kind: string;
  fields: Record<string, string>;
  check: (g: Got, body: unknown) => void;
}[] = [
  {
    kind: "slack",
    fields: { url: "https://hooks.slack.com/services/T000/B000/XXXX" },
    check: (_g, body) => {
      const b = body as { mrkdwn: boolean };
      assert.equal(b.mrkdwn, false, "the top-level text is not read as mrkdwn");
      const all = strings(body);
      for (const s of all) {
        if (s.path.endsWith(".url") || s.path === "attachments[0].color") continue;
        // &, < and > are Slack's control characters: always entities.
        assert.doesNotMatch(s.text, /[<>]/, `a raw < or > at ${s.path}`);
        assert.doesNotMatch(s.text, /&(?!amp;|lt;|gt;)/, `a raw & at ${s.path}`);
      }
      // A person's words only in plain_text objects: mrkdwn ones hold our own words.
      const mrkdwn = JSON.stringify(body).match(/\{"type":"mrkdwn","text":"[^"]*"\}/g) ?? [];
      assert.ok(mrkdwn.length > 0);
      for (const m of mrkdwn) assert.doesNotMatch(m, /Backup|NAS|LAN|item/);
      assert.ok(all.some((s) => s.text.includes("&lt;!channel&gt; *Backup*")));
      namesOnOneLine(all);
    },
  },
  {
    kind: "discord",
    fields: { url: "https://discord.com/api/webhooks/123/tok-en" },
    check: (_g, body) => {
      const b = body as {
        content: string;
        embeds: {
          title: string;
          description?: string;
          fields: { name: string; value: string }[];
        }[];
        allowed_mentions: unknown;
      };
      assert.deepEqual(b.allowed_mentions, { parse: [] }, "no mention pings anyone");
      const texts = [
        b.content,
        b.embeds[0].title,
        b.embeds[0].description ?? "",
        ...b.embeds[0].fields.flatMap((f) => [f.name, f.value]),
      ];
      for (const t of texts) assert.doesNotMatch(t, UNESCAPED_MD, t);
      assert.ok(texts.some((t) => t.includes("\\<\\!channel\\> \\*Backup\\* \\_db\\_")));
      namesOnOneLine(strings(body));
    },
  },
  {
    kind: "teams",
    fields: {
      url:
        "https://prod.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?sig=S",
    },
    check: (_g, body) => {
      const card = (body as {
        attachments: {
          content: {
            body: { type: string; text?: string; facts?: { title: string; value: string }[] }[];
          };
        }[];
      }).attachments[0].content;
      const texts = card.body.flatMap((b) =>
        b.type === "TextBlock"
          ? [b.text!]
          : (b.facts ?? []).filter((f) => f.title !== "At").flatMap((f) => [f.title, f.value])
      );
      for (const t of texts) assert.doesNotMatch(t, UNESCAPED_MD, t);
      assert.ok(texts.some((t) => t.includes("\\<\\!channel\\> \\*Backup\\*")));
      namesOnOneLine(strings(body));
    },
  },
  {
    kind: "google_chat",
    fields: { url: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=K&token=T" },
    check: (_g, body) => {
      const b = body as Record<string, unknown>;
      // The top-level text reads Chat syntax (<users/all>, *bold*), which has no escape.
      assert.equal(b.text, undefined);
      assert.equal(typeof b.fallbackText, "string");
      const all = strings(body);
      const html = all.filter((s) => /(decoratedText|textParagraph)\.text$/.test(s.path));
      assert.ok(html.length > 0);
      for (const s of html) onlyTags(s.text, s.path, OUR_TAGS);
      assert.ok(
        html.some((s) => s.text.includes("&lt;!channel&gt;") || s.text.includes("&lt;@here&gt;")),
      );
      namesOnOneLine(all);
    },
  },
  ...["mattermost", "rocket_chat"].map((kind) => ({
    kind,
    fields: { url: "https://chat.example.org/hooks/xyz" },
    check: (_g: Got, body: unknown) => {
      const all = strings(body);
      for (const s of all) {
        if (/title_link|color|url/.test(s.path)) continue;
        assert.doesNotMatch(s.text, /@[\p{L}*]/u, `a mention at ${s.path}: ${s.text}`);
      }
      const b = body as {
        text: string;
        attachments: { text: string; fields: { title: string; value: string }[] }[];
      };
      const md = [
        b.text,
        b.attachments[0].text,
        ...b.attachments[0].fields.filter((f) => f.title !== "At").map((f) => f.value),
      ];
      for (const t of md) assert.doesNotMatch(t, UNESCAPED_MD, t);
      namesOnOneLine(all);
    },
  })),
  {
    kind: "zulip",
    fields: {
      site: "https://zulip.example.org",
      bot_email: "bot@zulip.example.org",
      api_key: "ZKEY",
      stream: "ops",
    },
    check: (g) => {
      const form = Object.fromEntries(new URLSearchParams(g.body));
      // Our own bold and the link's brackets aside, every markup character is escaped.
      const ours = form.content
        .replace(/^(\S+) \*\*\[/, "$1 ")
        .replace(/\]\(http:\/\/test\.local[^)]*\)\*\*$/m, "")
        .replace(/^\* (\S+) \*\*(.*?)\*\*:/gm, "$1 $2:");
      assert.doesNotMatch(ours, UNESCAPED_MD, form.content);
      assert.doesNotMatch(form.content, /@[\p{L}*]/u, "no @**all** or @name mentions");
      assert.ok(form.content.includes("\\<\\!channel\\> \\*Backup\\*"));
      assert.ok(!form.topic.includes("\n"));
      namesOnOneLine([{ path: "content", text: form.content }]);
    },
  },
  {
    kind: "telegram",
    fields: { bot_token: "123456789:AAE-test_token_abcdefghijklmnop", chat_id: "-100123" },
    check: (_g, body) => {
      const b = body as { text: string; parse_mode: string };
      assert.equal(b.parse_mode, "HTML");
      onlyTags(b.text, "text", OUR_TAGS);
      assert.ok(b.text.includes("&lt;!channel&gt; *Backup* _db_ &lt;b&gt;x&lt;/b&gt; &amp;"));
      namesOnOneLine(strings(body));
    },
  },
  {
    kind: "matrix",
    fields: {
      homeserver: "https://matrix.example.org",
      room: "!abc:example.org",
      access_token: "syt_x",
    },
    check: (_g, body) => {
      const b = body as { formatted_body: string; body: string; "m.mentions": unknown };
      // Intentional mentions: nobody, so "@room" or a name in the body notifies no one.
      assert.deepEqual(b["m.mentions"], {});
      onlyTags(b.formatted_body, "formatted_body", OUR_TAGS);
      assert.ok(b.body.includes(NAME_LINE), "the plain body carries the words as they are");
      namesOnOneLine(strings(body));
    },
  },
  {
    kind: "pushover",
    fields: {
      user_key: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
      app_token: "azGDORePK8gMaC0QOYAMyEEuzJnyUi",
    },
    check: (g) => {
      const form = Object.fromEntries(new URLSearchParams(g.body));
      assert.equal(form.html, "1");
      onlyTags(form.message, "message", OUR_TAGS);
      assert.ok(!form.title.includes("\n"));
    },
  },
  ...([
    { kind: "ntfy", fields: { url: "https://ntfy.sh/backup-alerts-x1" }, key: "title" },
    { kind: "gotify", fields: { url: "https://gotify.example.org", token: "T" }, key: "title" },
  ] as { kind: string; fields: Record<string, string>; key: string }[]).map((
    { kind, fields, key },
  ) => ({
    kind,
    fields,
    check: (_g: Got, body: unknown) => {
      // Plain text: the words as they are, the name on one line.
      const b = body as Record<string, string>;
      assert.ok(b[key].includes(NAME_LINE) || b[key].includes(GROUP), b[key]);
      namesOnOneLine(strings(body));
    },
  })),
  ...([
    { kind: "pagerduty", fields: { routing_key: "R0UT1NGKEY0123456789abcdefghijkl" } },
    { kind: "opsgenie", fields: { api_key: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0" } },
  ] as { kind: string; fields: Record<string, string> }[]).map(({ kind, fields }) => ({
    kind,
    fields,
    check: (_g: Got, body: unknown) => {
      const all = strings(body);
      // A resolve or a close carries no words; a trigger or a create carries them as they are.
      const words = all.filter((s) => /^(message|payload\.summary|payload\.source)$/.test(s.path));
      if (words.length) {
        assert.ok(words.some((s) => s.text.includes("<!channel> *Backup* _db_")), "plain words");
      }
      namesOnOneLine(all);
    },
  })),
  {
    kind: "webhook",
    fields: { url: "https://hooks.example.org/alerts" },
    check: (_g, body) => {
      // JSON for programs: every name exactly as it was given, line break included.
      const b = body as { service: { name: string } | null; services?: { name: string }[] };
      assert.equal(b.service?.name ?? b.services![0].name, NAME);
    },
  },
];

Deno.test("escapes: every kind carries names, statuses and groups by its provider's rules", async (t) => {
  await using r = await receiver();
  r.answer = (g) =>
    g.host === "api.telegram.org"
      ? Response.json({ ok: true, result: { message_id: 5 } })
      : g.host === "matrix.example.org"
      ? Response.json({ event_id: "$e" })
      : g.host.includes("opsgenie") || g.host.includes("pagerduty")
      ? Response.json({ status: "success" }, { status: 202 })
      : Response.json({ ok: true });
  for (const k of KINDS) {
    await t.step(k.kind, async () => {
      // An account each: an account holds at most 10 channels.
      const { token } = await r.t.account(`${k.kind}@example.org`);
      const ch = await addChannel(r.t, token, { name: k.kind, kind: k.kind, ...k.fields });
      for (const p of PAYLOADS) {
        const before = r.got.length;
        const sent = await send(r.t, ch, p);
        assert.equal(sent.ok, true, `${p.event}: ${JSON.stringify(sent)}`);
        for (const g of r.got.slice(before)) {
          const body = g.headers.get("content-type")?.includes("json") ? JSON.parse(g.body) : null;
          k.check(g, body);
        }
      }
    });
  }
});
