/**
 * Answers go out compressed when the client accepts it: pages, JSON and static files, with
 * Vary: Accept-Encoding; not without Accept-Encoding, not for HEAD, not for a ping, not when
 * shorter than 1 KB.
 */
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { testApp } from "./_helpers.ts";

Deno.test("compression: pages, JSON and static files when accepted, never pings", async () => {
  await using t = await testApp();
  const { token } = await t.account("zoe@example.org", { name: "Zoe" });
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    t.app.request(`http://localhost${path}`, { method, headers });

  const page = await get("/", { "accept-encoding": "gzip, deflate, br" });
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-encoding"), "gzip");
  assert.match(page.headers.get("vary") ?? "", /Accept-Encoding/i);
  const zipped = new Uint8Array(await page.arrayBuffer());
  const html = new TextDecoder().decode(gunzipSync(zipped));
  assert.match(html, /^<!DOCTYPE html>/);
  assert.ok(zipped.length < html.length / 2, `${zipped.length} of ${html.length} bytes`);

  // Vary is set once, also when this request did not ask for compression (a cache may hold
  // the answer for one that does).
  const me = await get("/api/me", { authorization: `Bearer ${token}` });
  assert.equal(me.headers.get("vary"), "Accept-Encoding");
  assert.equal(me.headers.get("content-encoding"), null);
  await me.body?.cancel();
  // A short answer goes out as it is, with its length, also to a client that accepts gzip: under
  // compress's threshold (1 KB) gzip makes it no smaller, and would send it chunked.
  const short = await get("/api/me", {
    authorization: `Bearer ${token}`,
    "accept-encoding": "gzip, deflate, br",
  });
  assert.equal(short.status, 200);
  assert.equal(short.headers.get("content-encoding"), null);
  assert.equal(short.headers.get("vary"), "Accept-Encoding");
  const shortBody = new Uint8Array(await short.arrayBuffer());
  assert.equal(short.headers.get("content-length"), String(shortBody.length));
  assert.equal(JSON.parse(new TextDecoder().decode(shortBody)).name, "Zoe");
  const robots = await get("/robots.txt", { "accept-encoding": "gzip" });
  assert.equal(robots.headers.get("content-encoding"), null, "a short page as it is");
  assert.match(await robots.text(), /User-agent/i);

  const plain = await get("/");
  assert.equal(plain.headers.get("content-encoding"), null, "not without Accept-Encoding");
  assert.match(await plain.text(), /^<!DOCTYPE html>/);
  const head = await get("/", { "accept-encoding": "gzip" }, "HEAD");
  assert.equal(head.headers.get("content-encoding"), null, "not for HEAD");
  await head.body?.cancel();

  const css = html.match(/href="(\/static\/site\.css\?v=[^"]+)"/)![1];
  const style = await get(css, { "accept-encoding": "gzip" });
  assert.equal(style.headers.get("content-encoding"), "gzip");
  assert.match(
    new TextDecoder().decode(gunzipSync(new Uint8Array(await style.arrayBuffer()))),
    /--fg/,
  );

  const json = await t.app.request("http://localhost/api/openapi.json", {
    headers: { "accept-encoding": "gzip" },
  });
  assert.equal(json.headers.get("content-encoding"), "gzip");
  JSON.parse(new TextDecoder().decode(gunzipSync(new Uint8Array(await json.arrayBuffer()))));

  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Backup", check: "webhook:" },
  });
  const hook = new URL(made.body.hook_url).pathname;
  const ping = await get(hook, { "accept-encoding": "gzip" });
  assert.equal(ping.status, 200);
  assert.equal(ping.headers.get("content-encoding"), null, "a ping answers as it is");
  await ping.body?.cancel();
});
