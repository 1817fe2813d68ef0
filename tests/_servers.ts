/** Local servers and certificates for end-to-end check tests: 127.0.0.1 only, port 0. */
import type { Connector } from "../lib/net.ts";

export interface Local {
  port: number;
  close(): Promise<void>;
}

export function localHttp(
  handler: (req: Request) => Response | Promise<Response>,
  tls?: { cert: string; key: string },
): Local {
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
    ...(tls ?? {}),
  }, handler);
  return { port: server.addr.port, close: () => server.shutdown() };
}

/**
 * A local HTTP target for checks: answers "fine", or 503 "down" while `failing` is set.
 * `check` is the service's check; `await using` closes it.
 */
export function flakyTarget() {
  const target = { failing: false, check: "" };
  const srv = localHttp(() =>
    target.failing ? new Response("down", { status: 503 }) : new Response("fine")
  );
  target.check = `url:http://127.0.0.1:${srv.port}/`;
  return Object.assign(target, { [Symbol.asyncDispose]: () => srv.close() });
}

/** A TLS listener that completes handshakes and nothing else. */
export function localTls(tls: { cert: string; key: string }): Local {
  const listener = Deno.listenTls({ hostname: "127.0.0.1", port: 0, ...tls });
  const conns = new Set<Deno.Conn>();
  const loop = (async () => {
    for await (const c of listener) {
      conns.add(c);
      c.handshake().catch(() => {}).finally(() => {
        setTimeout(() => {
          try {
            c.close();
          } catch { /* closed */ }
          conns.delete(c);
        }, 50);
      });
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async close() {
      listener.close();
      await loop;
      await new Promise((r) => setTimeout(r, 60));
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * A connector that sends every connection to 127.0.0.1 (the port asked, or `port`), and
 * records which checked address each was meant for.
 */
export function loopbackConnector(port?: number): Connector & { asked: string[] } {
  const asked: string[] = [];
  const c = ((opts: { hostname: string; port: number }) => {
    asked.push(`${opts.hostname}:${opts.port}`);
    return Deno.connect({ hostname: "127.0.0.1", port: port ?? opts.port });
  }) as Connector & { asked: string[] };
  c.asked = asked;
  return c;
}

export interface Certs {
  ca: string;
  cert: string;
  key: string;
}

async function openssl(dir: string, args: string[]) {
  const out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

/** A test CA and a leaf certificate for `names`, valid `days` days, made with openssl. */
export async function makeCerts(names: string[], days: number): Promise<Certs> {
  const dir = await Deno.makeTempDir({ prefix: "i5-certs-" });
  try {
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    await openssl(dir, [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "30",
      "-subj",
      "/CN=Test CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    await openssl(dir, [
      "req",
      ...ec,
      "-keyout",
      "leaf.key",
      "-out",
      "leaf.csr",
      "-subj",
      `/CN=${names[0]}`,
    ]);
    const san = names.map((n) => /^[0-9.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`).join(",");
    await Deno.writeTextFile(
      `${dir}/ext.cnf`,
      `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`,
    );
    await openssl(dir, [
      "x509",
      "-req",
      "-in",
      "leaf.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "leaf.pem",
      "-days",
      String(days),
      "-extfile",
      "ext.cnf",
    ]);
    return {
      ca: await Deno.readTextFile(`${dir}/ca.pem`),
      cert: await Deno.readTextFile(`${dir}/leaf.pem`),
      key: await Deno.readTextFile(`${dir}/leaf.key`),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export interface ReceivedPost {
  /** When it arrived (this process's clock). */
  at: number;
  body: Record<string, unknown> & { event?: string; service?: { name?: string } | null };
  raw: string;
  signature: string | null;
  id: string | null;
}

/**
 * An alert channel's receiver: HTTPS on 127.0.0.1 with `certs` (the server trusts their CA
 * through DENO_CERT), keeping every post with its signature headers.
 */
export function webhookReceiver(certs: Certs) {
  const posts: ReceivedPost[] = [];
  /** Posts answered 503 while `failing` was set (their X-Webhook-Id). */
  const refused: string[] = [];
  const srv = localHttp(async (req) => {
    const raw = await req.text();
    if (receiver.failing) {
      refused.push(req.headers.get("x-webhook-id") ?? "");
      return new Response("busy", { status: 503 });
    }
    const post: ReceivedPost = {
      at: Date.now(),
      body: JSON.parse(raw),
      raw,
      signature: req.headers.get("x-signature-256"),
      id: req.headers.get("x-webhook-id"),
    };
    posts.push(post);
    // A receiver that hangs after taking the post: the sender does not know it was delivered.
    while (receiver.holding(post)) await new Promise((r) => setTimeout(r, 50));
    return new Response(null, { status: 204 });
  }, certs);
  const receiver = {
    url: `https://127.0.0.1:${srv.port}/alerts`,
    posts,
    refused,
    failing: false,
    holding: (_post: ReceivedPost) => false,
    [Symbol.asyncDispose]: () => srv.close(),
  };
  return receiver;
}

/** HMAC-SHA256 of `body` with `secret`, as `sha256=<hex>` (the X-Signature-256 header). */
export async function hmacSignature(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(body)));
  return "sha256=" + [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A url check's target that can be stopped and started again on the same port (a stopped one
 * refuses connections).
 */
export function stoppableTarget() {
  const serve = (port: number) =>
    Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, () => new Response("fine"));
  let server: Deno.HttpServer<Deno.NetAddr> | null = serve(0);
  const port = server.addr.port;
  return {
    check: `url:http://127.0.0.1:${port}/`,
    async stop() {
      await server?.shutdown();
      server = null;
    },
    start() {
      server ??= serve(port);
    },
    [Symbol.asyncDispose]: async () => await server?.shutdown(),
  };
}
