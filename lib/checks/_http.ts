import type { Deps } from "../deps.ts";
import { refusingTls } from "../net.ts";

/**
 * A small HTTP/1.1 client over a connection to an already checked address. fetch() would
 * resolve the name again (DNS rebinding), so checks speak HTTP themselves: one request,
 * `Connection: close`, bounded headers and body.
 */

interface HttpRequest {
  /** The checked address to connect to (IP literal). */
  address: string;
  url: URL;
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";
  headers?: Record<string, string>;
  body?: string;
  /** Read the body up to this many bytes (0: headers only). */
  bodyLimit: number;
  /** Stops reading early once the body read so far is enough. */
  enough?: (body: string) => boolean;
}

interface HttpAnswer {
  status: number;
  headers: Headers;
  body: string;
}

const MAX_HEADER = 32 * 1024;
const enc = new TextEncoder();
const dec = new TextDecoder();

export class HttpError extends Error {
  override name = "HttpError";
}

/** Sends one request; the caller bounds the time by closing through `track`. */
export async function httpRequest(
  deps: Deps,
  req: HttpRequest,
  track: (c: Deno.Conn) => void,
): Promise<HttpAnswer> {
  const { url } = req;
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const tcp = await deps.connector({ hostname: req.address, port });
  track(tcp);
  let conn: Deno.Conn = tcp;
  if (url.protocol === "https:") {
    const name = url.hostname.replace(/^\[|\]$/g, "");
    conn = await (deps.tls ?? refusingTls).upgrade(tcp, name);
    track(conn);
  }
  try {
    const own = Object.entries(req.headers ?? {});
    const agent = own.some(([k]) => k.toLowerCase() === "user-agent");
    const lines = [
      `${req.method} ${url.pathname}${url.search} HTTP/1.1`,
      `Host: ${url.host}`,
      ...(agent ? [] : ["User-Agent: service-watch/1"]),
      "Connection: close",
      ...own.map(([k, v]) => `${k}: ${v}`),
    ];
    const payload = req.body === undefined ? undefined : enc.encode(req.body);
    if (payload) lines.push(`Content-Length: ${payload.length}`);
    await writeAll(conn, enc.encode(lines.join("\r\n") + "\r\n\r\n"));
    if (payload) await writeAll(conn, payload);
    return await readAnswer(conn, req);
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

async function writeAll(conn: Deno.Conn, data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += await conn.write(data.subarray(off));
}

/** Buffered reads over a connection. */
function reader(conn: Deno.Conn) {
  let buf = new Uint8Array(0);
  let eof = false;
  const chunk = new Uint8Array(16 * 1024);
  return {
    get buffered() {
      return buf;
    },
    get eof() {
      return eof;
    },
    async more(): Promise<boolean> {
      if (eof) return false;
      const n = await conn.read(chunk);
      if (n === null) {
        eof = true;
        return false;
      }
      const next = new Uint8Array(buf.length + n);
      next.set(buf);
      next.set(chunk.subarray(0, n), buf.length);
      buf = next;
      return true;
    },
    take(n: number): Uint8Array {
      const out = buf.slice(0, n);
      buf = buf.slice(n);
      return out;
    },
  };
}

function indexOf(hay: Uint8Array, needle: number[], from = 0): number {
  outer: for (let i = from; i <= hay.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

const CRLFCRLF = [13, 10, 13, 10];
const CRLF = [13, 10];

async function readAnswer(conn: Deno.Conn, req: HttpRequest): Promise<HttpAnswer> {
  const r = reader(conn);
  for (;;) {
    let end: number;
    while ((end = indexOf(r.buffered, CRLFCRLF)) < 0) {
      // A banner that is not HTTP (ssh, smtp) fails here instead of waiting out the limit.
      const eol = indexOf(r.buffered, CRLF);
      if (eol >= 0 && !/^HTTP\/1\.[01] /.test(dec.decode(r.buffered.subarray(0, eol)))) {
        throw new HttpError("not an HTTP answer");
      }
      if (r.buffered.length > MAX_HEADER) throw new HttpError("answer headers too large");
      if (!await r.more()) throw new HttpError("connection closed before an answer");
    }
    if (end > MAX_HEADER) throw new HttpError("answer headers too large");
    const head = dec.decode(r.take(end + 4)).split("\r\n");
    const m = head[0].match(/^HTTP\/1\.[01] ([0-9]{3})(?: .*)?$/);
    if (!m) throw new HttpError("not an HTTP answer");
    const status = Number(m[1]);
    const headers = new Headers();
    for (const line of head.slice(1)) {
      const i = line.indexOf(":");
      if (i > 0) {
        try {
          headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
        } catch { /* an invalid header is ignored */ }
      }
    }
    if (status >= 100 && status < 200 && status !== 101) continue;
    if (req.bodyLimit === 0 || status === 204 || status === 304 || req.method === "HEAD") {
      return { status, headers, body: "" };
    }
    const body = await readBody(r, headers, req);
    return { status, headers, body };
  }
}

async function readBody(
  r: ReturnType<typeof reader>,
  headers: Headers,
  req: HttpRequest,
): Promise<string> {
  const limit = req.bodyLimit;
  const parts: Uint8Array[] = [];
  let size = 0;
  const text = () => {
    const all = new Uint8Array(size);
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    return dec.decode(all);
  };
  const push = (p: Uint8Array): boolean => {
    const room = limit - size;
    parts.push(p.length > room ? p.subarray(0, room) : p);
    size += Math.min(p.length, room);
    return size >= limit || (req.enough?.(text()) ?? false);
  };
  if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) {
    for (;;) {
      let eol: number;
      while ((eol = indexOf(r.buffered, CRLF)) < 0) {
        if (!await r.more()) return text();
      }
      const sizeLine = dec.decode(r.take(eol + 2)).trim().split(";")[0];
      if (!/^[0-9a-f]+$/i.test(sizeLine)) throw new HttpError("bad chunked encoding");
      let left = parseInt(sizeLine, 16);
      if (left === 0) return text();
      while (left > 0) {
        if (r.buffered.length === 0 && !await r.more()) return text();
        const piece = r.take(Math.min(left, r.buffered.length));
        left -= piece.length;
        if (push(piece)) return text();
      }
      while (r.buffered.length < 2) if (!await r.more()) return text();
      r.take(2);
    }
  }
  const declared = headers.get("content-length");
  let left = declared && /^[0-9]+$/.test(declared) ? Number(declared) : Infinity;
  while (left > 0) {
    if (r.buffered.length === 0 && !await r.more()) break;
    const piece = r.take(Math.min(left, r.buffered.length));
    left -= piece.length;
    if (push(piece)) break;
  }
  return text();
}
