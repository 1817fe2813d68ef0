import { z } from "zod";
import {
  beat,
  BODY_MAX,
  countHeartbeat,
  pingAnswer,
  type Resume,
  type Signal,
} from "../kv/service/heartbeats.ts";
import { roughOrigin } from "../lib/ip.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { BodyReadError, JSON_BODY_LIMIT } from "../http/body.ts";
import { count } from "../lib/metrics.ts";
import { cutChars } from "../lib/text.ts";
import { createRoute, type Ctx, errors, jsonResponse, router } from "../http/router.ts";
import { clientOrigin } from "../http/guards.ts";
import { measuredHandler } from "../http/measured.ts";
import { joinBytes } from "../lib/bytes.ts";

/** Status texts longer than this are cut, not refused: a beat should never be lost to it. */
export const STATUS_MAX = 120;

const Answer = z.object({ ok: z.literal(true), service: z.string(), received: z.string() })
  .meta({ id: "HeartbeatAnswer" });

/**
 * Healthchecks' `manual_resume: false`: a paused check's next end resumes it first. The
 * service's rules are loaded only then, off the ping's fast path.
 */
export const resumeWith = (deps: Deps): Resume => (ref) =>
  import("../kv/service/commands.ts").then((m) => m.resumeByPing(deps, ref.account, ref.id));

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
/** A signal path segment: start, fail, log, or an exit code 0 to 255. */
const SIGNAL = /^(start|fail|log|[0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$/;
const signalParams = params.extend({
  signal: z.string().regex(SIGNAL)
    .meta({ description: "start, fail, log, or an exit code 0 to 255", example: "start" }),
});

/** A run id: a UUID in its canonical text, either case (as Healthchecks takes it). */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const dec = new TextDecoder();

/** Reads a body stream's chunks, at most `max` bytes of them; a failed read is the client's. */
export async function readChunks(stream: ReadableStream<Uint8Array>, max: number) {
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  try {
    while (n < max) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      n += value.length;
    }
  } catch (err) {
    throw new BodyReadError(err);
  }
  // The rest is not read. (A body read to its end needs no release: releasing a reader's
  // lock costs more than the read, and nothing reads the stream after this.)
  if (n >= max) reader.cancel().catch(() => {});
  return joinBytes(parts, Math.min(n, max));
}

/** Text of the first `max` bytes; a character cut at the limit decodes to U+FFFD: dropped. */
export const cutText = (bytes: Uint8Array, max: number) =>
  bytes.length > max
    ? dec.decode(bytes.subarray(0, max)).replace(/\uFFFD$/, "")
    : dec.decode(bytes);

/** What a ping says. */
interface PingInput {
  method: string;
  key: string;
  signal: string | undefined;
  status: string | undefined;
  rid: string | undefined;
  contentType: string | undefined;
  /** The request, whose body is read; its stream is made only if it is read in chunks. */
  request: Request;
  /** Whether there is a body. */
  hasBody: boolean;
  /** The body's length when known: a body within what is read is read whole. */
  whole?: number;
  address: string;
}

/** At most `max` bytes of a ping's body: read whole when its known length is within `max`. */
async function readBody(p: PingInput, max: number): Promise<Uint8Array> {
  if (p.whole !== undefined && p.whole <= max) {
    try {
      return await p.request.bytes();
    } catch (err) {
      throw new BodyReadError(err);
    }
  }
  return await readChunks(p.request.body!, max);
}

/**
 * The status text and body of a ping: `?status=` or a JSON body `{status}`; the body (any
 * type) is kept as text up to BODY_MAX bytes. A JSON body is read whole, up to JSON_BODY_LIMIT
 * (over it: 413); any other only up to BODY_MAX. The route reads its own body (`bodyLimit: "own"`):
 * no stream is wrapped for a ping.
 */
async function statusOf(p: PingInput): Promise<{ status: string; body: string }> {
  let status = p.status;
  let body = "";
  if (p.method !== "POST" || !p.hasBody) {
    return { status: cutChars((status ?? "").trim(), STATUS_MAX), body };
  }
  if (!/json/i.test(p.contentType ?? "")) {
    body = cutText(await readBody(p, BODY_MAX), BODY_MAX);
  } else {
    const bytes = await readBody(p, JSON_BODY_LIMIT + 1);
    if (bytes.length > JSON_BODY_LIMIT) fail(413, `body over ${JSON_BODY_LIMIT} bytes`);
    const raw = dec.decode(bytes);
    body = bytes.length <= BODY_MAX ? raw : cutText(bytes, BODY_MAX);
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

/** Records one ping (GET or POST); throws ApiError for 429, 400 and an unknown key (404). */
async function ping(deps: Deps, p: PingInput) {
  if (p.method === "POST" && p.whole !== undefined && p.whole > JSON_BODY_LIMIT) {
    fail(413, `body over ${JSON_BODY_LIMIT} bytes`);
  }
  const verdict = countHeartbeat(deps, p.address);
  if (!verdict.ok) {
    fail(429, "too many heartbeats from this address: at most 600 an hour", {
      retry_after: verdict.retryAfter,
    }, { "Retry-After": String(verdict.retryAfter) });
  }
  if (p.rid !== undefined && !UUID_RE.test(p.rid)) {
    fail(400, "rid: must be a UUID", { field: "rid" });
  }
  const { status, body } = await statusOf(p);
  const { kind, code } = signalOf(p.signal);
  const rid = p.rid?.toLowerCase() ?? null;
  const signal: Signal = { kind, code, rid, body, origin: roughOrigin(p.address) };
  const done = await beat(deps, p.key, status, signal, p.method, resumeWith(deps));
  if (done === "post only") {
    fail(405, "this service takes POST only: send POST to record a beat", {}, { Allow: "POST" });
  }
  if (typeof done !== "object") fail(404, "unknown hook key");
  return pingAnswer(done.ref, done.at);
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
    // Counted, timed and logged by the handler itself (its routes come ahead of the app's
    // middleware: areas.ts `first`); a success ping (no signal) counted by its outcome too.
    const answer = measuredHandler(
      `/api${route.path.replace(/\{(\w+)\}/g, ":$1")}`,
      handle,
      route.params === params ? countSuccessPing : undefined,
    );
    for (const method of ["get", "post"] as const) {
      app.openapi(
        createRoute({
          method,
          path: route.path,
          bodyLimit: "own",
          // Read by `handle` itself: the cost of a ping is measured against a floor.
          validate: false,
          tags: ["services"],
          summary: route.summary,
          description: "The status comes from `?status=` or a JSON body `{status}`; a POST " +
            `body (any type) is kept as text up to ${BODY_MAX} bytes with the event; \`rid\` ` +
            "(a UUID) pairs a start with its end. `fail` and non-zero exit codes turn the " +
            "service off at once; `log` changes nothing. 600 calls an hour per address. " +
            "Answered once the signal is stored durably.",
          request: { params: route.params, query },
          responses: { 200: jsonResponse(Answer), ...errors(400, 404, 405, 429) },
        }),
        answer,
      );
    }
  }

  async function handle(c: Ctx) {
    // Hono answers HEAD with the GET handler. HEAD is safe by definition: a link preview or
    // a checker sending one must not record a beat that hides an outage (as /api/verify).
    if (c.req.method === "HEAD") {
      fail(405, "send GET or POST to record a beat", {}, { Allow: "GET, POST" });
    }
    const signal = c.req.param("signal");
    if (signal !== undefined && !SIGNAL.test(signal)) fail(404, "not found");
    const length = c.req.header("content-length");
    const answer = await ping(deps, {
      method: c.req.method,
      key: c.req.param("key")!,
      signal,
      status: c.req.query("status"),
      rid: c.req.query("rid"),
      contentType: c.req.header("content-type"),
      request: c.req.raw,
      // The length first: asking for `body` makes a stream, then read chunk by chunk. A body
      // whose length is known is read at once, without a reader and a promise per chunk.
      hasBody: length === undefined ? c.req.raw.body !== null : Number(length) > 0,
      whole: length === undefined ? undefined : Number(length),
      address: clientOrigin(deps, c),
    });
    // A Response of its own: Hono's c.json() and c.header() build its headers twice over.
    return new Response(JSON.stringify(answer), { status: 200, headers: ANSWER_HEADERS });
  }
  return app;
}

/** Counts a success ping (one without a signal) by its outcome. */
function countSuccessPing(status: number): void {
  count("catalogue_heartbeats_total", OUTCOMES[status] ?? 'outcome="refused"');
}

const ANSWER_HEADERS = {
  "content-type": "application/json",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};
const OUTCOMES: Record<number, string> = {
  200: 'outcome="stored"',
  404: 'outcome="unknown_key"',
  429: 'outcome="limited"',
};
