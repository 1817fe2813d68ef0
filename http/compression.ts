/**
 * Pages, JSON and static files go out gzip- or deflate-compressed when the client accepts it:
 * Hono's compress (text types only, an answer under 1 KB, HEAD and 206 left alone; it adds Vary
 * and weakens an ETag), with `shortAnswers` inside it, which sees the answer first. A request
 * that accepts neither encoding skips compress, which would only set Vary: `shortAnswers` does.
 *
 * `shortAnswers` runs on the answer before compress looks at it. `Vary: Accept-Encoding` is set in place: compress sets it with
 * `c.header()`, which after `next()` copies the whole answer into a new Response. And a short
 * answer gets its length: compress leaves an answer of a known length under its threshold as it
 * is, but Hono's `c.json` and `c.html` give none, and compress compresses every answer of unknown
 * length, so a JSON answer of a few hundred bytes would go out gzipped and chunked, no smaller, at
 * twice the CPU. Only a request that accepts gzip or deflate is read for its length; the others
 * are not compressed anyway.
 */
import type { Context, Next } from "hono";
import { compress, COMPRESSIBLE_CONTENT_TYPE_REGEX } from "hono/compress";
import { joinBytes } from "../lib/bytes.ts";
import type { AppEnv } from "./router.ts";

/** A middleware that answers nothing itself: it runs the rest and works on its answer. */
type Layer = (c: Context<AppEnv>, next: Next) => Promise<void>;

export function compression(): Layer {
  const compressed = compress() as Layer;
  return (c, next) =>
    ACCEPTS_ENCODING.test(c.req.header("Accept-Encoding") ?? "")
      ? compressed(c, () => shortAnswers(c, next))
      : shortAnswers(c, next);
}

const shortAnswers: Layer = async (c, next) => {
  await next();
  if (!mayCompress(c)) return;
  varyOnEncoding(c);
  // `body` last: its getter turns an answer's bytes into a stream, which Deno then sends as
  // one; an answer this step does not read keeps its bytes.
  if (
    !c.res.headers.has("Content-Length") &&
    ACCEPTS_ENCODING.test(c.req.header("Accept-Encoding") ?? "") && c.res.body !== null
  ) {
    await lengthWhenShort(c);
  }
};

/** Whether compress may compress this answer: its own conditions, in its order. */
function mayCompress(c: Context<AppEnv>): boolean {
  const h = c.res.headers;
  const length = h.get("Content-Length");
  return !(
    c.res.status === 206 || h.has("Content-Encoding") || h.has("Transfer-Encoding") ||
    c.req.method === "HEAD" || (length && Number(length) < COMPRESS_THRESHOLD) ||
    !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(h.get("Content-Type") ?? "") ||
    NO_TRANSFORM.test(h.get("Cache-Control") ?? "")
  );
}

/** Sets Vary on an answer compress may compress, as compress would. */
function varyOnEncoding(c: Context<AppEnv>): void {
  const vary = c.res.headers.get("Vary");
  if (vary === "*" || (vary && VARY_ENCODING.test(vary))) return;
  setHeader(c, "Vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
}

/**
 * Reads an answer of unknown length up to compress's threshold. One that ends before it is
 * answered with its length (so compress leaves it); a longer one goes on as a stream of what was
 * read and the rest. A streamed answer is never read further than the threshold.
 */
async function lengthWhenShort(c: Context<AppEnv>): Promise<void> {
  const res = c.res;
  const reader = res.body!.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  let short = false;
  while (size < COMPRESS_THRESHOLD) {
    const { done, value } = await reader.read();
    if (done) {
      short = true;
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const body = short ? joinBytes(chunks, size) : new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const answer = new Response(body, res);
  if (short) answer.headers.set("Content-Length", String(size));
  // Unset first: Hono's setter would otherwise copy the new answer once more, into a stream.
  c.res = undefined;
  c.res = answer;
}

/** Compress's default: an answer of a known length under this is sent as it is. */
const COMPRESS_THRESHOLD = 1024;
const NO_TRANSFORM = /(?:^|,)\s*?no-transform\s*?(?:,|$)/i;
const VARY_ENCODING = /(?:^|,)\s*accept-encoding\s*(?:,|$)/i;
/** An Accept-Encoding that names an encoding compress uses (gzip, deflate) or any (`*`). */
const ACCEPTS_ENCODING = /gzip|deflate|\*/i;

/** Sets a header on the answer in place; a Response with immutable headers is copied instead. */
export function setHeader(c: Context<AppEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}
