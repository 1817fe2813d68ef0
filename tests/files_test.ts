import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sweepUploadsJob } from "../jobs/sweep_uploads.ts";
import {
  BATCH,
  CHUNK,
  discardUpload,
  getUsage,
  MAX_FILE,
  QUOTA,
  reserveUpload,
  UPLOAD_DEADLINE,
  writeUpload,
} from "../kv/files/files.ts";
import { filesPart } from "../kv/parts/files.ts";
import { HOUR, MINUTE } from "../lib/clock.ts";
import { dumpKv, type TestApp, testApp } from "./_helpers.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Deterministic bytes that differ at every offset (a misplaced chunk shows). */
function bytesOf(size: number, seed = 1): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(size);
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/** A body that arrives in uneven pieces, as from a network. */
function pieces(b: Uint8Array<ArrayBuffer>, piece = 7001): ReadableStream<Uint8Array> {
  let off = 0;
  return new ReadableStream({
    pull(c) {
      if (off >= b.length) return c.close();
      c.enqueue(b.slice(off, off + piece));
      off += piece;
    },
  });
}

interface UploadOpts {
  name?: string;
  label?: string;
  public?: boolean;
  length?: number | null;
  body?: BodyInit;
  headers?: Record<string, string>;
}

function upload(t: TestApp, token: string, bytes: Uint8Array<ArrayBuffer>, o: UploadOpts = {}) {
  const headers: Record<string, string> = { ...o.headers };
  const length = o.length === undefined ? bytes.length : o.length;
  if (length !== null) headers["content-length"] = String(length);
  if (o.name !== "") headers["x-file-name"] ??= encodeURIComponent(o.name ?? "notes.pdf");
  if (o.label !== undefined) headers["x-file-label"] = encodeURIComponent(o.label);
  if (o.public) headers["x-public"] = "1";
  return t.req("PUT", "/api/me/files", { token, raw: o.body ?? pieces(bytes), headers });
}

async function download(t: TestApp, url: string, headers: Record<string, string> = {}) {
  const res = await t.app.request(url, { headers }, { remoteAddr: { hostname: "192.0.2.9" } });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** Every file key of the KV: nothing may be left after a failed or deleted upload. */
async function fileKeys(t: TestApp): Promise<string[]> {
  return (await dumpKv(t.kv)).split("\n")
    .filter((l) => /^\["(files|file_chunks|file_uploads)"/.test(l))
    .map((l) => l.slice(0, 80));
}

async function used(t: TestApp, token: string): Promise<number> {
  return (await t.req("GET", "/api/me/files", { token })).body.used;
}

Deno.test("files: bytes read back identical around chunk and batch boundaries", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const sizes = [
    0,
    1,
    CHUNK - 1,
    CHUNK,
    CHUNK + 1,
    BATCH * CHUNK - 1,
    BATCH * CHUNK,
    BATCH * CHUNK + 1,
    3 * BATCH * CHUNK + 17,
  ];
  let total = 0;
  for (const [i, size] of sizes.entries()) {
    const bytes = bytesOf(size, i + 1);
    const r = await upload(t, token, bytes, { name: `part ${i}.bin.pdf`, public: i % 2 === 0 });
    assert.equal(r.status, 201, r.text);
    total += size;
    assert.equal(r.body.ok, true);
    assert.equal(r.body.item.size, size);
    assert.equal(r.body.used, total);
    assert.equal(r.body.quota, QUOTA);
    const got = await download(t, r.body.item.url, { authorization: `Bearer ${token}` });
    assert.equal(got.res.status, 200);
    assert.equal(got.res.headers.get("content-length"), String(size));
    assert.equal(sha(got.bytes), sha(bytes), `size ${size}`);
    assert.equal(got.res.headers.get("etag"), `"${sha(bytes).slice(0, 40)}"`);
  }
  const list = await t.req("GET", "/api/me/files", { token });
  assert.equal(list.status, 200);
  assert.equal(list.body.items.length, sizes.length);
  assert.equal(list.body.used, total);
  assert.equal(list.body.max_file, MAX_FILE);
  assert.match(list.body.where, /Deno KV/);
  // Newest first.
  assert.deepEqual(list.body.items.map((f: { size: number }) => f.size), [...sizes].reverse());
  // No upload record is left once uploads complete.
  assert.ok(!(await dumpKv(t.kv)).includes('["file_uploads"'));
});

Deno.test("files: a 50 MB upload in one piece is stored and read back", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const bytes = bytesOf(MAX_FILE, 9);
  const r = await upload(t, token, bytes, { name: "film.mp4", body: bytes });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.item.type, "video/mp4");
  const got = await download(t, r.body.item.url, { authorization: `Bearer ${token}` });
  assert.equal(sha(got.bytes), sha(bytes));
  const over = await upload(t, token, new Uint8Array(1), { length: MAX_FILE + 1 });
  assert.equal(over.status, 413);
  assert.match(over.body.error, /52428800/);
});

Deno.test("files: the item has the fields of its resource and a usable url", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org");
  const r = await upload(t, token, bytesOf(10), {
    name: "Übung – Brüche.PDF",
    label: "Fractions, week 3",
  });
  assert.equal(r.status, 201);
  const item = r.body.item;
  assert.deepEqual(Object.keys(item).sort(), [
    "created",
    "ext",
    "id",
    "label",
    "name",
    "public",
    "size",
    "type",
    "url",
  ]);
  assert.equal(item.name, "Übung – Brüche.PDF");
  assert.equal(item.ext, "pdf");
  assert.equal(item.type, "application/pdf");
  assert.equal(item.label, "Fractions, week 3");
  assert.equal(item.public, false);
  assert.equal(item.created, "2026-03-02T09:00:00.000Z");
  assert.equal(item.url, `/api/files/${account.id}/${item.id}/${encodeURIComponent(item.name)}`);
});

Deno.test("files: upload refusals 400 401 411 413 415 store nothing", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const b = bytesOf(100);
  const cases: [UploadOpts, number, RegExp][] = [
    [{ length: null }, 411, /Content-Length/],
    [{ length: null, headers: { "content-length": "12abc" } }, 400, /Content-Length/],
    [{ name: "" }, 400, /X-File-Name/],
    [{ headers: { "x-file-name": "%E0%A4%A" } }, 400, /X-File-Name/],
    [{ name: "../.." }, 400, /X-File-Name/],
    [{ name: "setup.exe" }, 415, /\.exe/],
    [{ name: "script.js" }, 415, /\.js/],
    [{ name: "README" }, 415, /ending/],
    [{ label: "x".repeat(61) }, 400, /X-File-Label/],
    [{ length: MAX_FILE + 1 }, 413, /52428800/],
  ];
  for (const [opts, status, message] of cases) {
    const r = await upload(t, token, b, opts);
    assert.equal(r.status, status, `${JSON.stringify(opts)}: ${r.text}`);
    assert.match(r.body.error, message);
  }
  const refused = await upload(t, token, b, { name: "run.bat" });
  assert.ok(refused.body.accepted.includes("pdf"));
  assert.ok(!refused.body.accepted.includes("bat"));
  const anon = await t.req("PUT", "/api/me/files", {
    raw: b,
    headers: { "content-length": "100", "x-file-name": "a.pdf" },
  });
  assert.equal(anon.status, 401);
  assert.deepEqual(await fileKeys(t), []);
  assert.equal(await used(t, token), 0);
  // A label of exactly 60 characters and a name with a path are fine.
  const ok = await upload(t, token, b, { name: "C:\\Users\\x\\plan.txt", label: "é".repeat(60) });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.item.name, "plan.txt");
});

Deno.test("files: a short body, a long body and a broken stream leave nothing", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const b = bytesOf(3 * BATCH * CHUNK);
  const short = await upload(t, token, b, { length: b.length + 1 });
  assert.equal(short.status, 400);
  assert.match(short.body.error, /fewer bytes/);
  const long = await upload(t, token, b, { length: b.length - 1 });
  assert.equal(long.status, 400);
  assert.match(long.body.error, /longer/);
  // A client that goes away: the body stream errors after two batches.
  let sent = 0;
  const broken = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= 2 * BATCH * CHUNK + 5000) return c.error(new Error("connection reset"));
      c.enqueue(b.slice(sent, sent + 50000));
      sent += 50000;
    },
  });
  const dropped = await upload(t, token, b, { body: broken });
  assert.equal(dropped.status, 400);
  assert.deepEqual(await fileKeys(t), []);
  assert.equal(await used(t, token), 0);
  const list = await t.req("GET", "/api/me/files", { token });
  assert.deepEqual(list.body.items, []);
});

Deno.test("files: 60 uploads an hour, then 429 with Retry-After", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  t.clock.set(Date.parse("2026-03-02T10:00:00.000Z"));
  for (let i = 0; i < 60; i++) {
    assert.equal((await upload(t, token, bytesOf(3), { name: `n${i}.txt` })).status, 201);
  }
  t.clock.advance(59 * MINUTE);
  const r = await upload(t, token, bytesOf(3), { name: "late.txt" });
  assert.equal(r.status, 429);
  // Judged over the hour that ends now: the 10:00 uploads weigh in past the clock hour, and
  // one comes back a sixtieth of an hour after it.
  assert.equal(r.headers.get("retry-after"), "120");
  assert.equal((await t.req("GET", "/api/me/files", { token })).body.items.length, 60);
  t.clock.advance(MINUTE);
  assert.equal((await upload(t, token, bytesOf(3), { name: "edge.txt" })).status, 429);
  t.clock.advance(MINUTE);
  assert.equal((await upload(t, token, bytesOf(3), { name: "next.txt" })).status, 201);
  // Another account has its own count.
  const other = await t.account("bob@example.org");
  assert.equal((await upload(t, other.token, bytesOf(3))).status, 201);
});

Deno.test("files: the 201st file answers 409 until one is deleted", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  let last = 0;
  for (let i = 0; i < 200; i++) {
    // Two hours: the uploads of a window weigh in for the hour after it.
    if (i % 60 === 0) t.clock.advance(2 * HOUR);
    const r = await upload(t, token, bytesOf(1), { name: `f${i}.csv` });
    assert.equal(r.status, 201, r.text);
    last = r.body.item.id;
  }
  const full = await upload(t, token, bytesOf(1), { name: "more.csv" });
  assert.equal(full.status, 409);
  assert.match(full.body.error, /200 files/);
  const del = await t.req("DELETE", `/api/me/files/${last}`, { token });
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { ok: true, used: 199, quota: QUOTA });
  assert.equal((await upload(t, token, bytesOf(1), { name: "more.csv" })).status, 201);
});

Deno.test("files: over the quota answers 413; the last bytes fit exactly", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org");
  // Stand-in for 400 MB of earlier uploads: the usage record they would have left.
  await t.kv.set(["file_usage", account.id], { bytes: QUOTA - 10, files: 8 });
  const over = await upload(t, token, bytesOf(11));
  assert.equal(over.status, 413);
  assert.equal(over.body.used, QUOTA - 10);
  const fits = await upload(t, token, bytesOf(10));
  assert.equal(fits.status, 201);
  assert.equal(fits.body.used, QUOTA);
  const none = await upload(t, token, bytesOf(1));
  assert.equal(none.status, 413);
  // An empty file still fits.
  assert.equal((await upload(t, token, bytesOf(0))).status, 201);
});

Deno.test("files: two uploads racing for the last bytes of the quota, one wins", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org");
  await t.kv.set(["file_usage", account.id], { bytes: QUOTA - 3 * CHUNK, files: 0 });
  for (let round = 0; round < 5; round++) {
    const [a, b] = await Promise.all([
      upload(t, token, bytesOf(2 * CHUNK, 1), { name: `a${round}.pdf` }),
      upload(t, token, bytesOf(2 * CHUNK, 2), { name: `b${round}.pdf` }),
    ]);
    assert.deepEqual([a.status, b.status].sort(), [201, 413]);
    const winner = a.status === 201 ? a : b;
    assert.equal(await used(t, token), QUOTA - CHUNK);
    const del = await t.req("DELETE", `/api/me/files/${winner.body.item.id}`, { token });
    assert.equal(del.body.used, QUOTA - 3 * CHUNK);
  }
  assert.deepEqual(await fileKeys(t), []);
});

Deno.test("files: private files are for their owner only; public ones for all", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org");
  const bob = await t.account("bob@example.org");
  const priv = (await upload(t, ada.token, bytesOf(5), { name: "private.pdf" })).body.item;
  const pub = (await upload(t, ada.token, bytesOf(6), { name: "public.pdf", public: true }))
    .body.item;
  const owner = await download(t, priv.url, { authorization: `Bearer ${ada.token}` });
  assert.equal(owner.res.status, 200);
  assert.equal(owner.res.headers.get("cache-control"), "no-store");
  for (
    const headers of [{}, { authorization: `Bearer ${bob.token}` }] as Record<string, string>[]
  ) {
    const r = await download(t, priv.url, headers);
    assert.equal(r.res.status, 404);
    assert.equal(r.res.headers.get("cache-control"), "no-store");
    assert.deepEqual(JSON.parse(new TextDecoder().decode(r.bytes)), { error: "not found" });
  }
  const anyone = await download(t, pub.url);
  assert.equal(anyone.res.status, 200);
  assert.equal(anyone.res.headers.get("cache-control"), "public, max-age=300");
  assert.equal(sha(anyone.bytes), sha(bytesOf(6)));
  // Wrong name, unknown id, another account's id: 404 alike.
  const base = `/api/files/${ada.account.id}/${pub.id}`;
  for (
    const url of [
      `${base}/other.pdf`,
      `${base}/PUBLIC.pdf`,
      `/api/files/${ada.account.id}/999/public.pdf`,
      `/api/files/${bob.account.id}/${pub.id}/public.pdf`,
      `/api/files/x/${pub.id}/public.pdf`,
    ]
  ) {
    assert.equal((await download(t, url)).res.status, 404, url);
  }
  // Bob cannot change or delete Ada's file.
  const patch = await t.req("PATCH", `/api/me/files/${priv.id}`, {
    token: bob.token,
    body: { public: true },
  });
  assert.equal(patch.status, 404);
  assert.equal(
    (await t.req("DELETE", `/api/me/files/${priv.id}`, { token: bob.token })).status,
    404,
  );
  assert.equal((await download(t, priv.url)).res.status, 404);
});

Deno.test("files: download headers: type, disposition, nosniff, ETag, 304", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const pdf = (await upload(t, token, bytesOf(5), { name: "Übung – Brüche.pdf", public: true }))
    .body.item;
  const r = await download(t, pdf.url);
  const h = r.res.headers;
  assert.equal(h.get("content-type"), "application/pdf");
  assert.equal(
    h.get("content-disposition"),
    `inline; filename="Ubung _ Bruche.pdf"; filename*=UTF-8''%C3%9Cbung%20%E2%80%93%20Br%C3%BCche.pdf`,
  );
  assert.equal(h.get("x-content-type-options"), "nosniff");
  // Inline kinds are sandboxed too (issue 13): no script, no fetches, the file itself shows.
  assert.match(h.get("content-security-policy")!, /^sandbox; default-src 'none'/);
  assert.equal(h.get("last-modified"), "Mon, 02 Mar 2026 09:00:00 GMT");
  assert.equal(h.get("accept-ranges"), "bytes");
  const head = await t.app.request(pdf.url, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), "5");
  assert.equal(head.headers.get("content-type"), "application/pdf");
  assert.equal((await head.arrayBuffer()).byteLength, 0);
  const etag = h.get("etag")!;
  const cached = await download(t, pdf.url, { "if-none-match": etag });
  assert.equal(cached.res.status, 304);
  assert.equal(cached.bytes.length, 0);
  assert.equal(cached.res.headers.get("etag"), etag);
  const since = await download(t, pdf.url, { "if-modified-since": h.get("last-modified")! });
  assert.equal(since.res.status, 304);
  const changed = await download(t, pdf.url, { "if-none-match": '"other"' });
  assert.equal(changed.res.status, 200);

  for (const name of ["page.html", "figure.svg", "data.xml", "track.gpx"]) {
    const item = (await upload(t, token, new TextEncoder().encode("<x/>"), { name, public: true }))
      .body.item;
    const a = await download(t, item.url);
    assert.equal(a.res.status, 200);
    assert.match(a.res.headers.get("content-disposition")!, /^attachment; /, name);
    assert.equal(a.res.headers.get("content-security-policy"), "sandbox; default-src 'none'");
    assert.equal(a.res.headers.get("x-content-type-options"), "nosniff");
  }
  // The client's Content-Type is not trusted: the ending decides.
  const txt = await upload(t, token, bytesOf(3), {
    name: "notes.txt",
    public: true,
    headers: { "content-type": "text/html" },
  });
  assert.equal(txt.body.item.type, "text/plain");
  assert.equal(
    (await download(t, txt.body.item.url)).res.headers.get("content-type"),
    "text/plain",
  );
});

Deno.test("files: Range answers 206 across chunks, 416 past the end", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const bytes = bytesOf(3 * CHUNK + 100);
  const item = (await upload(t, token, bytes, { name: "talk.mp3", public: true })).body.item;
  const cases: [string, number, number][] = [
    ["bytes=0-9", 0, 9],
    [`bytes=${CHUNK - 5}-${CHUNK + 4}`, CHUNK - 5, CHUNK + 4],
    [`bytes=${CHUNK}-${2 * CHUNK - 1}`, CHUNK, 2 * CHUNK - 1],
    [`bytes=${CHUNK - 1}-${3 * CHUNK + 5}`, CHUNK - 1, 3 * CHUNK + 5],
    ["bytes=-7", bytes.length - 7, bytes.length - 1],
    [`bytes=${3 * CHUNK + 90}-`, 3 * CHUNK + 90, bytes.length - 1],
    [`bytes=100-99999999`, 100, bytes.length - 1],
  ];
  for (const [range, start, end] of cases) {
    const r = await download(t, item.url, { range });
    assert.equal(r.res.status, 206, range);
    assert.equal(r.res.headers.get("content-range"), `bytes ${start}-${end}/${bytes.length}`);
    assert.equal(r.res.headers.get("content-length"), String(end - start + 1));
    assert.equal(r.res.headers.get("content-type"), "audio/mpeg");
    assert.equal(sha(r.bytes), sha(bytes.subarray(start, end + 1)), range);
  }
  for (
    const range of [
      `bytes=${bytes.length}-`,
      "bytes=-0",
      `bytes=${bytes.length + 5}-${bytes.length + 9}`,
    ]
  ) {
    const r = await download(t, item.url, { range });
    assert.equal(r.res.status, 416, range);
    assert.equal(r.res.headers.get("content-range"), `bytes */${bytes.length}`);
    assert.ok(JSON.parse(new TextDecoder().decode(r.bytes)).error);
  }
  // Several ranges or a malformed one: the whole file.
  for (const range of ["bytes=0-1,5-6", "lines=1-2", "bytes=9-3"]) {
    const r = await download(t, item.url, { range });
    assert.equal(r.res.status, 200, range);
    assert.equal(r.bytes.length, bytes.length);
  }
  // If-Range with a stale validator: the whole file.
  const stale = await download(t, item.url, { range: "bytes=0-1", "if-range": '"old"' });
  assert.equal(stale.res.status, 200);
  const etag = stale.res.headers.get("etag")!;
  const fresh = await download(t, item.url, { range: "bytes=0-1", "if-range": etag });
  assert.equal(fresh.res.status, 206);
});

Deno.test("files: PATCH changes visibility, label and name (same ending)", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const item = (await upload(t, token, bytesOf(4), { name: "Plan.PDF" })).body.item;
  const path = `/api/me/files/${item.id}`;
  assert.equal((await download(t, item.url)).res.status, 404);
  const pub = await t.req("PATCH", path, { token, body: { public: true, label: " Week  one " } });
  assert.equal(pub.status, 200, pub.text);
  assert.equal(pub.body.item.public, true);
  assert.equal(pub.body.item.label, "Week one");
  assert.equal((await download(t, item.url)).res.status, 200);

  const renamed = await t.req("PATCH", path, { token, body: { name: "Année 2.pdf" } });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.item.name, "Année 2.pdf");
  assert.equal(renamed.body.item.ext, "pdf");
  assert.equal((await download(t, item.url)).res.status, 404);
  assert.equal((await download(t, renamed.body.item.url)).res.status, 200);

  const bad: [unknown, RegExp][] = [
    [{ name: "plan.docx" }, /^name: .*\.pdf/],
    [{ name: "plan" }, /^name: /],
    [{ label: "x".repeat(61) }, /^label: /],
    [{ label: "😀".repeat(61) }, /^label: /],
    [{ public: "yes" }, /^public: /],
    [{}, /nothing to change/],
  ];
  for (const [body, message] of bad) {
    const r = await t.req("PATCH", path, { token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.error, message);
  }
  const notJson = await t.req("PATCH", path, { token, raw: "public", headers: {} });
  assert.equal(notJson.status, 400);
  const list = (await t.req("GET", "/api/me/files", { token })).body.items[0];
  assert.equal(list.name, "Année 2.pdf");
  assert.equal(list.label, "Week one");

  const emoji = await t.req("PATCH", path, { token, body: { label: "😀".repeat(60) } });
  assert.equal(emoji.status, 200);
  const priv = await t.req("PATCH", path, { token, body: { public: false, label: "" } });
  assert.equal(priv.body.item.label, "");
  assert.equal((await download(t, renamed.body.item.url)).res.status, 404);
  assert.equal(
    (await t.req("PATCH", "/api/me/files/999", { token, body: { label: "x" } })).status,
    404,
  );
  assert.equal(
    (await t.req("PATCH", "/api/me/files/abc", { token, body: { label: "x" } })).status,
    404,
  );
});

Deno.test("files: DELETE removes the chunks and frees the quota", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const keep = (await upload(t, token, bytesOf(CHUNK + 1), { name: "keep.zip" })).body.item;
  const gone = (await upload(t, token, bytesOf(2 * BATCH * CHUNK + 3), { name: "gone.zip" })).body
    .item;
  const del = await t.req("DELETE", `/api/me/files/${gone.id}`, { token });
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { ok: true, used: CHUNK + 1, quota: QUOTA });
  const dump = await dumpKv(t.kv);
  assert.ok(!new RegExp(`"file_chunks",\\d+,${gone.id},`).test(dump));
  assert.ok(new RegExp(`"file_chunks",\\d+,${keep.id},1\\]`).test(dump));
  assert.equal((await t.req("DELETE", `/api/me/files/${gone.id}`, { token })).status, 404);
  assert.equal((await download(t, gone.url, { authorization: `Bearer ${token}` })).res.status, 404);
  const kept = await download(t, keep.url, { authorization: `Bearer ${token}` });
  assert.equal(sha(kept.bytes), sha(bytesOf(CHUNK + 1)));
});

Deno.test("files: the sweep removes an upload that never completed", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org");
  // A server that crashed mid-upload: reservation made, some chunks written, no completion.
  const size = 3 * BATCH * CHUNK;
  const r = await reserveUpload(t.kv, account.id, size, t.clock.now());
  assert.ok(r.ok);
  let sent = 0;
  const half = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= size / 2) return c.error(new Error("crash"));
      c.enqueue(bytesOf(CHUNK));
      sent += CHUNK;
    },
  });
  const w = await writeUpload(t.kv, account.id, r.id, size, half, () => t.clock.now());
  assert.deepEqual(w, { ok: false, reason: "short" });
  assert.match(await dumpKv(t.kv), /"file_chunks"/);
  assert.equal(await used(t, token), size);
  // Not yet due: nothing happens.
  t.clock.advance(UPLOAD_DEADLINE - 1);
  assert.equal(await sweepUploadsJob(t.deps), 0);
  assert.equal(await used(t, token), size);
  t.clock.advance(1);
  assert.equal(await sweepUploadsJob(t.deps), 1);
  assert.deepEqual(await fileKeys(t), []);
  assert.equal(await used(t, token), 0);
});

Deno.test("files: an upload swept while still writing fails and leaves nothing", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org");
  const bytes = bytesOf(3 * BATCH * CHUNK);
  let sent = 0;
  let release!: () => void;
  const paused = new Promise<void>((r) => release = r);
  let reachedPause!: () => void;
  const atPause = new Promise<void>((r) => reachedPause = r);
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent === 2 * BATCH * CHUNK) {
        reachedPause();
        await paused;
      }
      if (sent >= bytes.length) return c.close();
      c.enqueue(bytes.slice(sent, sent + CHUNK));
      sent += CHUNK;
    },
  });
  const pending = upload(t, token, bytes, { body });
  await atPause;
  t.clock.advance(UPLOAD_DEADLINE);
  assert.equal(await sweepUploadsJob(t.deps), 1);
  release();
  const r = await pending;
  assert.equal(r.status, 400);
  assert.match(r.body.error, /took too long/);
  assert.deepEqual(await fileKeys(t), []);
  assert.equal(await used(t, token), 0);
});

Deno.test("files: export lists files with addresses; erasure leaves no byte in KV", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org");
  const bob = await t.account("bob@example.org");
  const marker = new TextEncoder().encode("SECRET-FILE-CONTENT-".repeat(5000));
  const a = (await upload(t, ada.token, marker, { name: "a.txt", public: true })).body.item;
  await upload(t, ada.token, marker, { name: "b.txt", label: "second" });
  const bobs = (await upload(t, bob.token, bytesOf(10), { name: "bob.txt" })).body.item;
  // An upload in progress at erasure time.
  const r = await reserveUpload(t.kv, ada.account.id, 100, t.clock.now());
  assert.ok(r.ok);

  const exported = await filesPart.export(t.deps, ada.account);
  assert.equal((exported.files as unknown[]).length, 2);
  const first = (exported.files as Record<string, unknown>[])[1];
  assert.equal(first.url, a.url);
  assert.equal(first.address, `http://test.local${a.url}`);
  assert.deepEqual(await filesPart.counts!(t.deps, ada.account), { files: 2 });

  await filesPart.erase(t.deps, ada.account, { keep: new Set(), remove: new Set() });
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes("SECRET-FILE-CONTENT"));
  for (const prefix of ["files", "file_chunks", "file_uploads", "file_usage"]) {
    assert.ok(!dump.includes(`["${prefix}",${ada.account.id},`), prefix);
    assert.ok(!dump.includes(`["${prefix}",${ada.account.id}]`), prefix);
  }
  assert.deepEqual(await filesPart.counts!(t.deps, ada.account), { files: 0 });
  // Bob's file is untouched.
  const b = await download(t, bobs.url, { authorization: `Bearer ${bob.token}` });
  assert.equal(sha(b.bytes), sha(bytesOf(10)));
});

Deno.test("files: the routes are in the OpenAPI document", async () => {
  await using t = await testApp();
  const doc = (await t.req("GET", "/api/openapi.json")).body;
  assert.ok(doc.paths["/api/me/files"].put);
  assert.ok(doc.paths["/api/me/files"].get);
  assert.ok(doc.paths["/api/me/files/{id}"].patch);
  assert.ok(doc.paths["/api/me/files/{id}"].delete);
  assert.ok(doc.paths["/api/files/{account}/{file}/{name}"].get);
  assert.ok(doc.paths["/api/me/files"].put.responses["411"]);
  const wrong = await t.req("POST", "/api/me/files");
  assert.equal(wrong.status, 405);
});

Deno.test("files: a body that stops sending is given up after the idle time", async () => {
  await using t = await testApp();
  const { account } = await t.account("ada@example.org");
  const r = await reserveUpload(t.kv, account.id, 1000, t.clock.now());
  assert.ok(r.ok);
  let cancelled = false;
  const silent = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytesOf(10));
    },
    cancel() {
      cancelled = true;
    },
  });
  const w = await writeUpload(t.kv, account.id, r.id, 1000, silent, () => t.clock.now(), 30);
  assert.deepEqual(w, { ok: false, reason: "stalled" });
  assert.ok(cancelled);
  await discardUpload(t.kv, account.id, r.id, t.clock.now());
  assert.deepEqual(await fileKeys(t), []);
  assert.deepEqual(await getUsage(t.kv, account.id), { bytes: 0, files: 0 });
});
