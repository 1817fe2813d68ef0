/**
 * A server-like process for tests/auth_cache_test.ts: opens the KV file with openKv, looks a
 * token up, then looks it up again on every line read from stdin, printing the roles it got.
 * Run with read permission for the KV file only, as an operator may start the server.
 */
import { openKv } from "../kv/_atomic.ts";
import { findSession } from "../kv/sessions.ts";

const [path, token, now] = Deno.args;
const kv = await openKv(path);
const lookUp = async () => {
  const found = await findSession(kv, token, Number(now));
  console.log(JSON.stringify(found?.account.roles ?? null));
};
await lookUp();
for await (const line of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  if (line.trim() === "") continue;
  await lookUp();
}
kv.close();
