import { z } from "zod";
import { BODY_MAX } from "../kv/service/heartbeats.ts";
import type { Deps } from "../lib/deps.ts";
import { createRoute, jsonResponse, router } from "../http/router.ts";
import { compatAnswer } from "./compat_pings.ts";

/**
 * The OpenAPI description of Healthchecks' and Uptime Kuma's ping addresses. app.ts mounts them
 * as their own area (api/compat_pings.ts `compatPingRoutes`, every method through
 * `compatAnswer`), so these routes are never mounted: app.ts adds them to the document only.
 * Their handlers answer through the same `compatAnswer`, so a description that ran would answer
 * as the area does.
 * Their answers are those products' own (plain text; Kuma's `{ok, msg}`), not `{error}`: the
 * tags `healthchecks-pings` and `uptime-kuma` say so to the tests that walk the document.
 */

const text = (description: string) => ({
  description,
  content: { "text/plain": { schema: { type: "string" as const } } },
});

const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  .meta({ description: "The check's UUID (lower case), its `uuid` in the Management API" });
const pingKey = z.string().regex(/^[A-Za-z0-9_-]{22}$/).meta({
  description: "The account's ping key (POST /api/me/ping-key; shown once)",
});
const slug = z.string().regex(/^[-a-z0-9_]+$/).meta({ description: "The check's slug" });
const signal = z.string().regex(/^(start|fail|log|[0-9]{1,3})$/).meta({
  description: "`start`, `fail`, `log`, or an exit status 0 to 255 (0 a success, else a failure)",
});
const rid = z.object({
  rid: z.uuid().optional().meta({ description: "A run id (UUID) pairing a start with its end" }),
});
const create = rid.extend({
  create: z.literal("1").optional().meta({
    description: "Auto-provisioning: an unknown slug creates the check (201 `Created`)",
  }),
});

const PING_ANSWERS = {
  200: text("`OK`: the ping is recorded (ignored pings of a POST-only check too)"),
  400: text("`invalid url format` (an exit status over 255) or `invalid uuid format` (`rid`)"),
  404: text("`not found`: no such check"),
  405: text("Another method than HEAD, GET or POST"),
  429: text("`too many pings from this address: at most 600 an hour`, with `Retry-After`"),
};

const DESCRIPTION = "Healthchecks' pinging API (its `http_api` documentation): a body of a " +
  `POST up to ${BODY_MAX} bytes is kept with the event (\`Ping-Body-Limit\` says so); answers ` +
  "are plain text, `Access-Control-Allow-Origin: *`. HEAD, GET and POST record a ping, unless " +
  'the check takes POST only (`methods: "POST"`): then others are recorded as ignored.';

const PATHS = [
  { path: "/ping/{uuid}", params: z.object({ uuid }), query: rid, summary: "a success" },
  {
    // A UUID and a signal, or a ping key and a slug: OpenAPI cannot tell two paths apart by
    // their parameters' forms, as Healthchecks' routes do (a UUID is 36 characters, a key 22).
    path: "/ping/{uuid_or_ping_key}/{signal_or_slug}",
    params: z.object({
      uuid_or_ping_key: z.string().regex(/^([0-9a-f-]{36}|[A-Za-z0-9_-]{22})$/).meta({
        description: "The check's UUID, or the account's ping key (then the next part is a slug)",
      }),
      signal_or_slug: z.string().regex(/^[-a-z0-9_]+$/).meta({
        description: "After a UUID: `start`, `fail`, `log` or an exit status 0 to 255; after a " +
          "ping key: the check's slug",
      }),
    }),
    query: create,
    summary: "a UUID's start, failure, exit status or log line; or a success by slug",
  },
  {
    path: "/ping/{ping_key}/{slug}/{signal}",
    params: z.object({ ping_key: pingKey, slug, signal }),
    query: create,
    summary: "a start, failure, exit status or log line, by slug",
  },
] as const;

const KumaAnswer = z.object({ ok: z.boolean(), msg: z.string().optional() }).meta({
  id: "UptimeKumaPushAnswer",
});
const push = z.object({
  token: z.string().meta({ description: "The heartbeat's push token (32 letters and digits)" }),
});
const pushQuery = z.object({
  status: z.string().optional().meta({ description: "`up` (the default) or anything else: down" }),
  msg: z.string().optional().meta({ description: 'The status text (default "OK")' }),
  ping: z.string().optional().meta({ description: "The response time in ms, kept with the event" }),
});

export function compatDocRoutes(deps: Deps) {
  const app = router();
  const handle = compatAnswer(deps);
  for (const p of PATHS) {
    for (const method of ["head", "get", "post"] as const) {
      app.openapi(
        createRoute({
          method,
          path: p.path,
          tags: ["healthchecks-pings"],
          summary: `Healthchecks ping: ${p.summary}`,
          description: DESCRIPTION +
            (p.path.includes("slug")
              ? " By slug: 409 `ambiguous slug` when several checks share it."
              : ""),
          request: { params: p.params, query: p.query },
          responses: p.path.includes("slug")
            ? {
              ...PING_ANSWERS,
              201: text("`Created`: `?create=1` made the check, then recorded the ping"),
              409: text("`ambiguous slug`: several checks have this slug"),
            }
            : PING_ANSWERS,
        }),
        handle,
      );
    }
  }
  for (const method of ["head", "get", "post"] as const) {
    app.openapi(
      createRoute({
        method,
        path: "/api/push/{token}",
        tags: ["uptime-kuma"],
        summary: "Uptime Kuma push: a heartbeat's success or, with status other than up, failure",
        description: "As Uptime Kuma's push monitors: `msg` is the status, `ping` the response " +
          "time. 600 calls an hour per address.",
        request: { params: push, query: pushQuery },
        responses: {
          200: jsonResponse(KumaAnswer, "`{ok: true}`: recorded"),
          404: jsonResponse(
            KumaAnswer,
            '`{ok: false, msg: "Monitor not found or not active."}`, or a `ping` out of range',
          ),
          405: jsonResponse(KumaAnswer, "Another method than HEAD, GET or POST"),
          429: jsonResponse(KumaAnswer, "Past 600 an hour from this address, with `Retry-After`"),
        },
      }),
      handle,
    );
  }
  return app;
}
