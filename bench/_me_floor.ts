/**
 * The naive floor of `GET /api/me` (bench/run.ts): a bare Deno.serve that does the durable
 * work of an authenticated request and nothing else: the bearer token's hash, the session and
 * the account read together from the KV file on every request, the expiry checked, and the
 * same JSON as the service's answer. No framework, validation, cache or log.
 */
import { type Account, accountView } from "../kv/accounts/accounts.ts";
import { sha256hex } from "../lib/crypto.ts";

const kv = await Deno.openKv(Deno.env.get("KV_PATH"));
const headers = { "content-type": "application/json" };
const unauthorized = () => new Response('{"error":"sign in first"}', { status: 401, headers });

Deno.serve({
  port: Number(Deno.env.get("PORT") ?? 8000),
  hostname: Deno.env.get("HOSTNAME") ?? "127.0.0.1",
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, async (req) => {
  if (new URL(req.url).pathname !== "/api/me") return new Response(null, { status: 404 });
  const token = req.headers.get("authorization")?.match(/^Bearer (\d+)_[\w-]{43}$/);
  if (!token) return unauthorized();
  const [session, account] = await kv.getMany<[{ expires: number; account: number }, Account]>([
    ["sessions", sha256hex(token[0].slice(7))],
    ["accounts", Number(token[1])],
  ]);
  const s = session.value;
  if (!s || s.expires <= Date.now() || !account.value || s.account !== account.value.id) {
    return unauthorized();
  }
  return new Response(JSON.stringify({ ...accountView(account.value), application: null }), {
    headers,
  });
});
