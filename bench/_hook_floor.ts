/**
 * The floor of the heartbeat benchmark (bench/heartbeat.ts): a bare Deno.serve doing the
 * durable work of a ping and nothing else. It reads the body, finds the hook in a map (key ->
 * service, from the JSON file HOOKS_FILE), and group-commits the beat, the event (with its
 * body) and the per-address count to a KV file (KV_PATH), answering each ping after the
 * commit that carries it, as kv/service/heartbeats.ts does. No routing library, no validation, no
 * hashing, no rate limit decision, no log line.
 */
const kv = await Deno.openKv(Deno.env.get("KV_PATH"));
const hooks = new Map<string, { account: number; id: number; name: string }>(
  Object.entries(JSON.parse(await Deno.readTextFile(Deno.env.get("HOOKS_FILE")!))),
);
const headers = { "content-type": "application/json" };
const PREFIX = "/api/hooks/";
const HOUR = 3_600_000;

interface QueuedPing {
  account: number;
  id: number;
  body: string;
  address: string;
  at: number;
  done: () => void;
}

let queue: QueuedPing[] = [];
let committing = false;
let nonce = 0;

async function drain() {
  while (queue.length > 0) {
    const batch = queue.slice(0, 400);
    queue = queue.slice(batch.length);
    const op = kv.atomic();
    const counts = new Map<string, bigint>();
    for (const p of batch) {
      op.set(["beats", p.account, p.id], { at: p.at, status: "ok" });
      op.set(["service_events", p.account, p.id, p.at, nonce++], {
        kind: "success",
        at: p.at,
        status: "ok",
        body: p.body,
      });
      counts.set(p.address, (counts.get(p.address) ?? 0n) + 1n);
    }
    const window = (Math.floor(Date.now() / HOUR) + 1) * HOUR;
    for (const [address, n] of counts) op.sum(["rate", window, "heartbeat", address], n);
    await op.commit();
    for (const p of batch) p.done();
  }
}

function flush() {
  if (committing) return;
  committing = true;
  queueMicrotask(() => drain().finally(() => (committing = false)));
}

Deno.serve({
  port: Number(Deno.env.get("PORT") ?? 8000),
  hostname: "127.0.0.1",
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, async (req) => {
  const path = new URL(req.url).pathname;
  const hook = path.startsWith(PREFIX) ? hooks.get(path.slice(PREFIX.length)) : undefined;
  const body = await req.text();
  if (!hook) return new Response('{"error":"unknown hook key"}', { status: 404, headers });
  const at = Date.now();
  await new Promise<void>((done) => {
    queue.push({
      account: hook.account,
      id: hook.id,
      body,
      address: req.headers.get("x-forwarded-for") ?? "",
      at,
      done,
    });
    flush();
  });
  return new Response(
    JSON.stringify({ ok: true, service: hook.name, received: new Date(at).toISOString() }),
    { headers },
  );
});
