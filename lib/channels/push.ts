/**
 * Kinds that reach a person's phone through a bot or a push service: Telegram, Matrix, ntfy,
 * Gotify and Pushover. Each says the state by icon and word, and its priority by state where
 * the service has one (ntfy, Gotify, Pushover). Telegram and Matrix answer the message's id,
 * so an outage's later alerts reply to its first one.
 */
import {
  type AlertMessage,
  answerJson,
  bodyText,
  clip,
  eventOf,
  form,
  headline,
  html,
  ICON,
  joinUrl,
  jsonPost,
  type KindSpec,
  linesOf,
  type OutRequest,
  WORD,
} from "./_format.ts";

const origin = (url: string) => URL.canParse(url) ? new URL(url).origin : "";

/**
 * The alert as HTML: headline in bold, linked; the reason or each service on its own line.
 * At most `max` characters, cut between lines and inside a text before it is escaped, never
 * through a tag or an entity (Telegram refuses a message whose HTML does not parse).
 */
function htmlText(a: AlertMessage, max: number): string {
  const lines = a.services
    ? linesOf(a).map((s) =>
      `${ICON[eventOf(a, s)]} <b>${html(clip(s.name, 100))}</b>: ${WORD[eventOf(a, s)]} (${
        html(clip(s.status, 300))
      })`
    )
    : [html(clip(a.text, Math.floor(max / 2)))];
  let out = `${ICON[a.event]} <b><a href="${html(a.link)}">${html(clip(a.title, 200))}</a></b>`;
  for (const line of lines) {
    if (out.length + line.length + 3 > max) return `${out}\n…`;
    out += `\n${line}`;
  }
  return out;
}

const plainText = (a: AlertMessage) => `${headline(a)}\n${bodyText(a)}\n${a.link}`;

/** Telegram: sendMessage with HTML (escaped), no link preview, a reply to the outage's first. */
export const telegram: KindSpec = {
  kind: "telegram",
  label: "Telegram",
  about: "A message from your bot in a Telegram chat, group or channel.",
  fields: [
    {
      name: "bot_token",
      label: "Bot token",
      help: "Talk to @BotFather in Telegram, send /newbot and follow the steps; it answers the " +
        "token (123456789:AA...). Then add the bot to your group or channel.",
      secret: true,
      type: "text",
      max: 100,
      check: (v) =>
        /^\d{3,15}:[A-Za-z0-9_-]{20,80}$/.test(v)
          ? null
          : "must look like 123456789:AA... as @BotFather gives it",
    },
    {
      name: "chat_id",
      label: "Chat id",
      help: "A number (-100... for groups and channels) or @channelname. Send a message to the " +
        "bot, then open https://api.telegram.org/bot<token>/getUpdates and read chat.id.",
      type: "text",
      max: 64,
      check: (v) =>
        /^(-?\d{1,20}|@[A-Za-z0-9_]{5,32})$/.test(v) ? null : "must be a number or @channelname",
    },
    {
      name: "topic_id",
      label: "Topic id",
      help: "Only in a group with topics: the topic's number (in its link, after the last /).",
      optional: true,
      type: "text",
      max: 20,
      check: (v) => /^\d{1,20}$/.test(v) ? null : "must be a number",
    },
  ],
  hint: (v) => `chat ${v.chat_id}`,
  format: (a, v, ctx) => {
    const reply = a.services ? undefined : ctx.ref(a.service?.id ?? null);
    return [jsonPost(`${ctx.origin("telegram")}/bot${v.bot_token}/sendMessage`, {
      chat_id: /^-?\d+$/.test(v.chat_id) ? Number(v.chat_id) : v.chat_id,
      ...(v.topic_id ? { message_thread_id: Number(v.topic_id) } : {}),
      text: htmlText(a, 4000),
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
      ...(reply && a.event !== "off"
        ? { reply_parameters: { message_id: Number(reply), allow_sending_without_reply: true } }
        : {}),
    })];
  },
  refOf: (body) => {
    const id = (answerJson(body)?.result as { message_id?: unknown } | undefined)?.message_id;
    return typeof id === "number" ? String(id) : undefined;
  },
};

/** Matrix: PUT of an m.notice with its txnId from the post (a retry is the same event). */
export const matrix: KindSpec = {
  kind: "matrix",
  label: "Matrix",
  about: "A notice in a Matrix room, sent by an account of your own; a back replies to its off.",
  fields: [
    {
      name: "homeserver",
      label: "Homeserver address",
      help: "The address of the account's homeserver, as https://matrix.org.",
      type: "url",
      max: 500,
    },
    {
      name: "room",
      label: "Room id",
      help: "The room's internal id (!abc...:example.org): in Element, the room's Settings, " +
        "Advanced. Invite the account to the room first.",
      type: "text",
      max: 255,
      check: (v) => /^![^\s:]+:\S+$/.test(v) ? null : "must be a room id such as !abc:example.org",
    },
    {
      name: "access_token",
      label: "Access token",
      help: "Of a separate account for alerts: in Element, Settings, Help & About, Access Token.",
      secret: true,
      type: "text",
      max: 500,
    },
  ],
  target: "homeserver",
  hint: (v) => `${v.room} on ${origin(v.homeserver)}`,
  selfHosted: true,
  format: (a, v, ctx) => {
    const reply = a.services || a.event === "off" ? undefined : ctx.ref(a.service?.id ?? null);
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(v.room)}/send/m.room.message/` +
      encodeURIComponent(ctx.id);
    const req: OutRequest = {
      ...jsonPost(joinUrl(v.homeserver, path), {
        msgtype: "m.notice",
        body: plainText(a),
        format: "org.matrix.custom.html",
        formatted_body: htmlText(a, 30000).replace(/\n/g, "<br>"),
        // Intentional mentions (Matrix 1.7): an event with `m.mentions` mentions only whom it
        // names, here nobody, so "@room" in a service's name notifies no one.
        "m.mentions": {},
        ...(reply ? { "m.relates_to": { "m.in_reply_to": { event_id: reply } } } : {}),
      }, { Authorization: `Bearer ${v.access_token}` }),
      method: "PUT",
    };
    return [req];
  },
  refOf: (body) => {
    const id = answerJson(body)?.event_id;
    return typeof id === "string" ? id : undefined;
  },
};

const NTFY_PRIORITY = { off: 5, reminder: 4, expiry: 4, back: 3, test: 3 } as const;
const NTFY_TAGS = {
  off: ["red_circle"],
  back: ["green_circle"],
  reminder: ["red_circle", "repeat"],
  expiry: ["warning"],
  test: ["bell"],
} as const;

/** ntfy: JSON publishing to the server's root with the topic in the body. */
export const ntfy: KindSpec = {
  kind: "ntfy",
  label: "ntfy",
  about: "A push notification through ntfy.sh or your own ntfy server, urgent when off.",
  fields: [
    {
      name: "url",
      label: "Topic address",
      help: "The server and topic, as https://ntfy.sh/my-long-secret-topic. Subscribe to the " +
        "same topic in the ntfy app.",
      secret: true,
      type: "url",
      max: 500,
      check: (v) =>
        URL.canParse(v) && /^\/(?:[^/]+\/)*[\w-]{1,64}$/.test(new URL(v).pathname)
          ? null
          : "must end with the topic's name, as https://ntfy.sh/my-topic",
    },
    {
      name: "token",
      label: "Access token",
      help: "Only for a protected topic: an access token (tk_...) from the server's account " +
        "page. Leave empty for a public topic.",
      secret: true,
      optional: true,
      type: "text",
      max: 200,
    },
  ],
  target: "url",
  hint: (v) => origin(v.url),
  selfHosted: true,
  format: (a, v) => {
    const u = new URL(v.url);
    const parts = u.pathname.split("/");
    const topic = parts.pop()!;
    return [jsonPost(`${u.origin}${parts.join("/") || "/"}`, {
      topic,
      title: clip(a.title, 250),
      message: clip(bodyText(a), 4000),
      priority: NTFY_PRIORITY[a.event],
      tags: NTFY_TAGS[a.event],
      click: a.link,
      actions: [{ action: "view", label: "Open the service", url: a.link }],
    }, v.token ? { Authorization: `Bearer ${v.token}` } : {})];
  },
};

const GOTIFY_PRIORITY = { off: 8, reminder: 8, expiry: 5, back: 5, test: 5 } as const;

export const gotify: KindSpec = {
  kind: "gotify",
  label: "Gotify",
  about: "A message on your Gotify server, high priority when off.",
  fields: [
    {
      name: "url",
      label: "Gotify address",
      help: "Your Gotify server, as https://gotify.example.org.",
      type: "url",
      max: 500,
    },
    {
      name: "token",
      label: "Application token",
      help: "In Gotify: Apps, Create Application; copy its token.",
      secret: true,
      type: "text",
      max: 200,
    },
  ],
  target: "url",
  hint: (v) => origin(v.url),
  selfHosted: true,
  format: (a, v) => [jsonPost(joinUrl(v.url, "/message"), {
    title: `${headlineIcon(a)}${a.title}`,
    message: `${bodyText(a)}\n${a.link}`,
    priority: GOTIFY_PRIORITY[a.event],
    extras: {
      "client::display": { contentType: "text/plain" },
      "client::notification": { click: { url: a.link } },
    },
  }, { "X-Gotify-Key": v.token })],
};

const headlineIcon = (a: AlertMessage) => `${ICON[a.event]} `;

/** Pushover: priority 1 (high) when off and while still off, 0 otherwise. */
const PUSHOVER_PRIORITY = { off: "1", reminder: "1", expiry: "0", back: "0", test: "0" } as const;

export const pushover: KindSpec = {
  kind: "pushover",
  label: "Pushover",
  about: "A Pushover notification to your devices, high priority when off.",
  fields: [
    {
      name: "user_key",
      label: "User key",
      help: "On pushover.net, signed in: Your User Key, at the top of the page.",
      secret: true,
      type: "text",
      max: 40,
      check: (v) =>
        /^[A-Za-z0-9]{30}$/.test(v) ? null : "must be the 30 letters and digits of your user key",
    },
    {
      name: "app_token",
      label: "Application token",
      help: "On pushover.net: Your Applications, Create an Application/API Token; its API Token.",
      secret: true,
      type: "text",
      max: 40,
      check: (v) =>
        /^[A-Za-z0-9]{30}$/.test(v) ? null : "must be the 30 letters and digits of the API token",
    },
    {
      name: "device",
      label: "Device",
      help: "Leave empty for all your devices, or name one.",
      optional: true,
      type: "text",
      max: 25,
      check: (v) =>
        /^[A-Za-z0-9_-]{1,25}$/.test(v) ? null : "must be a device name (letters, digits, _ and -)",
    },
  ],
  hint: (v) => v.device ? `Pushover (${v.device})` : "Pushover",
  format: (a, v, ctx) => [form(`${ctx.origin("pushover")}/1/messages.json`, {
    token: v.app_token,
    user: v.user_key,
    ...(v.device ? { device: v.device } : {}),
    title: clip(`${ICON[a.event]} ${a.title}`, 250),
    message: htmlText(a, 1024),
    html: "1",
    priority: PUSHOVER_PRIORITY[a.event],
    url: a.link,
    url_title: "Open the service",
    timestamp: String(Math.floor(Date.parse(a.at) / 1000)),
  })],
};
