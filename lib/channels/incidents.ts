/**
 * On-call kinds: PagerDuty (Events API v2) and Opsgenie (Alert API). An off opens an incident
 * under the outage's pairing key (PagerDuty's dedup_key, Opsgenie's alias), a reminder repeats
 * it under the same key (both fold it into the open one), a back resolves or closes what the
 * off opened. A group sends one event per service, so each closes on its own. A certificate
 * expiry opens a warning under a key of the service's certificate; a test opens and closes one.
 */
import {
  type AlertEvent,
  type AlertMessage,
  clip,
  eventOf,
  type FormatContext,
  jsonPost,
  type KindSpec,
  linesOf,
  type OutRequest,
  type ServiceLine,
  SOURCE,
  WORD,
} from "./_format.ts";

/** One event per service of the alert (a test: one about no service). */
function perService(
  a: AlertMessage,
): { s: ServiceLine | null; event: AlertEvent; summary: string }[] {
  if (!a.service && !a.services) return [{ s: null, event: a.event, summary: a.title }];
  return linesOf(a).map((s) => {
    const event = eventOf(a, s);
    const summary = a.services ? `${s.name}: ${WORD[event].toLowerCase()} (${s.status})` : a.title;
    return { s, event, summary };
  });
}

/** The key of one service's incident: the outage's, or the certificate's for an expiry. */
const keyOf = (ctx: FormatContext, s: ServiceLine | null, event: AlertEvent) =>
  event === "expiry" && s ? `certificate-${s.id}` : ctx.pair(s?.id ?? null);

const SEVERITY = {
  off: "critical",
  reminder: "critical",
  expiry: "warning",
  test: "info",
} as const;

const regionField = {
  name: "region",
  label: "Region",
  help: "Where your account lives: us (the default) or eu.",
  optional: true,
  type: "select" as const,
  options: ["us", "eu"] as const,
  max: 2,
};

export const pagerduty: KindSpec = {
  kind: "pagerduty",
  label: "PagerDuty",
  about: "Opens a PagerDuty incident when a service is off and resolves it when it is back.",
  fields: [
    {
      name: "routing_key",
      label: "Integration key",
      help: "In PagerDuty: Services, your service, Integrations, Add an integration, Events API " +
        "V2; copy its Integration Key (32 characters).",
      secret: true,
      type: "text",
      max: 32,
      check: (v) =>
        /^[A-Za-z0-9]{32}$/.test(v)
          ? null
          : "must be the 32 characters of an Events API v2 integration key",
    },
    regionField,
  ],
  hint: (v) => `PagerDuty (${v.region === "eu" ? "EU" : "US"})`,
  format: (a, v, ctx) => {
    const url = `${ctx.origin(v.region === "eu" ? "pagerduty_eu" : "pagerduty")}/v2/enqueue`;
    const events = perService(a).flatMap(({ s, event, summary }): OutRequest[] => {
      const dedup_key = keyOf(ctx, s, event);
      if (event === "back") {
        return [jsonPost(url, { routing_key: v.routing_key, event_action: "resolve", dedup_key })];
      }
      const trigger = jsonPost(url, {
        routing_key: v.routing_key,
        event_action: "trigger",
        dedup_key,
        payload: {
          summary: clip(summary, 1024),
          source: s?.name ?? SOURCE,
          severity: SEVERITY[event],
          timestamp: a.at,
          component: s?.kind ?? "test",
          class: event,
          custom_details: {
            state: WORD[event],
            status: s?.status ?? a.text,
            ...(a.group ? { group: a.group.name } : {}),
          },
        },
        client: SOURCE,
        client_url: a.link,
        links: [{ href: a.link, text: "Open the service" }],
      });
      // A test opens an incident and resolves it at once.
      return event === "test"
        ? [
          trigger,
          jsonPost(url, { routing_key: v.routing_key, event_action: "resolve", dedup_key }),
        ]
        : [trigger];
    });
    return events;
  },
};

const PRIORITY = { off: "P1", reminder: "P1", expiry: "P3", test: "P5" } as const;

export const opsgenie: KindSpec = {
  kind: "opsgenie",
  label: "Opsgenie",
  about: "Creates an Opsgenie alert when a service is off and closes it when it is back.",
  fields: [
    {
      name: "api_key",
      label: "API key",
      help: "In Opsgenie: Teams, your team, Integrations, Add integration, API; copy its API Key.",
      secret: true,
      type: "text",
      max: 64,
      check: (v) =>
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)
          ? null
          : "must be an API key as Opsgenie shows it (8-4-4-4-12 hexadecimal digits)",
    },
    regionField,
  ],
  hint: (v) => `Opsgenie (${v.region === "eu" ? "EU" : "US"})`,
  format: (a, v, ctx) => {
    const base = `${ctx.origin(v.region === "eu" ? "opsgenie_eu" : "opsgenie")}/v2/alerts`;
    const auth = { Authorization: `GenieKey ${v.api_key}` };
    const close = (alias: string, note: string) =>
      jsonPost(`${base}/${encodeURIComponent(alias)}/close?identifierType=alias`, {
        source: SOURCE,
        note,
      }, auth);
    return perService(a).flatMap(({ s, event, summary }): OutRequest[] => {
      const alias = keyOf(ctx, s, event);
      if (event === "back") return [close(alias, "The service is back.")];
      const create = jsonPost(base, {
        message: clip(summary, 130),
        alias,
        description: clip(`${s?.status ?? a.text}\n${a.link}`, 15000),
        priority: PRIORITY[event],
        source: SOURCE,
        entity: s?.name ?? SOURCE,
        tags: [event],
        details: {
          state: WORD[event],
          ...(s ? { service: s.name, kind: s.kind } : {}),
          ...(a.group ? { group: a.group.name } : {}),
          link: a.link,
        },
      }, auth);
      return event === "test" ? [create, close(alias, "A test: closed at once.")] : [create];
    });
  },
};
