/**
 * Chat kinds reached through an incoming webhook address (Slack, Discord, Microsoft Teams,
 * Google Chat, Mattermost, Rocket.Chat) or a bot's API (Zulip): a card coloured by state with
 * the service, its state, the reason and a link. The address itself is the secret (it holds
 * the token), so it is sealed and only its origin is shown.
 */
import {
  type AlertMessage,
  clip,
  COLOR,
  eventOf,
  form,
  type FormatContext,
  headline,
  html,
  ICON,
  joinUrl,
  jsonPost,
  type KindSpec,
  linesOf,
  markdown,
  noMentions,
  slackText,
  SOURCE,
  type Values,
  WORD,
} from "./_format.ts";

const origin = (url: string) => URL.canParse(url) ? new URL(url).origin : "";

const webhookField = (help: string) => ({
  name: "url",
  label: "Webhook address",
  help,
  secret: true,
  type: "url" as const,
  max: 2000,
});

/** Teams' facts of an alert; FactSet values are Markdown there, so the group's is escaped. */
const facts = (a: AlertMessage) => [
  ...(a.group ? [{ title: "Group", value: markdown(a.group.name) }] : []),
  { title: "State", value: `${ICON[a.event]} ${WORD[a.event]}` },
  { title: "At", value: a.at },
];

/** Slack: Block Kit inside an attachment, whose `color` is the bar by state. */
export const slack: KindSpec = {
  kind: "slack",
  label: "Slack",
  about: "A coloured message in a Slack channel, through an incoming webhook.",
  fields: [
    webhookField(
      "In Slack: Apps, Incoming Webhooks (or your app's Incoming Webhooks page), Add New Webhook " +
        "to Workspace, pick the channel, copy the address (https://hooks.slack.com/services/...).",
    ),
  ],
  target: "url",
  hint: (v) => origin(v.url),
  format: (a, v) => {
    // A person's words (names, statuses) only in plain_text objects, escaped: never formatted,
    // never a mention; our own words in mrkdwn.
    const plain = (text: string) => ({ type: "plain_text", text: slackText(text), emoji: true });
    const open = {
      type: "button",
      text: { type: "plain_text", text: "Open the service" },
      url: a.link,
    };
    const blocks: unknown[] = [{
      type: "section",
      text: plain(a.services ? a.title : `${a.title}\n${clip(a.text, 2000)}`),
      accessory: open,
    }];
    for (const s of a.services ? linesOf(a).slice(0, 40) : []) {
      const e = eventOf(a, s);
      blocks.push({
        type: "section",
        text: plain(`${ICON[e]} ${s.name}: ${WORD[e]}\n${clip(s.status, 300)}`),
      });
    }
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: `${ICON[a.event]} ${WORD[a.event]} · ${a.at}` }],
    });
    return [jsonPost(v.url, {
      text: slackText(headline(a)),
      mrkdwn: false,
      attachments: [{ color: COLOR[a.event], fallback: slackText(headline(a)), blocks }],
    })];
  },
};

/** Discord: one embed, its colour by state, a field per service of a group; no mentions. */
export const discord: KindSpec = {
  kind: "discord",
  label: "Discord",
  about: "A coloured embed in a Discord channel, through a channel webhook.",
  fields: [
    webhookField(
      "In Discord: the channel's settings, Integrations, Webhooks, New Webhook, Copy Webhook URL " +
        "(https://discord.com/api/webhooks/...).",
    ),
  ],
  target: "url",
  hint: (v) => origin(v.url),
  format: (a, v) => [jsonPost(v.url, {
    content: clip(`${ICON[a.event]} ${markdown(a.title)}`, 2000),
    embeds: [{
      title: clip(markdown(a.title), 256),
      url: a.link,
      description: clip(markdown(a.services ? "" : a.text), 4096) || undefined,
      color: parseInt(COLOR[a.event].slice(1), 16),
      timestamp: a.at,
      fields: a.services
        ? linesOf(a).slice(0, 25).map((s) => ({
          name: clip(markdown(s.name), 256),
          value: clip(`${ICON[eventOf(a, s)]} ${WORD[eventOf(a, s)]}: ${markdown(s.status)}`, 1024),
          inline: false,
        }))
        : [{ name: "State", value: `${ICON[a.event]} ${WORD[a.event]}`, inline: true }],
      footer: { text: SOURCE },
    }],
    allowed_mentions: { parse: [] },
  })],
};

/** Microsoft Teams: a Workflows webhook ("Post to a channel when a webhook request is received")
 * takes a message with one Adaptive Card attachment. */
export const teams: KindSpec = {
  kind: "teams",
  label: "Microsoft Teams",
  about: "An Adaptive Card in a Teams channel, through a Workflows webhook.",
  fields: [
    webhookField(
      "In Teams: the channel's ..., Workflows, \"Post to a channel when a webhook request is " +
        'received", finish the steps and copy the address it shows.',
    ),
  ],
  target: "url",
  hint: (v) => origin(v.url),
  format: (a, v) => {
    const color = a.event === "back" ? "good" : a.event === "off" ? "attention" : "warning";
    const body: unknown[] = [
      {
        type: "TextBlock",
        text: `${ICON[a.event]} ${markdown(a.title)}`,
        weight: "bolder",
        size: "medium",
        wrap: true,
        style: "heading",
        color,
      },
    ];
    if (a.services) {
      body.push({
        type: "FactSet",
        facts: linesOf(a).map((s) => ({
          title: markdown(s.name),
          value: `${ICON[eventOf(a, s)]} ${WORD[eventOf(a, s)]}: ${markdown(s.status)}`,
        })),
      });
    } else body.push({ type: "TextBlock", text: markdown(a.text), wrap: true });
    body.push({ type: "FactSet", facts: facts(a) });
    return [jsonPost(v.url, {
      type: "message",
      attachments: [{
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          fallbackText: headline(a),
          body,
          actions: [{ type: "Action.OpenUrl", title: "Open the service", url: a.link }],
        },
      }],
    })];
  },
};

/** Google Chat: a card, in the outage's thread (threadKey, replying in it or opening it). */
export const googleChat: KindSpec = {
  kind: "google_chat",
  label: "Google Chat",
  about: "A card in a Google Chat space; an outage's alerts share one thread.",
  fields: [
    webhookField(
      "In Google Chat: the space's name, Apps & integrations, Webhooks, Add webhook, copy the " +
        "address (https://chat.googleapis.com/v1/spaces/...).",
    ),
  ],
  target: "url",
  hint: (v) => origin(v.url),
  format: (a, v, ctx) => {
    const url = new URL(v.url);
    url.searchParams.set("messageReplyOption", "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD");
    const widgets: unknown[] = a.services
      ? linesOf(a).map((s) => ({
        decoratedText: {
          topLabel: `${ICON[eventOf(a, s)]} ${WORD[eventOf(a, s)]}`,
          text: `<b>${html(s.name)}</b>: ${html(s.status)}`,
          wrapText: true,
        },
      }))
      : [{ textParagraph: { text: html(a.text) } }];
    widgets.push({
      buttonList: {
        buttons: [{ text: "Open the service", onClick: { openLink: { url: a.link } } }],
      },
    });
    // No top-level `text`: its Chat syntax reads `<users/all>` and `*bold*` and documents no
    // escape. `fallbackText` is plain (notifications); the card's texts are escaped HTML.
    return [jsonPost(url.href, {
      fallbackText: headline(a),
      cardsV2: [{
        cardId: ctx.id,
        card: {
          header: { title: clip(a.title, 200), subtitle: `${ICON[a.event]} ${WORD[a.event]}` },
          sections: [{ widgets }],
        },
      }],
      thread: { threadKey: threadOf(a, ctx) },
    })];
  },
};

/** The thread of an alert: its service's outage, or for a group the place's. */
const threadOf = (a: AlertMessage, ctx: FormatContext) =>
  a.group ? `group-${a.group.name}` : ctx.pair(a.service?.id ?? null);

/** Mattermost's and Rocket.Chat's message text: Markdown, escaped, mentioning nobody. */
const chatHeadline = (a: AlertMessage) => `${ICON[a.event]} ${noMentions(markdown(a.title))}`;

/** Slack's older attachments, which Mattermost and Rocket.Chat read. */
function attachment(a: AlertMessage) {
  const md = (s: string) => noMentions(markdown(s));
  return {
    fallback: noMentions(headline(a)),
    color: COLOR[a.event],
    title: noMentions(a.title),
    title_link: a.link,
    text: md(a.services ? "" : a.text),
    fields: [
      ...linesOf(a).filter(() => a.services).map((s) => ({
        short: false,
        title: noMentions(s.name),
        value: `${ICON[eventOf(a, s)]} ${WORD[eventOf(a, s)]}: ${md(s.status)}`,
      })),
      { short: true, title: "State", value: `${ICON[a.event]} ${WORD[a.event]}` },
      { short: true, title: "At", value: a.at },
    ],
  };
}

export const mattermost: KindSpec = {
  kind: "mattermost",
  label: "Mattermost",
  about: "A coloured attachment in a Mattermost channel, through an incoming webhook.",
  fields: [
    webhookField(
      "In Mattermost: Integrations, Incoming Webhooks, Add Incoming Webhook, pick the channel, " +
        "copy the address (https://your-server/hooks/...).",
    ),
  ],
  target: "url",
  hint: (v) => origin(v.url),
  selfHosted: true,
  format: (
    a,
    v,
  ) => [jsonPost(v.url, { username: SOURCE, text: chatHeadline(a), attachments: [attachment(a)] })],
};

export const rocketChat: KindSpec = {
  kind: "rocket_chat",
  label: "Rocket.Chat",
  about: "A coloured attachment in a Rocket.Chat channel, through an incoming integration.",
  fields: [
    webhookField(
      "In Rocket.Chat: Administration, Workspace, Integrations, New, Incoming, choose the " +
        "channel, save and copy the Webhook URL.",
    ),
  ],
  target: "url",
  hint: (v) => origin(v.url),
  selfHosted: true,
  format: (
    a,
    v,
  ) => [jsonPost(v.url, { alias: SOURCE, text: chatHeadline(a), attachments: [attachment(a)] })],
};

/** Zulip: a stream message through a bot; the topic (the service's name by default) pairs an
 * outage's alerts. */
export const zulip: KindSpec = {
  kind: "zulip",
  label: "Zulip",
  about: "A message in a Zulip stream, sent by a bot; off and back share the topic.",
  fields: [
    {
      name: "site",
      label: "Zulip address",
      help: "Your organisation's address, as https://example.zulipchat.com.",
      type: "url",
      max: 500,
    },
    {
      name: "bot_email",
      label: "Bot e-mail",
      help: "Personal settings, Bots, Add a new bot (type: Incoming webhook); its e-mail.",
      type: "text",
      max: 200,
      check: (v) => /^[^\s@]+@[^\s@]+$/.test(v) ? null : "must be the bot's e-mail address",
    },
    {
      name: "api_key",
      label: "Bot API key",
      help: "The same bot's API key (Personal settings, Bots).",
      secret: true,
      type: "text",
      max: 200,
    },
    {
      name: "stream",
      label: "Stream",
      help: "The stream (channel) to post in, by name; the bot must be subscribed to it.",
      type: "text",
      max: 60,
    },
    {
      name: "topic",
      label: "Topic",
      help: "Leave empty: each service gets its own topic, so its off and back are together.",
      optional: true,
      type: "text",
      max: 60,
    },
  ],
  target: "site",
  hint: (v) => `${origin(v.site)} #${v.stream}`,
  selfHosted: true,
  format: (a, v: Values) => {
    const topic = v.topic || (a.group?.name ?? a.service?.name ?? "Test alerts");
    const md = (s: string) => noMentions(markdown(s));
    const lines = a.services
      ? linesOf(a).map((s) =>
        `* ${ICON[eventOf(a, s)]} **${md(s.name)}**: ${WORD[eventOf(a, s)]} (${md(s.status)})`
      )
      : [md(a.text)];
    const content = [`${ICON[a.event]} **[${md(a.title)}](${a.link})**`, ...lines].join("\n");
    const auth = btoa(
      String.fromCodePoint(...new TextEncoder().encode(`${v.bot_email}:${v.api_key}`)),
    );
    return [form(joinUrl(v.site, "/api/v1/messages"), {
      type: "stream",
      to: v.stream,
      topic: clip(topic, 60),
      content: clip(content, 10000),
    }, { Authorization: `Basic ${auth}` })];
  },
};
