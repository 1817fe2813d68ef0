/**
 * Honest errors: a body the client cuts off or a malformed body answers 4xx and never claims
 * the database is down; a rate limit counts a call only when its write commits.
 */
import assert from "node:assert/strict";
import { rawRequest, type RealServer, startFreshServer } from "./_real_server.ts";
import { aroundCommits, testApp } from "./_helpers.ts";

const enc = new TextEncoder();

Deno.test("honest errors: bodies cut off on one real server", async (t) => {
  await using s = await startFreshServer();
  await t.step("a chunked JSON body cut off by the client answers 400, not 503", () => chunked(s));
  await t.step("a Content-Length JSON body cut short answers 400, not 503", () => counted(s));
});

async function chunked(s: RealServer) {
  const token = await s.signIn("ada@example.org");
  for (const [path, auth] of [["/api/verify/request", ""], ["/api/me/journal", token]]) {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "transfer-encoding": "chunked",
    };
    if (auth) headers["authorization"] = `Bearer ${auth}`;
    const res = await rawRequest(s.port, "POST", path, headers, async (write, conn) => {
      const part = enc.encode('{"email": "ada@exam');
      await write(enc.encode(part.length.toString(16) + "\r\n"));
      await write(part);
      await write(enc.encode("\r\n"));
      // Half-close mid-body: the chunked body never ends.
      await conn.closeWrite();
    });
    assert.equal(res.status, 400, `${path}: ${res.status} ${res.text}`);
    assert.doesNotMatch(res.text, /database/);
    assert.equal(typeof JSON.parse(res.text).error, "string");
  }
  // And the server still answers normally.
  assert.equal(
    await fetch(`${s.base}/api/healthz`).then(async (r) => {
      await r.body?.cancel();
      return r.status;
    }),
    200,
  );
}

async function counted(s: RealServer) {
  const res = await rawRequest(s.port, "POST", "/api/verify/request", {
    "content-type": "application/json",
    "content-length": "200",
  }, async (write, conn) => {
    await write(enc.encode('{"email": "ada@exam'));
    await conn.closeWrite();
  });
  assert.equal(res.status, 400, res.text);
  assert.doesNotMatch(res.text, /database/);
}

Deno.test("honest errors: a body stream that fails in process answers 400 with {error}", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  for (const path of ["/api/verify/request", "/api/me/journal", "/api/me/services"]) {
    const body = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(enc.encode('{"text": "hal'));
        ctl.error(new Deno.errors.BadResource("connection closed before message completed"));
      },
    });
    const res = await t.app.request(path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "transfer-encoding": "chunked",
        authorization: `Bearer ${token}`,
      },
      body,
      // @ts-ignore: a streamed request body needs duplex in fetch's RequestInit
      duplex: "half",
    }, { remoteAddr: { hostname: "192.0.2.1" } });
    assert.equal(res.status, 400, path);
    const j = await res.json();
    assert.equal(typeof j.error, "string");
    assert.doesNotMatch(j.error, /database/);
  }
});

/** The KV with every atomic that writes a key under `prefix` failing at commit, while `on`. */
function failingWrites(kv: Deno.Kv, prefix: string, state: { on: boolean }): Deno.Kv {
  return aroundCommits(
    kv,
    (commit, sets) =>
      state.on && sets.some((key) => key[0] === prefix)
        ? Promise.reject(new Deno.errors.BadResource("database closed"))
        : commit(),
  );
}

Deno.test("honest errors: a journal post whose write fails is not counted against the 60", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const raw = t.deps.kv;
  const state = { on: true };
  Object.assign(t.deps, { kv: failingWrites(raw, "journal", state) });
  for (let i = 0; i < 5; i++) {
    const r = await t.req("POST", "/api/me/journal", { token, body: { text: `lost ${i}` } });
    assert.equal(r.status, 503);
  }
  state.on = false;
  for (let i = 0; i < 60; i++) {
    const r = await t.req("POST", "/api/me/journal", { token, body: { text: `entry ${i}` } });
    assert.equal(r.status, 201, `post ${i}: ${r.text}`);
  }
  const over = await t.req("POST", "/api/me/journal", { token, body: { text: "one more" } });
  assert.equal(over.status, 429);
  assert.equal(over.body.retry_after, Number(over.headers.get("retry-after")));
  Object.assign(t.deps, { kv: raw });
});
