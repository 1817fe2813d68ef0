/**
 * The generic webhook: a JSON POST signed with HMAC-SHA256 (`X-Signature-256: sha256=<hex>`
 * of the body with the channel's secret) and `X-Webhook-Id` (the same for every retry). Its
 * body carries `text`, `content`, `title` and `message` beside the alert's fields, so Slack,
 * Discord and ntfy read something of it as it is. A body template, as Healthchecks and Uptime
 * Kuma allow, replaces that body: `$NAME`, `$STATE`, ... are filled in (escaped for JSON when
 * the body is JSON), and the result is signed the same way.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { type AlertMessage, bodyText, clip, type KindSpec, WORD } from "./_format.ts";

export const SIGNATURE_HEADER = "X-Signature-256";

export const signature = (secret: string, body: string) =>
  "sha256=" +
  bytesToHex(hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(body)));

/** The standard body, in this order of keys (receivers verify the signature of these bytes). */
export function payloadJson(p: AlertMessage): string {
  return JSON.stringify({
    text: `${p.title}\n${p.text}`,
    content: `${p.title}\n${p.text}`,
    title: p.title,
    message: p.text,
    event: p.event,
    service: p.service,
    ...(p.services ? { services: p.services, group: p.group } : {}),
    at: p.at,
    link: p.link,
  });
}

/** The alert back from its standard body (a queued post keeps that body). */
export function alertOf(body: string): AlertMessage {
  const b = JSON.parse(body);
  return {
    event: b.event,
    title: b.title,
    text: b.message,
    service: b.service ?? null,
    ...(b.services ? { services: b.services, group: b.group } : {}),
    at: b.at,
    link: b.link,
  };
}

const PLACEHOLDERS = {
  $EVENT: "off, back, reminder, expiry or test",
  $STATE: "the state in words (Off, Back, Still off, ...)",
  $NAME: "the service's name (a group's name for a group)",
  $STATUS: "the last result, or one line per service of a group",
  $TITLE: "the alert's title",
  $LINK: "the service's page",
  $AT: "when, as 2026-03-02T09:00:00.000Z",
  $JSON: "the standard JSON body",
} as const;

/**
 * The most placeholders a template fills, and the longest a filled-in value may be: a body is
 * at most the template's 4 000 characters plus 20 values (the standard body's for `$JSON`,
 * itself bounded by a group's services), never a template that repeats `$JSON` into a post
 * a hundred times its size.
 */
export const MAX_PLACEHOLDERS = 20;
const MAX_VALUE = 2000;

/** Why a body template cannot be kept, or null. */
const templateProblem = (template: string) =>
  (template.match(PLACEHOLDER_RE) ?? []).length > MAX_PLACEHOLDERS
    ? `at most ${MAX_PLACEHOLDERS} placeholders`
    : (template.match(/\$JSON\b/g) ?? []).length > 1
    ? "$JSON at most once"
    : null;

const PLACEHOLDER_RE = /\$(EVENT|STATE|NAME|STATUS|TITLE|LINK|AT|JSON)\b/g;

/**
 * The template with its placeholders filled in (longest names first: $STATE before $STATUS).
 * Past MAX_PLACEHOLDERS (a template kept before the bound), the rest stay as written.
 */
export function fillTemplate(template: string, a: AlertMessage, forJson: boolean): string {
  const values: Record<string, string> = {
    $EVENT: a.event,
    $STATE: WORD[a.event],
    $NAME: a.group?.name ?? a.service?.name ?? "",
    $STATUS: bodyText(a),
    $TITLE: a.title,
    $LINK: a.link,
    $AT: a.at,
  };
  const esc = (s: string) =>
    forJson ? JSON.stringify(clip(s, MAX_VALUE)).slice(1, -1) : clip(s, MAX_VALUE);
  let filled = 0;
  let json = 0;
  return template.replace(PLACEHOLDER_RE, (m) => {
    if (++filled > MAX_PLACEHOLDERS || (m === "$JSON" && ++json > 1)) return m;
    return m === "$JSON" ? payloadJson(a) : esc(values[m]);
  });
}

export const webhook: KindSpec = {
  kind: "webhook",
  label: "Webhook",
  about: "A signed JSON POST to an address of yours, or a body of your own.",
  fields: [
    {
      name: "url",
      label: "Webhook address",
      help: "An https address that takes a POST. Plain http and private addresses only on the " +
        "networks this server's owner allows (CHANNEL_NETWORKS).",
      secret: true,
      type: "url",
      max: 2000,
    },
    {
      name: "template",
      label: "Body template",
      help: `Leave empty for the standard JSON body. Otherwise the body to send, with ${
        Object.keys(PLACEHOLDERS).join(", ")
      } filled in.`,
      optional: true,
      type: "textarea",
      max: 4000,
      check: templateProblem,
    },
    {
      name: "content_type",
      label: "Body type",
      help:
        "The template's Content-Type: application/json (values escaped for JSON) or text/plain.",
      optional: true,
      type: "select",
      options: ["application/json", "text/plain"],
      max: 20,
    },
  ],
  target: "url",
  // A receiver at home (Home Assistant, Node-RED) often speaks plain http on the LAN.
  selfHosted: true,
  hint: (v) => URL.canParse(v.url) ? new URL(v.url).origin : "",
  format: (a, v, ctx) => {
    const type = v.template ? v.content_type || "application/json" : "application/json";
    const body = v.template
      ? fillTemplate(v.template, a, type === "application/json")
      : payloadJson(a);
    return [{
      method: "POST",
      url: v.url,
      headers: {
        "Content-Type": type,
        [SIGNATURE_HEADER]: signature(v.secret, body),
        "X-Webhook-Id": ctx.id,
      },
      body,
    }];
  },
};
