import assert from "node:assert/strict";
import { Frame, GIF, Image } from "imagescript";
import { MAX_AVATAR_BYTES, readHeader } from "../kv/files/avatars.ts";
import { dumpKv, testApp } from "./_helpers.ts";

/** A w x h picture: left half red, right half blue, so the centre crop shows in the result. */
function picture(w: number, h: number): Image {
  const img = new Image(w, h);
  img.fill(0x0000ffff);
  img.drawBox(1, 1, Math.floor(w / 2), h, 0xff0000ff);
  return img;
}

/** A PNG signature and IHDR declaring the given size, with no image data after it. */
function pngHeader(w: number, h: number): Uint8Array {
  const b = new Uint8Array(33);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const dv = new DataView(b.buffer);
  dv.setUint32(16, w);
  dv.setUint32(20, h);
  b.set([8, 6, 0, 0, 0], 24);
  return b;
}

async function upload(
  t: Awaited<ReturnType<typeof testApp>>,
  token: string,
  bytes: Uint8Array,
  type: string,
) {
  return await t.req("POST", "/api/me/avatar", {
    token,
    raw: bytes as Uint8Array<ArrayBuffer>,
    headers: { "content-type": type },
  });
}

Deno.test("avatar: PNG upload is centre-cropped to 256 x 256, served with ETag and 304", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  assert.equal((await t.req("GET", `/api/avatars/${account.id}`)).status, 404);
  const png = await picture(600, 300).encode();
  const r = await upload(t, token, png, "image/png");
  assert.equal(r.status, 200, r.text);
  assert.match(r.body.avatar, new RegExp(`^/api/avatars/${account.id}\\?v=[0-9a-f]{12}$`));
  const me = await t.req("GET", "/api/me", { token });
  assert.equal(me.body.avatar, r.body.avatar);
  const app = t.app;
  const res = await app.request(`/api/avatars/${account.id}`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "image/png");
  assert.match(res.headers.get("cache-control")!, /max-age=\d+/);
  const etag = res.headers.get("etag")!;
  assert.match(etag, /^"[0-9a-f]{32}"$/);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const img = await Image.decode(bytes);
  assert.equal(img.width, 256);
  assert.equal(img.height, 256);
  // 600 x 300 cropped to its middle 300 x 300: red on the left half, blue on the right.
  assert.deepEqual(Image.colorToRGBA(img.getPixelAt(20, 128)).slice(0, 3), [255, 0, 0]);
  assert.deepEqual(Image.colorToRGBA(img.getPixelAt(236, 128)).slice(0, 3), [0, 0, 255]);
  const again = await app.request(`/api/avatars/${account.id}`, {
    headers: { "if-none-match": etag },
  });
  assert.equal(again.status, 304);
  assert.equal(again.headers.get("etag"), etag);
  // On the public profile too.
  const p = await t.req("GET", `/api/profiles/${account.id}`);
  assert.equal(p.body.profile.avatar, r.body.avatar);
});

Deno.test("avatar: JPEG and GIF are accepted; a new picture replaces the old chunks", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const jpeg = await picture(300, 500).encodeJPEG(90);
  const r1 = await upload(t, token, jpeg, "image/jpeg");
  assert.equal(r1.status, 200, r1.text);
  const got = await t.app.request(`/api/avatars/${account.id}`);
  // Every picture is re-encoded as PNG (no native codec needed, so it runs on Deno Deploy).
  assert.equal(got.headers.get("content-type"), "image/png");
  const out = await Image.decode(new Uint8Array(await got.arrayBuffer()));
  assert.equal(out.width, 256);
  assert.equal(out.height, 256);
  // The centre square keeps the red left half and the blue right half.
  const [lr, , lb] = Image.colorToRGBA(out.getPixelAt(20, 128));
  const [rr, , rb] = Image.colorToRGBA(out.getPixelAt(236, 128));
  assert.ok(lr > 200 && lb < 60, `left is red: ${lr},${lb}`);
  assert.ok(rb > 200 && rr < 60, `right is blue: ${rr},${rb}`);
  const gif = await new GIF([Frame.from(picture(64, 64))]).encode();
  const r2 = await upload(t, token, gif, "image/gif");
  assert.equal(r2.status, 200, r2.text);
  assert.notEqual(r2.body.avatar, r1.body.avatar);
  const served = await t.app.request(`/api/avatars/${account.id}`);
  assert.equal(served.headers.get("content-type"), "image/png");
  await served.body?.cancel();
  // Only the live picture's chunks remain, each under 64 KiB.
  const chunks: Deno.KvEntry<Uint8Array>[] = [];
  for await (const e of t.kv.list<Uint8Array>({ prefix: ["avatar_chunks", account.id] })) {
    chunks.push(e);
    assert.ok(e.value.length < 64 * 1024);
  }
  assert.ok(chunks.length >= 1);
  assert.ok(chunks.every((c) => c.key[2] === chunks[0].key[2]));
  const del = await t.req("DELETE", "/api/me/avatar", { token });
  assert.equal(del.status, 200);
  assert.equal(del.body.removed, true);
  assert.equal((await t.req("GET", `/api/avatars/${account.id}`)).status, 404);
  assert.equal((await t.req("GET", "/api/me", { token })).body.avatar, null);
  assert.ok(!(await dumpKv(t.kv)).includes('"avatar_chunks"'));
});

Deno.test("avatar: a noisy picture is stored in chunks under 64 KiB", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const img = new Image(256, 256);
  for (let i = 0; i < img.bitmap.length; i += 65536) {
    crypto.getRandomValues(img.bitmap.subarray(i, i + 65536));
  }
  const r = await upload(t, token, await img.encode(1), "image/png");
  assert.equal(r.status, 200, r.text);
  let n = 0;
  for await (const e of t.kv.list<Uint8Array>({ prefix: ["avatar_chunks", account.id] })) {
    assert.ok(e.value.length < 64 * 1024);
    n++;
  }
  assert.ok(n >= 2, `expected several chunks, got ${n}`);
  const res = await t.app.request(`/api/avatars/${account.id}`);
  const back = await Image.decode(new Uint8Array(await res.arrayBuffer()));
  assert.equal(back.width, 256);
});

Deno.test("avatar: bad images answer 4xx and store nothing", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const before = await dumpKv(t.kv);
  const png = await picture(100, 100).encode();
  // A decompression bomb: the header declares 50 000 x 50 000 pixels.
  const bomb = await upload(t, token, pngHeader(50_000, 50_000), "image/png");
  assert.equal(bomb.status, 413, bomb.text);
  // A JPEG whose frame header declares 65 535 x 65 535.
  const jpegBomb = new Uint8Array([
    0xff,
    0xd8,
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    0xff,
    0xff,
    0xff,
    0xff,
    0x03,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  ]);
  assert.equal((await upload(t, token, jpegBomb, "image/jpeg")).status, 413);
  const truncated = await upload(t, token, png.slice(0, Math.floor(png.length / 2)), "image/png");
  assert.equal(truncated.status, 400, truncated.text);
  // Valid headers followed by garbage: 400, never 500. The garbage is fixed (a small LCG), not
  // random: random bytes can by chance declare a huge frame, which is rightly a 413.
  let seed = 12345;
  const garbage = Uint8Array.from(
    { length: 500 },
    () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24,
  );
  for (
    const head of [
      pngHeader(100, 100),
      new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x10, 0x00, 0x10, 0x00]),
      new Uint8Array([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10]),
    ]
  ) {
    const r = await upload(t, token, new Uint8Array([...head, ...garbage]), "image/png");
    assert.ok(r.status === 400 || r.status === 415, `${r.status} ${r.text}`);
  }
  const text = await upload(t, token, new TextEncoder().encode("hello, not an image"), "image/png");
  assert.equal(text.status, 415);
  const wrongType = await upload(t, token, png, "text/plain");
  assert.equal(wrongType.status, 415);
  assert.equal((await upload(t, token, new Uint8Array(), "image/png")).status, 400);
  const big = new Uint8Array(MAX_AVATAR_BYTES + 1);
  big.set(png);
  assert.equal((await upload(t, token, big, "image/png")).status, 413);
  assert.equal(await dumpKv(t.kv), before);
  assert.equal((await t.req("GET", `/api/avatars/${account.id}`)).status, 404);
  assert.equal(
    (await t.req("POST", "/api/me/avatar", { raw: png as Uint8Array<ArrayBuffer> })).status,
    401,
  );
});

Deno.test("avatar: headers are read before decoding", () => {
  assert.deepEqual(readHeader(pngHeader(640, 480)), { kind: "png", width: 640, height: 480 });
  const gif = new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x10, 0x00, 0x20, 0x00]);
  assert.deepEqual(readHeader(gif), { kind: "gif", width: 16, height: 32 });
  // A small screen whose first frame declares 65 535 x 65 535 counts as the larger size.
  const gifBomb = new Uint8Array([
    ...[0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00],
    ...[0x21, 0xf9, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00],
    ...[0x2c, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00],
  ]);
  assert.deepEqual(readHeader(gifBomb), { kind: "gif", width: 65535, height: 65535 });
  assert.equal(readHeader(new Uint8Array([1, 2, 3])), null);
  assert.equal(readHeader(new Uint8Array([0xff, 0xd8, 0xff, 0xd9])), null);
});
