/**
 * What every channel kind's formatter shares: the alert it is given, the request it answers,
 * the words, colours and icons of each event, and the escapes of the markups providers read.
 * Pure: no I/O, no clock (a formatter reads the time from the alert).
 */

/** The product's name as a provider shows the sender (PagerDuty's `client`, Opsgenie's source). */
export const SOURCE = "Community catalogue";

export type AlertEvent = "off" | "back" | "expiry" | "reminder" | "test";

export interface ServiceLine {
  id: number;
  name: string;
  kind: string;
  state: string;
  status: string;
}

/** What an alert says, whatever the channel (the generic webhook sends it as it is). */
export interface AlertMessage {
  event: AlertEvent;
  title: string;
  text: string;
  service: ServiceLine | null;
  /** An alert of several services at one place (kv/alerts/grouped_alerts.ts): each of them. */
  services?: ServiceLine[];
  /** The place or group they share, and how many services of the account it holds. */
  group?: { name: string; total: number };
  at: string;
  link: string;
}

/** One HTTP request to a provider. */
export interface OutRequest {
  method: "POST" | "PUT";
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What the sending step gives a formatter besides the alert and the channel's fields. */
export interface FormatContext {
  /** The queued post's id: the same for every retry (Matrix's txnId, the webhook's id). */
  id: string;
  /**
   * The outage's pairing key of a service (PagerDuty's dedup_key, Opsgenie's alias, Google
   * Chat's thread, a test's own key for null): an off and its back get the same one.
   */
  pair(service: number | null): string;
  /** What the provider answered to the outage's first alert (Telegram's message, Matrix's event). */
  ref(service: number | null): string | undefined;
  /** A provider's origin (lib/channels/mod.ts PROVIDERS, or the configured override). */
  origin(provider: Provider): string;
}

export type Provider =
  | "telegram"
  | "pagerduty"
  | "pagerduty_eu"
  | "opsgenie"
  | "opsgenie_eu"
  | "pushover";

/** The channel's fields as entered (secret ones included, opened for this send only). */
export type Values = Record<string, string>;

/** The services an alert is about: the group's, or its one service (none for a test). */
export const linesOf = (a: AlertMessage): ServiceLine[] =>
  a.services ?? (a.service ? [a.service] : []);

/** The event of one service of a group: its own state, off or back. */
export const eventOf = (a: AlertMessage, s: ServiceLine): AlertEvent =>
  a.services ? (s.state === "off" ? "off" : "back") : a.event;

export const WORD: Record<AlertEvent, string> = {
  off: "Off",
  back: "Back",
  reminder: "Still off",
  expiry: "Certificate expires soon",
  test: "Test",
};

/** Colour by event: red off, green back, orange still off, amber expiry, blue test. */
export const COLOR: Record<AlertEvent, string> = {
  off: "#cf222e",
  back: "#1a7f37",
  reminder: "#bc4c00",
  expiry: "#9a6700",
  test: "#0969da",
};

export const ICON: Record<AlertEvent, string> = {
  off: "🔴",
  back: "✅",
  reminder: "🔁",
  expiry: "⚠️",
  test: "🔔",
};

/** The one line people read first: icon, word and title. */
export const headline = (a: AlertMessage) => `${ICON[a.event]} ${a.title}`;

/** One line per service of a group: "name: off (status)". */
const serviceLines = (a: AlertMessage) =>
  linesOf(a).map((s) => `${s.name}: ${WORD[eventOf(a, s)].toLowerCase()} (${s.status})`);

/** The alert's own text: the status, or a group's lines. */
export const bodyText = (a: AlertMessage) => a.services ? serviceLines(a).join("\n") : a.text;

export const clip = (s: string, max: number) =>
  s.length <= max ? s : s.slice(0, Math.max(0, max - 1)) + "…";

/**
 * A name or a title as one line: a line break or another control character in it would
 * start a Markdown heading, list or quote on the provider's side, so it becomes a space.
 */
export const flattenLines = (s: string) => s.replace(/[\p{Cc}\u2028\u2029]+/gu, " ").trim();

/** The alert with its names and title on one line each (what a chat or push kind is given). */
export const namesOnOneLine = (a: AlertMessage): AlertMessage => ({
  ...a,
  title: flattenLines(a.title),
  service: a.service && { ...a.service, name: flattenLines(a.service.name) },
  ...(a.services
    ? { services: a.services.map((s) => ({ ...s, name: flattenLines(s.name) })) }
    : {}),
  ...(a.group ? { group: { ...a.group, name: flattenLines(a.group.name) } } : {}),
});

/** HTML text (Telegram, Matrix, Google Chat's text paragraphs, Pushover's html=1). */
export const html = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * Slack's text: `&`, `<` and `>` are its control characters (`<!channel>`, `<@U123>`,
 * `<url|text>`), replaced by their entities as Slack's formatting reference says. Slack
 * documents no escape for `*`, `_` or `~`: a person's text goes in `plain_text` objects,
 * and the top-level `text` goes with `mrkdwn: false`.
 */
export const slackText = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Markdown (Discord, Teams' Adaptive Cards, Mattermost, Rocket.Chat, Zulip): every markup
 * character escaped with a backslash, CommonMark's escape, which each of them reads; `<`
 * too (Discord's `<@id>` and `<t:...>`, HTML in Mattermost and Rocket.Chat).
 */
export const markdown = (s: string) => s.replace(/([\\`*_~|<>#\[\]()!+-])/g, "\\$1");

/**
 * Mattermost's, Rocket.Chat's and Zulip's mentions (`@channel`, `@all`, `@here`, `@**all**`,
 * a person's `@name`) are read from the words of a message, and none documents an escape
 * for them: a zero-width space after each `@` keeps what is shown and mentions nobody.
 */
export const noMentions = (s: string) => s.replace(/@(?=[\p{L}\p{N}_*])/gu, "@\u200b");

export const jsonPost = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  ({
    method: "POST",
    url,
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  }) satisfies OutRequest;

export const form = (url: string, fields: Record<string, string>, headers = {}) =>
  ({
    method: "POST",
    url,
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  }) satisfies OutRequest;

/** A URL with a path appended to its own (a base with or without a trailing slash). */
export const joinUrl = (base: string, path: string) => base.replace(/\/+$/, "") + path;

/** One field of a kind's form and of its JSON input. */
export interface FieldSpec {
  name: string;
  label: string;
  /** Where to find it, in a sentence or two (the form's hint; docs/api.md). */
  help: string;
  /** Sealed at rest, never shown again (the view says "set"). */
  secret?: boolean;
  optional?: boolean;
  /** url: an https address (http too for self-hosted kinds on allowed networks). */
  type: "url" | "text" | "select" | "textarea";
  options?: readonly string[];
  max: number;
  /** Why the value cannot be used, or null (after the type's own checks). */
  check?: (v: string) => string | null;
}

export interface KindSpec {
  kind: string;
  label: string;
  /** One sentence: what it sends where. */
  about: string;
  fields: FieldSpec[];
  /** The field holding the address the channel sends to, when the person enters it. */
  target?: string;
  /** What the channel list shows of it: never a secret. */
  hint(v: Values): string;
  format(a: AlertMessage, v: Values, ctx: FormatContext): OutRequest[];
  /** What a successful answer to an off names for pairing (Telegram's message id). */
  refOf?(body: string): string | undefined;
  /** A server owner may let it reach listed private networks (CHANNEL_NETWORKS). */
  selfHosted?: boolean;
}

/** The JSON of an answer, or null. */
export function answerJson(body: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(body);
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
