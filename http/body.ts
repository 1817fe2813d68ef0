/** Request bodies: their limit, and those that end early, told apart from every other failure. */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/** JSON bodies larger than this answer 413, unless a route declares its own limit. */
export const JSON_BODY_LIMIT = 1024 * 1024;

/** A request body that could not be read to its end: cut off by the client, or gone with it. */
export class BodyReadError extends Error {
  constructor(cause: unknown) {
    super("the request body could not be read to its end", { cause });
    this.name = "BodyReadError";
  }
}

/**
 * The request with its body stream wrapped so that a failed read (the client cut the body
 * off or went away) surfaces as a BodyReadError, whichever layer reads it; without this it
 * is a network error indistinguishable from a closed database.
 */
function guardBody(req: Request): Request {
  const source = req.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        const { done, value } = await source.read();
        if (done) ctl.close();
        else ctl.enqueue(value);
      } catch (err) {
        ctl.error(new BodyReadError(err));
      }
    },
    cancel: (reason) => source.cancel(reason),
  });
  return withBody(req, body);
}

/**
 * A copy of `req` carrying `body`. Built from the address and headers, not from `req` itself:
 * `new Request(req, ...)` follows the original's `signal`, and Deno.serve warns once per process
 * on stderr about that signal's legacy abort behaviour (it aborts on a successful answer too).
 * Nothing here listens to a request's signal.
 */
export const withBody = (req: Request, body: ReadableStream<Uint8Array>): Request =>
  new Request(req.url, {
    method: req.method,
    headers: req.headers,
    body,
    duplex: "half",
    redirect: req.redirect,
  } as RequestInit);

export const causedByBody = (err: unknown): boolean =>
  err instanceof BodyReadError || (err instanceof Error && err.cause instanceof BodyReadError);

/**
 * A route's body: read through `guardBody`, over `max` bytes answered 413 (at once when
 * Content-Length says so, else when the stream passes it). A request without a body passes.
 */
export function limitBody(max: number): MiddlewareHandler {
  const limited = bodyLimit({
    maxSize: max,
    onError: (c) => c.json({ error: `body over ${max} bytes` }, 413),
  });
  return async (c, next) => {
    if (!c.req.raw.body) return await next();
    c.req.raw = guardBody(c.req.raw);
    return await limited(c, next);
  };
}
