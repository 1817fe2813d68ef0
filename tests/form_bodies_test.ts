/**
 * Form bodies on every page route: a multipart body without a boundary (or any body that is
 * not what its type says) is the 400 page, never a 500; a body over the route's limit is the
 * 413 page, refused from Content-Length before any of it is read, or while it streams, before
 * the rest is read.
 */
import assert from "node:assert/strict";
import { pagePosts } from "./_form_fields.ts";
import { FORM_LIMIT } from "../web/_web.tsx";
import { type TestApp, testApp } from "./_helpers.ts";

const ORIGIN = "http://test.local";
const MB = 1024 * 1024;

/** Every POST of the pages, with ids and slugs that need not exist. */
const postsOf = async (t: TestApp) =>
  (await pagePosts(t.deps)).map((path) =>
    path.replace(/:id\{[^}]+\}\}?/g, "1").replace(/:slug(\{[^}]+\}\})?/g, "pond-life")
      .replace(/:kind\{[^}]+\}\}?/g, "slack").replace(/:provider\{[^}]+\}\}?/g, "github")
      .replace(/:hash\{[^}]+\}\}?/g, "0".repeat(40))
  );

/** A body that counts what was read of it: `size` bytes in 64 KiB chunks, made as they are read. */
function countedBody(size: number) {
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  const seen = { bytes: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (seen.bytes >= size) return ctl.close();
      seen.bytes += chunk.byteLength;
      ctl.enqueue(chunk);
    },
  });
  return { stream, seen };
}

Deno.test("form bodies: a multipart post without a boundary is a 400 page on every form", async () => {
  await using t = await testApp();
  let n = 0;
  // A session of its own for each post: signing out and ending devices end it.
  const session = async () =>
    `session=${(await t.account(`o${++n}@example.org`, { name: "Olga", roles: ["owner"] })).token}`;
  const PAGE_POSTS = await postsOf(t);
  assert.ok(
    PAGE_POSTS.length > 40 && PAGE_POSTS.every((p) => !/[{}:]/.test(p)),
    String(PAGE_POSTS),
  );
  for (const signedIn of [false, true]) {
    for (const path of PAGE_POSTS) {
      const cookie = await session();
      const res = await t.app.request(path, {
        method: "POST",
        headers: {
          origin: ORIGIN,
          "content-type": "multipart/form-data",
          ...(signedIn ? { cookie } : {}),
        },
        body: "x",
      });
      const text = await res.text();
      assert.ok(res.status < 500, `${path}: ${res.status}`);
      if (res.status === 400) {
        assert.match(text, /This form could not be read/, path);
        assert.match(res.headers.get("content-type")!, /^text\/html/);
      }
    }
  }
  // The forms that read their body say so; the sign-in form is one of the public ones.
  for (const path of ["/sign-in", "/request", "/contribute"]) {
    const res = await t.app.request(path, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "multipart/form-data" },
      body: "x",
    });
    assert.equal(res.status, 400, path);
    assert.match(await res.text(), /<h1>That did not work<\/h1>/);
  }
  for (const path of ["/me/profile", "/me/services", "/me/journal", "/me/avatar"]) {
    const res = await t.app.request(path, {
      method: "POST",
      headers: {
        origin: ORIGIN,
        "content-type": "multipart/form-data",
        cookie: await session(),
      },
      body: "x",
    });
    assert.equal(res.status, 400, path);
    await res.body?.cancel();
  }
});

Deno.test("form bodies: over the limit is a 413 page, refused before the rest is read", async () => {
  await using t = await testApp();
  const { token } = await t.account("owner@example.org", { name: "Olga", roles: ["owner"] });
  for (const path of (await postsOf(t)).filter((p) => p !== "/me/files/upload")) {
    // Declared: refused from Content-Length, nothing read.
    const declared = countedBody(60 * MB);
    const res = await t.app.request(path, {
      method: "POST",
      headers: {
        origin: ORIGIN,
        cookie: `session=${token}`,
        "content-type": "application/x-www-form-urlencoded",
        "content-length": String(60 * MB),
      },
      body: declared.stream,
      duplex: "half",
    } as RequestInit);
    assert.equal(res.status, 413, path);
    assert.match(
      await res.text(),
      path === "/me/avatar" ? /The picture is too large/ : /<h1>Too large<\/h1>/,
      path,
    );
    assert.ok(declared.seen.bytes <= 64 * 1024, `${path} read ${declared.seen.bytes} bytes`);
  }
  // Streamed without a length: the forms that read their body stop soon after the limit.
  for (const path of ["/me/profile", "/sign-in", "/request", "/me/services", "/me/avatar"]) {
    const streamed = countedBody(60 * MB);
    const res = await t.app.request(path, {
      method: "POST",
      headers: {
        origin: ORIGIN,
        cookie: `session=${token}`,
        "content-type": path === "/me/avatar"
          ? "multipart/form-data; boundary=xyz"
          : "application/x-www-form-urlencoded",
      },
      body: streamed.stream,
      duplex: "half",
    } as RequestInit);
    assert.equal(res.status, 413, path);
    const text = await res.text();
    assert.ok(streamed.seen.bytes < 12 * MB, `${path} read ${streamed.seen.bytes} bytes`);
    if (path === "/me/avatar") {
      assert.match(text, /<p class="error" id="f-avatar-error">The picture is too large/);
    } else {
      assert.ok(streamed.seen.bytes <= FORM_LIMIT + 2 * 64 * 1024, path);
      assert.match(text, /This form sent more than 64 KiB/);
    }
  }
  // Under the limit the form is taken as before.
  const ok = await t.app.request("/me/profile", {
    method: "POST",
    headers: {
      origin: ORIGIN,
      cookie: `session=${token}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ name: "Olga", about: "x".repeat(200) }),
  });
  assert.equal(ok.status, 303);
});
