import type { Context } from "hono";
import { errorKind, log, stackFrames } from "../lib/log.ts";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConflictError, isLocked } from "../kv/_atomic.ts";
import { DomainError, type ErrorKind } from "../lib/errors.ts";
import { causedByBody } from "./body.ts";

/**
 * The JSON API's errors: one mapping from domain errors (lib/errors.ts) to `{error, ...extra}`
 * answers, and `fail` for what only HTTP knows (a missing token, a malformed request).
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function fail(
  status: ContentfulStatusCode,
  message: string,
  extra?: Record<string, unknown>,
  headers?: Record<string, string>,
): never {
  throw new ApiError(status, message, extra, headers);
}

export const STATUS_OF: Record<ErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported: 415,
  limited: 429,
};

/** The status a domain or API error answers with; 0 for any other error (a bug). */
export function statusOf(err: unknown): number {
  if (err instanceof ApiError) return err.status;
  if (err instanceof DomainError) return STATUS_OF[err.kind];
  return 0;
}

/** What an error answers: status, `{error, ...extra}` and headers; null for a bug (500). */
function errorAnswer(
  err: Error,
):
  | { status: ContentfulStatusCode; body: Record<string, unknown>; headers: Record<string, string> }
  | null {
  if (causedByBody(err)) {
    // The client may be gone already; if not, the answer tells it the truth.
    return { status: 400, body: { error: "request body cut off before its end" }, headers: {} };
  }
  if (err instanceof DomainError) {
    const headers: Record<string, string> = err.retryAfter !== undefined
      ? { "Retry-After": String(err.retryAfter) }
      : {};
    return { status: STATUS_OF[err.kind], body: { error: err.message, ...err.extra }, headers };
  }
  if (err instanceof ApiError) {
    return { status: err.status, body: { error: err.message, ...err.extra }, headers: err.headers };
  }
  if (err instanceof HTTPException) {
    // Hono's own validators: unreadable JSON, or a body that is not JSON.
    const status = err.status === 415 ? 400 : err.status as ContentfulStatusCode;
    const message = err.status === 415 || /json/i.test(err.message)
      ? "body must be a JSON object (Content-Type: application/json)"
      : err.message || "bad request";
    return { status, body: { error: message }, headers: {} };
  }
  if (err instanceof ConflictError) {
    return { status: 503, body: { error: err.message }, headers: { "Retry-After": "1" } };
  }
  if (err instanceof Deno.errors.BadResource || isLocked(err)) {
    // The KV is closed or stays locked: the database does not answer, as healthz says.
    return {
      status: 503,
      body: { error: "the database does not answer; try again later" },
      headers: { "Retry-After": "5" },
    };
  }
  return null;
}

/** Logs a bug: the route pattern only (paths may hold secrets), never bodies or addresses. */
export function logBug(method: string, route: string, err: Error): void {
  log("error", "internal error", { method, route, error: errorKind(err), at: stackFrames(err) });
}

/** The app's error handler: every error becomes `{error}` JSON; only bugs answer 500. */
export function answerError(err: Error, c: Context) {
  const a = errorAnswer(err);
  if (a) {
    for (const [k, v] of Object.entries(a.headers)) c.header(k, v);
    return c.json(a.body, a.status);
  }
  logBug(c.req.method, c.req.routePath, err);
  return c.json({ error: "internal error" }, 500);
}
