/**
 * The yardstick of `deno task bench`: a bare Deno.serve answering the same JSON as the
 * service (bodies given by bench/run.ts), with no framework, validation or KV behind it.
 */
const healthz = Deno.env.get("BARE_HEALTHZ") ?? '{"ok":true,"db":"ok","migrations":1}';
const me = Deno.env.get("BARE_ME") ?? "{}";
const search = '{"ok":true,"people":[],"journal":[],"modules":[]}';
const headers = { "content-type": "application/json" };

Deno.serve({
  port: Number(Deno.env.get("PORT") ?? 8000),
  hostname: Deno.env.get("HOSTNAME") ?? "127.0.0.1",
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/api/healthz") return new Response(healthz, { headers });
  if (path === "/api/me") return new Response(me, { headers });
  if (path === "/api/search") return new Response(search, { headers });
  if (path.startsWith("/api/hooks/")) {
    const answer = { ok: true, service: "Bench", received: new Date().toISOString() };
    return new Response(JSON.stringify(answer), { headers });
  }
  return new Response('{"error":"not found"}', { status: 404, headers });
});
