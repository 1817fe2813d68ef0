/** Hostile input from an outside attack corpus: what main let through (issue 13). */
import assert from "node:assert/strict";
import { testApp } from "./_helpers.ts";

const INVISIBLES = [
  "\u200B",
  "\u200C",
  "\u200D",
  "\u200E",
  "\u200F",
  "\u202A",
  "\u202B",
  "\u202C",
  "\u202D",
  "\u202E",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\uFEFF",
];

Deno.test("hostile: tcp: and url: ports with leading zeros or signs answer 400", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  for (
    const check of [
      "tcp:db.example:0080",
      "tcp:db.example:+80",
      "tcp:db.example:-80",
      "tcp:db.example:00443",
      "tls:db.example:0443",
      "url:https://db.example:0443/",
      "url:http://db.example:080/x",
      "url:http://db.example:+80/",
      "url:http://[2001:db8::1]:0080/",
    ]
  ) {
    const r = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Database", check, interval: 5 },
    });
    assert.equal(r.status, 400, `${check}: ${r.text}`);
    assert.equal(r.body.field, "check", check);
    if (!check.includes("+")) assert.match(r.body.error, /port/, check);
  }
  const none = await t.req("GET", "/api/me/services", { token });
  assert.deepEqual(none.body.items, []);
});

Deno.test("hostile: bidi and zero-width characters in names and labels answer 400 naming the field", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  for (const ch of INVISIBLES) {
    const cp = ch.codePointAt(0)!.toString(16);
    const name = await t.req("PATCH", "/api/me", { token, body: { name: `Ada${ch}Admin` } });
    assert.equal(name.status, 400, `name U+${cp}`);
    assert.equal(name.body.field, "name");
    const org = await t.req("PATCH", "/api/me", { token, body: { org: `Or${ch}g` } });
    assert.equal(org.status, 400, `org U+${cp}`);
    assert.equal(org.body.field, "org");
    const svc = await t.req("POST", "/api/me/services", {
      token,
      body: { name: `Backup${ch}job`, check: "webhook:", interval: 5 },
    });
    assert.equal(svc.status, 400, `service name U+${cp}`);
    assert.equal(svc.body.field, "name");
    const req = await t.req("POST", "/api/requests", {
      body: {
        name: `Grace${ch}Hopper`,
        email: "grace@example.org",
        kind: "module",
        text: "Please add a module about compilers.",
      },
    });
    assert.equal(req.status, 400, `request name U+${cp}`);
    assert.equal(req.body.field, "name");
    const link = await t.req("POST", "/api/verify/request", {
      body: { email: "new@example.org", purpose: "login", age_ok: true, name: `New${ch}One` },
    });
    assert.equal(link.status, 400, `sign-in name U+${cp}`);
    assert.equal(link.body.field, "name");
  }
  const me = await t.req("GET", "/api/me", { token });
  assert.equal(me.body.name, "Ada", "nothing changed");
  // Ordinary text around the refused range still passes (accents, emoji, other scripts).
  const ok = await t.req("PATCH", "/api/me", { token, body: { name: "Zoë 🦊 Łukasz ‐ 李" } });
  assert.equal(ok.status, 200, ok.text);
});

Deno.test("hostile: a file label or name with a bidi override answers 400 naming the header", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const put = (name: string, label?: string) =>
    t.req("PUT", "/api/me/files", {
      token,
      raw: "hello",
      headers: {
        "content-type": "text/plain",
        "content-length": "5",
        "x-file-name": encodeURIComponent(name),
        ...(label === undefined ? {} : { "x-file-label": encodeURIComponent(label) }),
      },
    });
  const badName = await put("invoice\u202Efdp.txt");
  assert.equal(badName.status, 400, badName.text);
  assert.equal(badName.body.field, "X-File-Name");
  const badLabel = await put("notes.txt", "Notes\u200B");
  assert.equal(badLabel.status, 400, badLabel.text);
  assert.equal(badLabel.body.field, "X-File-Label");
  const good = await put("notes.txt", "Notes");
  assert.equal(good.status, 201, good.text);
  const patch = await t.req("PATCH", `/api/me/files/${good.body.item.id}`, {
    token,
    body: { label: "x\u2066y" },
  });
  assert.equal(patch.status, 400);
  assert.equal(patch.body.field, "label");
});

Deno.test("hostile: every file download carries a sandboxing CSP, inline kinds included", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  for (const [name, type] of [["a.txt", "text/plain"], ["b.pdf", "application/pdf"]]) {
    const up = await t.req("PUT", "/api/me/files", {
      token,
      raw: "%PDF-1.4 hello",
      headers: { "content-type": type, "content-length": "14", "x-file-name": name },
    });
    assert.equal(up.status, 201, up.text);
    const got = await t.app.request(up.body.item.url, {
      headers: { authorization: `Bearer ${token}` },
    });
    await got.body?.cancel();
    assert.equal(got.status, 200);
    assert.match(got.headers.get("content-security-policy") ?? "", /^sandbox; default-src 'none'/);
  }
});
