import assert from "node:assert/strict";
import { canonicalEmail, emailSchema } from "../lib/email.ts";

Deno.test("email: canonical form is trimmed, NFKC, lower-case", () => {
  assert.equal(canonicalEmail("  Ada@Example.ORG "), "ada@example.org");
  assert.equal(canonicalEmail("\tada@example.org\t"), "ada@example.org");
  assert.equal(canonicalEmail("\uff41\uff44\uff41@example.org"), "ada@example.org"); // fullwidth
  assert.equal(canonicalEmail("a.b+tag@sub.example.org"), "a.b+tag@sub.example.org");
  assert.equal(canonicalEmail("o'neil@example.org"), "o'neil@example.org");
  assert.equal(canonicalEmail("x@xn--bcher-kva.example"), "x@xn--bcher-kva.example");
  assert.equal(canonicalEmail("x@b.xn--p1ai"), "x@b.xn--p1ai");
  assert.equal(canonicalEmail("a".repeat(64) + "@b.org"), "a".repeat(64) + "@b.org");
});

Deno.test("email: hostile and malformed addresses are refused", () => {
  const bad = [
    "a@b.org\r\nBcc: c@d.org",
    "a@b.org\n",
    "a@b.org\r",
    "a\u0000@b.org",
    '"a"@b.org',
    '"a@b"@c.org',
    "a@b@c.org",
    "a@@b.org",
    "a\uff20b.org", // fullwidth @
    "a\ufe6bb.org", // small @
    "a@b\uff20c.org",
    "a@[192.0.2.1]",
    "a@[IPv6:::1]",
    "a@192.0.2.1",
    "a".repeat(65) + "@b.org",
    "a@" + "b".repeat(64) + ".org",
    "a@" + ("b".repeat(60) + ".").repeat(5) + "org",
    "a@b",
    "a@b.c",
    "a@b.1",
    "a@.b.org",
    "a@b..org",
    "a@b.org.",
    "a@-b.org",
    "a@b-.org",
    "a@b_c.org",
    ".a@b.org",
    "a.@b.org",
    "a..b@c.org",
    "a b@c.org",
    "a@b c.org",
    "a(comment)@b.org",
    "<a@b.org>",
    "Ada <a@b.org>",
    "a@b.org,c@d.org",
    "a@b.org;c@d.org",
    "ä@b.org",
    "a@bü.org",
    "a@b.org\u200b",
    "\u200ba@b.org",
    "a\u202e@b.org",
    "",
    "@",
    "a@",
    "@b.org",
  ];
  for (const raw of bad) assert.equal(canonicalEmail(raw), null, JSON.stringify(raw));
});

Deno.test("email: the zod schema answers the canonical address or an issue", () => {
  assert.equal(emailSchema.parse(" A@B.org "), "a@b.org");
  const r = emailSchema.safeParse("a@b@c.org");
  assert.equal(r.success, false);
  assert.match(r.error!.issues[0].message, /e-mail/);
  assert.equal(emailSchema.safeParse("a".repeat(321)).success, false);
  assert.equal(emailSchema.safeParse(42).success, false);
  assert.equal(emailSchema.safeParse(null).success, false);
});
