import { z } from "zod";
import { beat, BODY_MAX, countHeartbeat, pingAnswer, type Signal } from "../kv/hooks.ts";
import { roughOrigin } from "../lib/ip.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { cutChars } from "../lib/text.ts";
import { createRoute, type Ctx, errors, json, router } from "../http/router.ts";
import { clientOrigin } from "../http/guards.ts";

/** Status texts longer than this are cut, not refused: a beat should never be lost to it. */
export const STATUS_MAX = 120;

const Answer = z.object({ ok: z.literal(true), service: z.string(), received: z.string() })
  .meta({ id: "HeartbeatAnswer" });

const params = z.object({
  key: z.string().meta({ example: "…43 characters…" }),
});
const query = z.object({
  status: z.string().optional().meta({ description: `Up to ${STATUS_MAX} characters` }),
  rid: z.string().optional().meta({
    description: "Run id (a UUID) pairing a start with its end",
    example: "3f2a9c4e-0d6b-4f53-9d2e-6a1c2b7e8f90",
  }),
});
const signalParams = params.extend({
  signal: z.string().regex(/^(start|fail|log|[0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$/)
    .meta({ description: "start, fail, log, or an exit code 0 to 255", example: "start" }),
});

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const dec = new TextDecoder();

/** The request body as text, at most BODY_MAX bytes (the rest is not read). */
async function boundedBody(c: Ctx): Promise<string> {
  const stream = c.req.raw.body;
  if (!stream) return "";
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  try {
    while (n < BODY_MAX) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      n += value.length;
    }
  } finally {
    if (n >= BODY_MAX) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  const all = new Uint8Array(Math.min(n, BODY_MAX));
  let off = 0;
  for (const p of parts) {
    const take = p.subarray(0, all.length - off);
    all.set(take, off);
    off += take.length;
    if (off >= all.length) break;
  }
  // A character cut at the limit decodes to U+FFFD: drop it.
  return dec.decode(all).replace(/\uFFFD$/, "");
}

/**
 * The status text and body of a ping: `?status=` or a JSON body `{status}`; the body (any
 * type) is kept as text up to BODY_MAX bytes.
 */
async function statusOf(c: Ctx): Promise<{ status: string; body: string }> {
  let status = c.req.query("status");
  let body = "";
  if (c.req.method !== "POST") {
    return { status: cutChars((status ?? "").trim(), STATUS_MAX), body };
  }
  if (!/json/i.test(c.req.header("content-type") ?? "")) {
    body = await boundedBody(c);
  } else {
    const raw = await c.req.text();
    body = new TextEncoder().encode(raw).length > BODY_MAX
      ? dec.decode(new TextEncoder().encode(raw).subarray(0, BODY_MAX)).replace(/\uFFFD$/, "")
      : raw;
    if (raw.trim() !== "") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        fail(400, 'body must be JSON such as {"status": "..."}');
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        fail(400, 'body must be a JSON object such as {"status": "..."}');
      }
      const s = (parsed as { status?: unknown }).status;
      if (s !== undefined && s !== null && typeof s !== "string") {
        fail(400, "status: must be text", { field: "status" });
      }
      if (typeof s === "string") status = s;
    }
  }
  return { status: cutChars((status ?? "").trim(), STATUS_MAX), body };
}

/** The kind and exit code of a signal path segment (none: a success). */
function signalOf(segment: string | undefined): Pick<Signal, "kind" | "code"> {
  if (segment === undefined) return { kind: "success", code: null };
  if (segment === "start" || segment === "fail" || segment === "log") {
    return { kind: segment, code: null };
  }
  const code = Number(segment);
  return { kind: code === 0 ? "success" : "fail", code };
}

/**
 * GET and POST /api/hooks/<key>[/start|/fail|/log|/<exit code>]: public, authorised by the
 * secret key alone, as Healthchecks speaks them.
 */
export function hookRoutes(deps: Deps) {
  const app = router();
  const routes = [
    {
      path: "/hooks/{key}",
      summary: "Heartbeat: records a success and an optional status text",
      params,
    },
    {
      path: "/hooks/{key}/{signal}",
      summary: "Heartbeat signal: a run's start, failure, exit code (0 success) or a log line",
      params: signalParams,
    },
  ] as const;
  for (const route of routes) {
    for (const method of ["get", "post"] as const) {
      app.openapi(
        createRoute({
          method,
          path: route.path,
          tags: ["services"],
          summary: route.summary,
          description: "The status comes from `?status=` or a JSON body `{status}`; a POST " +
            `body (any type) is kept as text up to ${BODY_MAX} bytes with the event; \`rid\` ` +
            "(a UUID) pairs a start with its end. `fail` and non-zero exit codes turn the " +
            "service off at once; `log` changes nothing. 600 calls an hour per address. " +
            "Answered once the signal is stored durably.",
          request: { params: route.params, query },
          responses: { 200: json(Answer), ...errors(400, 404, 429) },
        }),
        (c) => handle(c),
      );
    }
  }

  async function handle(c: Ctx) {
    // Hono answers HEAD with the GET handler. HEAD is safe by definition: a link preview or
    // a checker sending one must not record a beat that hides an outage (as /api/verify).
    if (c.req.method === "HEAD") {
      fail(405, "send GET or POST to record a beat", {}, { Allow: "GET, POST" });
    }
    const key = c.req.param("key")!;
    const address = clientOrigin(deps, c);
    const verdict = await countHeartbeat(deps, address);
    if (!verdict.ok) {
      fail(429, "too many heartbeats from this address: at most 600 an hour", {
        retry_after: verdict.retryAfter,
      }, { "Retry-After": String(verdict.retryAfter) });
    }
    const rid = c.req.query("rid");
    if (rid !== undefined && !UUID_RE.test(rid)) {
      fail(400, "rid: must be a UUID", { field: "rid" });
    }
    const { status, body } = await statusOf(c);
    const signal: Signal = {
      ...signalOf(c.req.param("signal")),
      rid: rid?.toLowerCase() ?? null,
      body,
      origin: roughOrigin(address),
    };
    const done = await beat(deps, key, status, signal);
    if (!done) fail(404, "unknown hook key");
    c.header("Cache-Control", "no-store");
    return c.json(pingAnswer(done.ref, done.at), 200);
  }
  return app;
}
