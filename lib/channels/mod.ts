/**
 * The channel kinds: each a form of fields and a pure formatter from an alert to the HTTP
 * requests its provider documents (lib/channels/chat.ts, push.ts, incidents.ts, webhook.ts),
 * the providers' fixed origins in one table, the check of a kind's values, and the provider's
 * answer in plain words. kv/alerts/channels.ts stores channels and sends what these format.
 */
import { parseUrlTarget, TargetError } from "../targets.ts";
import {
  answerJson,
  type KindSpec,
  namesOnOneLine,
  type Provider,
  type Values,
} from "./_format.ts";
import { discord, googleChat, mattermost, rocketChat, slack, teams, zulip } from "./chat.ts";
import { opsgenie, pagerduty } from "./incidents.ts";
import { gotify, matrix, ntfy, pushover, telegram } from "./push.ts";
import { webhook } from "./webhook.ts";

export type {
  AlertEvent,
  AlertMessage,
  FieldSpec,
  FormatContext,
  KindSpec,
  OutRequest,
  Provider,
  ServiceLine,
  Values,
} from "./_format.ts";

/**
 * A kind whose messages a person reads: it is given names and titles on one line. The
 * webhook's JSON body carries them as they are.
 */
const readByPeople = (spec: KindSpec): KindSpec =>
  spec === webhook
    ? spec
    : { ...spec, format: (a, v, ctx) => spec.format(namesOnOneLine(a), v, ctx) };

/** Every kind, in the order the channels page offers them. */
export const KIND_LIST: readonly KindSpec[] = [
  slack,
  discord,
  telegram,
  teams,
  googleChat,
  mattermost,
  rocketChat,
  zulip,
  matrix,
  ntfy,
  gotify,
  pushover,
  pagerduty,
  opsgenie,
  webhook,
].map(readByPeople);

export const CHANNEL_KINDS: Record<string, KindSpec> = Object.fromEntries(
  KIND_LIST.map((k) => [k.kind, k]),
);
export const KIND_NAMES = KIND_LIST.map((k) => k.kind) as [string, ...string[]];

/** The providers whose address is fixed (the person enters only a token or key). */
export const PROVIDERS: Record<Provider, string> = {
  telegram: "https://api.telegram.org",
  pagerduty: "https://events.pagerduty.com",
  pagerduty_eu: "https://events.eu.pagerduty.com",
  opsgenie: "https://api.opsgenie.com",
  opsgenie_eu: "https://api.eu.opsgenie.com",
  pushover: "https://api.pushover.net",
};

export type Checked = { ok: true; values: Values } | { ok: false; field: string; error: string };

/**
 * A kind's values from what was entered: every field present and within its rules, addresses
 * https (http too for a self-hosted kind: kv/alerts/channels.ts lets it through only to an allowed
 * network), nothing else kept.
 */
export function checkValues(spec: KindSpec, input: Record<string, unknown>): Checked {
  const values: Values = {};
  for (const f of spec.fields) {
    const raw = input[f.name];
    const v = typeof raw === "string" ? (f.type === "textarea" ? raw : raw.trim()) : "";
    if (raw !== undefined && raw !== null && typeof raw !== "string") {
      return { ok: false, field: f.name, error: `${f.name}: must be text` };
    }
    if (!v) {
      if (f.optional) continue;
      return { ok: false, field: f.name, error: `${f.name}: ${f.label.toLowerCase()} is needed` };
    }
    if (v.length > f.max) {
      return { ok: false, field: f.name, error: `${f.name}: at most ${f.max} characters` };
    }
    if (f.type !== "textarea" && /\p{Cc}/u.test(v)) {
      return { ok: false, field: f.name, error: `${f.name}: one line, without control characters` };
    }
    if (f.options && !f.options.includes(v)) {
      return { ok: false, field: f.name, error: `${f.name}: one of ${f.options.join(", ")}` };
    }
    if (f.type === "url") {
      try {
        const schemes = spec.selfHosted ? ["https:", "http:"] : ["https:"];
        values[f.name] = parseUrlTarget("url", v, schemes).url!.href;
      } catch (err) {
        if (!(err instanceof TargetError)) throw err;
        return { ok: false, field: f.name, error: err.message.replace(/^url: /, `${f.name}: `) };
      }
    } else values[f.name] = v;
    const why = f.check?.(values[f.name]);
    if (why) return { ok: false, field: f.name, error: `${f.name}: ${why}` };
  }
  return { ok: true, values };
}

/** The names of a kind's secret fields. */
export const secretFields = (spec: KindSpec) =>
  spec.fields.filter((f) => f.secret).map((f) => f.name);

/** How a provider answered, in plain words, and how long it asked to wait (429, 503). */
export interface Explained {
  ok: boolean;
  words: string;
  /** Milliseconds the provider asked to wait before the next try (Retry-After). */
  retryAfter?: number;
}

const MAX_WAIT = 6 * 3600_000;

/** The Retry-After header (seconds or a date), or Telegram's parameters.retry_after. */
export function retryAfterOf(headers: Headers, body: string, now: number): number | undefined {
  const h = headers.get("retry-after")?.trim();
  let ms: number | undefined;
  if (h && /^\d{1,9}$/.test(h)) ms = Number(h) * 1000;
  else if (h && !Number.isNaN(Date.parse(h))) ms = Date.parse(h) - now;
  const p = answerJson(body)?.parameters as { retry_after?: unknown } | undefined;
  if (ms === undefined && typeof p?.retry_after === "number") ms = p.retry_after * 1000;
  return ms === undefined ? undefined : Math.min(Math.max(ms, 1000), MAX_WAIT);
}

/** The provider's own words from an answer's body, short and on one line. */
function providerWords(body: string): string {
  const j = answerJson(body);
  const pick = (...vs: unknown[]) =>
    vs.find((v) => typeof v === "string" && v) as string | undefined;
  const errors = Array.isArray(j?.errors) ? j!.errors : [];
  const said = j
    ? pick(
      j.description,
      j.error_description,
      j.errorDescription,
      j.msg,
      errors[0],
      j.message,
      j.error,
    )
    : /^[\w .,:'-]{1,120}$/.test(body.trim())
    ? body.trim()
    : undefined;
  return said ? said.replace(/[\p{Cc}\s]+/gu, " ").slice(0, 160) : "";
}

/** What an answer of a provider means, in plain words (the test button shows it). */
export function explain(status: number, headers: Headers, body: string, now: number): Explained {
  const said = providerWords(body);
  const tail = said ? ` (HTTP ${status}: ${said})` : ` (HTTP ${status})`;
  if (status >= 200 && status < 300) return { ok: true, words: `delivered (HTTP ${status})` };
  const retryAfter = status === 429 || status === 503
    ? retryAfterOf(headers, body, now)
    : undefined;
  const wait = retryAfter ? `; retried in ${Math.ceil(retryAfter / 1000)} s` : "";
  const j = answerJson(body);
  const code = typeof j?.errcode === "string" ? j.errcode : "";
  let words: string;
  if (status === 429) words = "rate limited by the receiver";
  else if (/chat not found/i.test(said)) words = "unknown chat: the bot cannot see it";
  else if (/bot was blocked|kicked|not a member|not enough rights/i.test(said)) {
    words = "the bot may not post in this chat";
  } else if (
    status === 401 || code === "M_UNKNOWN_TOKEN" || /invalid.?token|unauthori/i.test(said)
  ) {
    words = "wrong token or key";
  } else if (status === 403 || code === "M_FORBIDDEN") words = "not allowed to post there";
  else if (status === 404 || status === 410) words = "unknown address, chat or room";
  else if (status >= 500) words = "the receiver failed";
  else words = "refused by the receiver";
  return { ok: false, words: words + tail + wait, ...(retryAfter ? { retryAfter } : {}) };
}
