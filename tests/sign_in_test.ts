import assert from "node:assert/strict";
import { HOUR, MINUTE, readable } from "../lib/clock.ts";
import { roughOrigin } from "../lib/ip.ts";
import { dumpKv, testApp } from "./_helpers.ts";

Deno.test("sign-in: link request, verify, account created, token works", async () => {
  await using t = await testApp();
  const r = await t.req("POST", "/api/verify/request", {
    body: { email: " Ada@Example.ORG ", purpose: "login", age_ok: true, name: "Ada Lovelace" },
  });
  assert.equal(r.status, 202);
  assert.deepEqual(r.body, { ok: true, sent: true });
  const mail = t.mail.last("ada@example.org")!;
  assert.match(mail.text, /^http:\/\/test\.local\/me\?verify=[A-Za-z0-9_-]{43}$/m);
  const token = t.mail.linkToken("ada@example.org");
  const v = await t.req("GET", `/api/verify?token=${token}`);
  assert.equal(v.status, 200, v.text);
  assert.equal(v.body.ok, true);
  assert.deepEqual(Object.keys(v.body).sort(), ["actor", "confirmed", "expires", "ok", "token"]);
  assert.deepEqual(Object.keys(v.body.actor).sort(), [
    "created",
    "email",
    "id",
    "name",
    "roles",
    "standing",
  ]);
  assert.equal(v.body.actor.created, new Date(t.clock.now()).toISOString());
  assert.equal(v.headers.get("cache-control"), "no-store");
  assert.equal(v.body.confirmed, 0);
  assert.equal(v.body.actor.email, "ada@example.org");
  assert.equal(v.body.actor.name, "Ada Lovelace");
  assert.equal(v.body.actor.standing, "collector");
  assert.deepEqual(v.body.actor.roles, []);
  assert.equal(v.body.expires, new Date(t.clock.now() + 30 * 24 * HOUR).toISOString());
  const me = await t.req("GET", "/api/me", { token: v.body.token });
  assert.equal(me.status, 200);
  assert.equal(me.body.id, v.body.actor.id);
  assert.equal(me.body.kind, "email");
  assert.equal(me.body.slug, "ada-lovelace");
  assert.equal(me.body.avatar, null);
  // Every field of the account resource (later areas may add more).
  for (
    const k of [
      "id",
      "kind",
      "email",
      "name",
      "created",
      "roles",
      "standing",
      "slug",
      "profile",
      "avatar",
    ]
  ) assert.ok(k in me.body, k);
  assert.deepEqual(me.body.profile, {
    org: "",
    role: "",
    about: "",
    bio: "",
    place: "",
    contact: "",
    website: "",
    langs: [],
  });
  // The link works once.
  const again = await t.req("GET", `/api/verify?token=${token}`);
  assert.equal(again.status, 410);
  assert.ok(again.body.error);
});

Deno.test("sign-in: login link expires after 20 minutes", async () => {
  await using t = await testApp();
  await t.req("POST", "/api/verify/request", { body: { email: "a@b.org", age_ok: true } });
  t.clock.advance(20 * MINUTE);
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken("a@b.org")}`);
  assert.equal(v.status, 410);
  await t.req("POST", "/api/verify/request", { body: { email: "a@b.org", age_ok: true } });
  t.clock.advance(20 * MINUTE - 1);
  const ok = await t.req("GET", `/api/verify?token=${t.mail.linkToken("a@b.org")}`);
  assert.equal(ok.status, 200);
});

const ask = (
  t: Awaited<ReturnType<typeof testApp>>,
  body: Record<string, unknown>,
  from = "192.0.2.10",
) => t.req("POST", "/api/verify/request", { body, from });

Deno.test("sign-in: address link lasts exactly one hour", async () => {
  await using t = await testApp();
  assert.equal((await ask(t, { email: "a@b.org", purpose: "address" })).status, 202);
  assert.match(t.mail.last("a@b.org")!.text, /1 hour/);
  t.clock.advance(HOUR);
  const late = await t.req("GET", `/api/verify?token=${t.mail.linkToken("a@b.org")}`);
  assert.equal(late.status, 410);
  assert.ok(late.body.error);
  await ask(t, { email: "a@b.org", purpose: "address" });
  t.clock.advance(HOUR - 1);
  const ok = await t.req("GET", `/api/verify?token=${t.mail.linkToken("a@b.org")}`);
  assert.equal(ok.status, 200, ok.text);
  // A confirmation link signs the address in as well (CONTRACT.md).
  assert.equal((await t.req("GET", "/api/me", { token: ok.body.token })).status, 200);
});

Deno.test("sign-in: login link mail says 20 minutes and carries the link on its own line", async () => {
  await using t = await testApp();
  await ask(t, { email: "a@b.org", age_ok: true });
  const mail = t.mail.last("a@b.org")!;
  assert.match(mail.text, /20 minutes/);
  assert.match(mail.text, /\n\nhttp:\/\/test\.local\/me\?verify=[A-Za-z0-9_-]{43}\n/);
  // At least 128 random bits: 43 base64url characters carry 256.
  assert.ok(t.mail.linkToken("a@b.org").length >= 22);
});

Deno.test("sign-in: two concurrent opens of one link, exactly one wins", async () => {
  await using t = await testApp();
  await ask(t, { email: "race@b.org", age_ok: true, name: "Racer" });
  const token = t.mail.linkToken("race@b.org");
  const [a, b] = await Promise.all([
    t.req("GET", `/api/verify?token=${token}`),
    t.req("GET", `/api/verify?token=${token}`),
  ]);
  assert.deepEqual([a.status, b.status].sort(), [200, 410]);
  const kv = await dumpKv(t.kv);
  assert.equal(kv.match(/^\["accounts",/gm)?.length, 1);
  assert.equal(kv.match(/^\["sessions",/gm)?.length, 1);
  assert.doesNotMatch(kv, /^\["links",/m);
});

Deno.test("sign-in: concurrent opens of a link of an existing account, one session", async () => {
  await using t = await testApp();
  await t.account("old@b.org", { name: "Old" });
  await ask(t, { email: "old@b.org", age_ok: true });
  const token = t.mail.linkToken("old@b.org");
  const all = await Promise.all(
    [1, 2, 3].map(() => t.req("GET", `/api/verify?token=${token}`)),
  );
  assert.deepEqual(all.map((r) => r.status).sort(), [200, 410, 410]);
  const kv = await dumpKv(t.kv);
  assert.equal(kv.match(/^\["sessions",/gm)?.length, 2); // the helper's and the winner's
});

Deno.test("sign-in: a new link replaces the live one", async () => {
  await using t = await testApp();
  await ask(t, { email: "a@b.org", age_ok: true });
  const first = t.mail.linkToken("a@b.org");
  await ask(t, { email: "a@b.org", age_ok: true });
  const second = t.mail.linkToken("a@b.org");
  assert.notEqual(first, second);
  assert.equal((await t.req("GET", `/api/verify?token=${first}`)).status, 410);
  assert.equal((await t.req("GET", `/api/verify?token=${second}`)).status, 200);
  // The other purpose has its own live link: an address link does not end a login link.
  await ask(t, { email: "c@b.org", age_ok: true });
  const login = t.mail.linkToken("c@b.org");
  await ask(t, { email: "c@b.org", purpose: "address" });
  assert.equal((await t.req("GET", `/api/verify?token=${login}`)).status, 200);
});

Deno.test("sign-in: HEAD on a link does not use it up", async () => {
  await using t = await testApp();
  await ask(t, { email: "a@b.org", purpose: "address" });
  const token = t.mail.linkToken("a@b.org");
  const head = await t.req("HEAD", `/api/verify?token=${token}`);
  assert.equal(head.status, 405);
  assert.equal(head.headers.get("allow"), "GET");
  assert.equal((await t.req("GET", `/api/verify?token=${token}`)).status, 200);
});

Deno.test("sign-in: unknown, garbage and missing link tokens answer 4xx {error}", async () => {
  await using t = await testApp();
  for (const q of ["?token=" + "x".repeat(43), "?token=short", "?token=" + "y".repeat(201), ""]) {
    const r = await t.req("GET", `/api/verify${q}`);
    assert.ok(r.status >= 400 && r.status < 500, `${q}: ${r.status}`);
    assert.equal(typeof r.body.error, "string");
  }
});

Deno.test("sign-in: known and unknown addresses get identical answers and both a mail", async () => {
  await using t = await testApp();
  await t.account("known@b.org", { name: "Known" });
  const known = await ask(t, { email: "known@b.org", age_ok: true }, "192.0.2.20");
  const unknown = await ask(t, { email: "unknown@b.org", age_ok: true }, "192.0.2.21");
  assert.equal(known.status, 202);
  assert.equal(known.status, unknown.status);
  assert.equal(known.text, unknown.text);
  assert.deepEqual([...known.headers.keys()], [...unknown.headers.keys()]);
  assert.ok(t.mail.last("known@b.org"));
  assert.ok(t.mail.last("unknown@b.org"));
  assert.equal(t.mail.last("known@b.org")!.subject, t.mail.last("unknown@b.org")!.subject);
});

Deno.test("sign-in: notice with time and rough origin to an existing account only", async () => {
  await using t = await testApp();
  await t.signIn("n@b.org", { name: "Nora", from: "203.0.113.77" });
  // First sign-in: the link mail, no notice.
  assert.equal(t.mail.sent.filter((m) => m.to === "n@b.org").length, 1);
  assert.doesNotMatch(t.mail.last("n@b.org")!.subject, /sign-in to your account/i);
  t.clock.advance(5 * MINUTE);
  await t.signIn("n@b.org", { from: "203.0.113.77" });
  const notice = t.mail.last("n@b.org")!;
  assert.equal(notice.subject, "New sign-in to your account");
  assert.ok(notice.text.includes(readable(t.clock.now())), "the time as a person reads it");
  assert.doesNotMatch(notice.text, /\d{4}-\d\d-\d\dT|\.\d{3}Z/, "no machine stamp");
  assert.ok(notice.text.includes("203.0.113.x"));
  assert.ok(!notice.text.includes("203.0.113.77"));
  assert.equal(t.mail.sent.filter((m) => m.to === "n@b.org").length, 3);
  // IPv6: the /48 only.
  await t.signIn("n@b.org", { from: "2001:db8:aa:bb::1" });
  assert.ok(t.mail.last("n@b.org")!.text.includes("2001:db8:aa::/48"));
});

Deno.test("sign-in: rough origin of every address form", () => {
  assert.equal(roughOrigin("198.51.100.7"), "198.51.100.x");
  assert.equal(roughOrigin("::ffff:198.51.100.7"), "198.51.100.x");
  assert.equal(roughOrigin("2001:db8::1"), "2001:db8:0::/48");
  assert.equal(roughOrigin("2001:db8:1:2:3:4:5:6"), "2001:db8:1::/48");
  assert.equal(roughOrigin("unknown"), "an unknown network");
  assert.equal(roughOrigin("1::2::3"), "an unknown network");
});

Deno.test("sign-in: name names a new account only", async () => {
  await using t = await testApp();
  const first = await t.signIn("n@b.org", { name: "  Ada Byron  " });
  assert.equal(first.actor.name, "Ada Byron");
  const again = await t.signIn("n@b.org", { name: "Somebody Else" });
  assert.equal(again.actor.id, first.actor.id);
  assert.equal(again.actor.name, "Ada Byron");
  const me = await t.req("GET", "/api/me", { token: again.token });
  assert.equal(me.body.name, "Ada Byron");
  assert.equal(me.body.slug, "ada-byron");
  // Without a name, the account stays unnamed and has no slug.
  const bare = await t.signIn("bare@b.org");
  assert.equal(bare.actor.name, "");
  assert.equal((await t.req("GET", "/api/me", { token: bare.token })).body.slug, "");
  // Two accounts with one name get distinct slugs.
  const twin = await t.signIn("twin@b.org", { name: "Ada Byron" });
  assert.equal((await t.req("GET", "/api/me", { token: twin.token })).body.slug, "ada-byron-2");
});

Deno.test("sign-in: bad names answer 400 naming the field and send nothing", async () => {
  await using t = await testApp();
  for (
    const name of ["A", " B ", "x".repeat(121), 42, "Ada\nBcc: x@y.org", "\ud800ab", "a\u0000b"]
  ) {
    const r = await ask(t, { email: "a@b.org", age_ok: true, name });
    assert.equal(r.status, 400, JSON.stringify(name));
    assert.equal(r.body.field, "name");
    assert.match(r.body.error, /^name/);
  }
  assert.equal(t.mail.sent.length, 0);
});

Deno.test("sign-in: age_ok is required (true) for login only", async () => {
  await using t = await testApp();
  for (const body of [{}, { age_ok: false }, { age_ok: "true" }, { age_ok: 1 }, { age_ok: null }]) {
    const r = await ask(t, { email: "a@b.org", purpose: "login", ...body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.field, "age_ok");
  }
  // purpose defaults to login.
  assert.equal((await ask(t, { email: "a@b.org" })).status, 400);
  assert.equal(t.mail.sent.length, 0);
  assert.doesNotMatch(await dumpKv(t.kv), /"links"|"outbox"|"rate"/);
  assert.equal((await ask(t, { email: "a@b.org", purpose: "address" })).status, 202);
  assert.equal((await ask(t, { email: "b@b.org", purpose: "login", age_ok: true })).status, 202);
  assert.equal(t.mail.sent.length, 2);
  // age_ok is not stored.
  assert.doesNotMatch(await dumpKv(t.kv), /age_ok/);
  const bad = await ask(t, { email: "a@b.org", purpose: "signup", age_ok: true });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "purpose");
});

Deno.test("sign-in: 5 link requests an hour per address, then 429 until one comes back", async () => {
  await using t = await testApp();
  t.clock.advance(10 * MINUTE); // 09:10, the window ends at 10:00
  for (let i = 0; i < 5; i++) {
    const r = await ask(t, { email: "a@b.org", age_ok: true }, `192.0.2.${30 + i}`);
    assert.equal(r.status, 202);
  }
  const over = await ask(t, { email: " A@B.ORG ", age_ok: true }, "192.0.2.40");
  assert.equal(over.status, 429);
  // Judged over the hour that ends now: one comes back a fifth of an hour past 10:00, when
  // the 09:10 uses weigh 4 (rounded up) of the window before.
  assert.equal(over.headers.get("retry-after"), String(62 * 60));
  assert.equal(typeof over.body.error, "string");
  assert.equal(t.mail.sent.length, 5);
  // Another address is not limited by this one.
  assert.equal((await ask(t, { email: "c@b.org", age_ok: true }, "192.0.2.41")).status, 202);
  t.clock.advance(62 * MINUTE - 1000);
  const still = await ask(t, { email: "a@b.org", age_ok: true }, "192.0.2.42");
  assert.equal(still.status, 429);
  assert.equal(still.headers.get("retry-after"), "1");
  t.clock.advance(1000);
  assert.equal((await ask(t, { email: "a@b.org", age_ok: true }, "192.0.2.43")).status, 202);
});

Deno.test("sign-in: 5 link requests an hour per origin, then 429 with Retry-After", async () => {
  await using t = await testApp();
  for (let i = 0; i < 5; i++) {
    assert.equal((await ask(t, { email: `u${i}@b.org`, age_ok: true }, "192.0.2.50")).status, 202);
  }
  const over = await ask(t, { email: "u9@b.org", age_ok: true }, "192.0.2.50");
  assert.equal(over.status, 429);
  assert.equal(over.headers.get("retry-after"), String(72 * 60));
  assert.equal(t.mail.last("u9@b.org"), undefined);
  // Another origin is not limited. The clock hour's edge lets no new five through: one use
  // comes back each 12 minutes after it.
  assert.equal((await ask(t, { email: "u9@b.org", age_ok: true }, "192.0.2.51")).status, 202);
  t.clock.advance(HOUR);
  assert.equal((await ask(t, { email: "u8@b.org", age_ok: true }, "192.0.2.50")).status, 429);
  t.clock.advance(12 * MINUTE);
  assert.equal((await ask(t, { email: "u8@b.org", age_ok: true }, "192.0.2.50")).status, 202);
});

Deno.test("sign-in: behind a trusted proxy the origin is the first X-Forwarded-For entry", async () => {
  await using t = await testApp({ config: { trustProxy: true } });
  const via = (xff: string, email: string) =>
    t.req("POST", "/api/verify/request", {
      body: { email, age_ok: true },
      headers: { "x-forwarded-for": xff },
      from: "10.0.0.1",
    });
  for (let i = 0; i < 5; i++) {
    assert.equal((await via(`203.0.113.9, 10.0.0.${i}`, `p${i}@b.org`)).status, 202);
  }
  assert.equal((await via("203.0.113.9", "p9@b.org")).status, 429);
  // The proxy's own address is a different origin.
  assert.equal((await via("203.0.113.10", "p9@b.org")).status, 202);
});

Deno.test("sign-in: without a trusted proxy X-Forwarded-For is ignored", async () => {
  await using t = await testApp();
  for (let i = 0; i < 5; i++) {
    const r = await t.req("POST", "/api/verify/request", {
      body: { email: `q${i}@b.org`, age_ok: true },
      headers: { "x-forwarded-for": `203.0.113.${i}` },
      from: "192.0.2.60",
    });
    assert.equal(r.status, 202);
  }
  const r = await t.req("POST", "/api/verify/request", {
    body: { email: "q9@b.org", age_ok: true },
    headers: { "x-forwarded-for": "203.0.113.99" },
    from: "192.0.2.60",
  });
  assert.equal(r.status, 429);
});

Deno.test("sign-in: hostile addresses answer 400 naming email and send nothing", async () => {
  await using t = await testApp();
  const hostile = [
    "a@b.org\r\nBcc: victim@c.org",
    "a@b.org\n",
    "a\r@b.org",
    '"a b"@b.org',
    '"a"@b.org',
    "a@b@c.org",
    "a@@b.org",
    "a\uff20b.org",
    "a\ufe6bb.org",
    "a\uff20b@c.org",
    "a@[192.0.2.1]",
    "a@[IPv6:2001:db8::1]",
    "a@192.0.2.1",
    "x".repeat(65) + "@b.org",
    "a@" + "b".repeat(250) + ".org",
    "a".repeat(400) + "@b.org",
    "a@b",
    "@b.org",
    "a@",
    "",
    "a b@c.org",
    "a@b.org,c@d.org",
    "<a@b.org>",
    "ä@b.org",
    "a@bü.org",
    "a@-b.org",
    "a..b@c.org",
    ".a@b.org",
  ];
  for (const email of hostile) {
    for (const purpose of ["login", "address"]) {
      const r = await ask(t, { email, purpose, age_ok: true });
      assert.equal(r.status, 400, JSON.stringify(email));
      assert.equal(r.body.field, "email");
    }
  }
  for (const email of [42, null, ["a@b.org"], { email: "a@b.org" }]) {
    const r = await ask(t, { email, age_ok: true });
    assert.equal(r.status, 400, JSON.stringify(email));
    assert.equal(r.body.field, "email");
  }
  assert.equal(t.mail.sent.length, 0);
  assert.doesNotMatch(await dumpKv(t.kv), /"links"|"outbox"|"rate"|"accounts"/);
});

Deno.test("sign-in: the address is canonicalised before anything is stored or mailed", async () => {
  await using t = await testApp();
  // Fullwidth letters fold to ASCII under NFKC; case and spaces go.
  const r = await ask(t, { email: "  \uff21da@Example.ORG\t", age_ok: true });
  assert.equal(r.status, 202);
  assert.deepEqual(t.mail.sent.map((m) => m.to), ["ada@example.org"]);
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken("ada@example.org")}`);
  assert.equal(v.body.actor.email, "ada@example.org");
  // The same person later, written differently, reaches the same account.
  await ask(t, { email: "ADA@example.org", age_ok: true }, "192.0.2.70");
  const again = await t.req("GET", `/api/verify?token=${t.mail.linkToken("ada@example.org")}`);
  assert.equal(again.body.actor.id, v.body.actor.id);
});

Deno.test("sign-in notice names the device from fixed lists, never the client's free text", async () => {
  await using t = await testApp();
  await t.signIn("ua@example.org");
  await t.req("POST", "/api/verify/request", {
    body: { email: "ua@example.org", age_ok: true },
  });
  const token = t.mail.linkToken("ua@example.org");
  const agent = "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0 VISIT evil.example NOW";
  const v = await t.req("GET", `/api/verify?token=${token}`, { headers: { "user-agent": agent } });
  assert.equal(v.status, 200);
  const notice = t.mail.last("ua@example.org")!;
  assert.match(notice.text, /\(Firefox on Linux\)/);
  assert.doesNotMatch(notice.text, /evil|VISIT/);
});
