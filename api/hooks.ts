import { z } from "zod";
import {
  beat,
  BODY_MAX,
  countHeartbeat,
  pingAnswer,
  type Resume,
  type Signal,
} from "../kv/hooks.ts";
import { roughOrigin } from "../lib/ip.ts";
import type { Deps } from "../lib/deps.ts";
import { errorAnswer, fail, logBug } from "../http/errors.ts";
import { BodyReadError, JSON_BODY_LIMIT } from "../http/body.ts";
import { count } from "../lib/metrics.ts";
import { cutChars } from "../lib/text.ts";
import { createRoute, type Ctx, errors, json, router, type Taken } from "../http/router.ts";
import { clientOrigin } from "../http/guards.ts";
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
  import("../kv/services.ts").then((m) => m.resumeByPing(deps, ref.account, ref.id));

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

/** What a ping says, from the routes or from `pingRoute` alike. */
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
  /** The body's length when known (`pingRoute`): a body within what is read is read whole. */
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
 * type) is kept as text up to BODY_MAX bytes. A JSON body is read whole (the app's body
 * limit bounds it); any other only up to BODY_MAX.
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
    const bytes = await readBody(p, Infinity);
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
  // What the area's front (`hookFront`) did not take: counted as it counts its own.
  app.use("/hooks/*", async (c, next) => {
    await next();
    if (SUCCESS_PING.test(c.req.path)) countSuccessPing(c.res.status);
  });
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
          responses: { 200: json(Answer), ...errors(400, 404, 405, 429) },
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
    const answer = await ping(deps, {
      method: c.req.method,
      key: c.req.param("key")!,
      signal: c.req.param("signal"),
      status: c.req.query("status"),
      rid: c.req.query("rid"),
      contentType: c.req.header("content-type"),
      request: c.req.raw,
      hasBody: c.req.raw.body !== null,
      address: clientOrigin(deps, c),
    });
    c.header("Cache-Control", "no-store");
    return c.json(answer, 200);
  }
  return app;
}

/** Counts a success ping (one without a signal) by its outcome. */
function countSuccessPing(status: number): void {
  count("catalogue_heartbeats_total", OUTCOMES[status] ?? 'outcome="refused"');
}

/**
 * The hooks area's front (app.ts): a well-formed ping is answered ahead of the app-wide
 * middleware and the routes' validators; any other goes on to the routes, which answer it the
 * same way.
 */
export const hookFront = (deps: Deps) => pingRoute(deps, JSON_BODY_LIMIT);

/** A success ping's path (no signal): the pings counted by outcome. */
const SUCCESS_PING = /^\/api\/hooks\/[^/]+$/;
const OUTCOMES: Record<number, string> = {
  200: 'outcome="stored"',
  404: 'outcome="unknown_key"',
  429: 'outcome="limited"',
};

/** A ping's path `pingRoute` takes: a well-formed key and signal, nothing else. */
const PING_PATH =
  /^\/api\/hooks\/([A-Za-z0-9_-]{43})(?:\/(start|fail|log|[0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5]))?$/;
/** What comes before a ping's path in its URL: the scheme and host only. */
const ORIGIN = /^https?:\/\/[^/]*$/;
const JSON_HEADERS = {
  "content-type": "application/json",
  "x-content-type-options": "nosniff",
};
const ANSWER_HEADERS = { ...JSON_HEADERS, "cache-control": "no-store" };

/**
 * An answer of a few bytes; Deno sends its length. A front's answer passes no app-wide
 * middleware, so it goes out uncompressed: at this size compression would gain nothing.
 */
export function sized(text: string, status: number, headers: Record<string, string>): Response {
  return new Response(text, { status, headers });
}

/**
 * The heartbeat's hot path, the hooks area's front (`hookFront`): the same `ping`,
 * the same answers and errors as the routes, without the route layer's validators, for
 * the requests whose form it can tell at a glance (GET or POST, a well-formed key and signal,
 * `status` and `rid` at most once each, a body with a length within `bodyLimit`). Anything
 * else gets null and goes on (`next`) to the routes, which answer it as well. The app counts,
 * times and logs a taken ping as any request.
 */
export function pingRoute(deps: Deps, bodyLimit: number) {
  return (c: Ctx): Taken | null => {
    const req = c.req.raw;
    if (req.method !== "GET" && req.method !== "POST") return null;
    const url = req.url;
    const q = url.indexOf("?");
    const start = url.indexOf("/api/hooks/");
    if (start < 0) return null;
    const m = PING_PATH.exec(q < 0 ? url.slice(start) : url.slice(start, q));
    if (!m || !ORIGIN.test(url.slice(0, start))) return null;
    let status: string | undefined;
    let rid: string | undefined;
    if (q >= 0) {
      const params = new URLSearchParams(url.slice(q + 1));
      const all = params.getAll("status");
      const rids = params.getAll("rid");
      if (all.length > 1 || rids.length > 1) return null;
      status = all[0];
      rid = rids[0];
    }
    let length = 0;
    if (req.method === "POST") {
      // The length first: asking for `req.body` makes a stream, read chunk by chunk.
      const given = req.headers.get("content-length");
      if (given === null) {
        if (req.body) return null;
      } else {
        length = Number(given);
        if (!(length >= 0 && length <= bodyLimit)) return null;
      }
    }
    const route = m[2] === undefined ? "/api/hooks/:key" : "/api/hooks/:key/:signal";
    const input: PingInput = {
      method: req.method,
      key: m[1],
      signal: m[2],
      status,
      rid,
      contentType: req.headers.get("content-type") ?? undefined,
      request: req,
      hasBody: length > 0,
      // The whole body, when its length says it is within what would be read of it: read at
      // once, without a reader and a promise per chunk.
      whole: length,
      address: clientOrigin(deps, c),
    };
    // A success ping (no signal) is counted by its outcome, as the area's routes count theirs.
    const answered = (res: Response) => {
      if (m[2] === undefined) countSuccessPing(res.status);
      return res;
    };
    const answer = ping(deps, input).then(
      (a) => answered(sized(JSON.stringify(a), 200, ANSWER_HEADERS)),
      (err) => answered(failureAnswer(req.method, route, err)),
    );
    return { route, answer };
  };
}

/** A refused or failed ping's answer: the error's status and words, or 500 for a bug. */
function failureAnswer(method: string, route: string, err: Error): Response {
  const e = errorAnswer(err);
  if (e) return sized(JSON.stringify(e.body), e.status, { ...JSON_HEADERS, ...e.headers });
  logBug(method, route, err);
  return sized('{"error":"internal error"}', 500, JSON_HEADERS);
}
