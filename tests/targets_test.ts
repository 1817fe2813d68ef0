import assert from "node:assert/strict";
import {
  canonicalHost,
  parseCheck,
  privateReason,
  resolveTarget,
  TargetError,
} from "../lib/targets.ts";
import { dumpKv, fakeResolver, testApp } from "./_helpers.ts";

Deno.test("targets: check strings parse to canonical forms and hints", () => {
  const u = parseCheck("url:https://Example.ORG:8443/a/b?x=1#frag");
  assert.deepEqual(u.kind, "url");
  assert.deepEqual(u.check, "url:https://example.org:8443/a/b?x=1");
  assert.deepEqual(u.hint, "https://example.org:8443");
  assert.deepEqual(u.port, 8443);
  assert.deepEqual(parseCheck("url:http://example.org").port, 80);
  assert.deepEqual(parseCheck("mcp:https://mcp.example.org/mcp").hint, "https://mcp.example.org");
  const t = parseCheck("tcp:db.example.org:5432");
  assert.deepEqual([t.host, t.port, t.hint], ["db.example.org", 5432, "db.example.org:5432"]);
  assert.deepEqual(parseCheck("tls:example.org").port, 443);
  assert.deepEqual(parseCheck("tls:example.org:8443").check, "tls:example.org:8443");
  assert.deepEqual(parseCheck("tcp:[2001:DB8:0::1]:22").host, "2001:db8::1");
  assert.deepEqual(parseCheck("webhook:").kind, "webhook");
  assert.deepEqual(parseCheck("webhook:").hint, null);
  assert.deepEqual(parseCheck("tcp:Bücher.example:22").host, "xn--bcher-kva.example");
});

Deno.test("targets: malformed check strings are refused", () => {
  for (
    const bad of [
      "",
      "ftp://example.org",
      "url:ftp://example.org/",
      "url:https://user:pw@example.org/",
      "url:https://user@example.org/",
      "url:https://example.org:0/",
      "url:https://example.org:65536/",
      "url:not a url",
      "mcp:http://example.org/mcp",
      "tcp:example.org",
      "tcp:example.org:0",
      "tcp:example.org:65536",
      "tcp:example.org:22a",
      "tcp::22",
      "tcp:2001:db8::1:22",
      "tls:example.org:99999",
      "tls:bad_host!:443",
      "webhook:https://example.org",
      "http:example.org",
      "tcp:1.2.3.999:80",
      "tcp:example.123:80",
      "url:https://" + "a".repeat(2000) + ".org/",
    ]
  ) {
    assert.throws(() => parseCheck(bad), TargetError, bad);
  }
});

Deno.test("targets: IPv4 is read in every inet_aton form", () => {
  assert.deepEqual(canonicalHost("0x7f.1"), "127.0.0.1");
  assert.deepEqual(canonicalHost("2130706433"), "127.0.0.1");
  assert.deepEqual(canonicalHost("0177.0.0.01"), "127.0.0.1");
  assert.deepEqual(canonicalHost("127.1"), "127.0.0.1");
  assert.deepEqual(canonicalHost("10.0x10.1"), "10.16.0.1");
  assert.deepEqual(canonicalHost("0xa9fea9fe"), "169.254.169.254");
  assert.deepEqual(parseCheck("tcp:0x7f.1:22").host, "127.0.0.1");
  assert.deepEqual(parseCheck("url:http://0x7f.1/").host, "127.0.0.1");
  assert.deepEqual(parseCheck("url:http://[::ffff:127.0.0.1]/").host, "::ffff:7f00:1");
});

export const PRIVATE = [
  "127.0.0.1",
  "127.255.0.9",
  "10.1.2.3",
  "172.16.0.1",
  "172.31.255.255",
  "192.168.1.1",
  "169.254.169.254",
  "169.254.1.1",
  "100.64.0.1",
  "100.127.255.254",
  "0.0.0.0",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
  "192.0.0.8",
  "198.18.0.1",
  "::1",
  "::",
  "fe80::1",
  "fc00::1",
  "fd00:ec2::254",
  "ff02::1",
  "fec0::1",
  "::ffff:127.0.0.1",
  "::ffff:10.0.0.1",
  "::ffff:169.254.169.254",
  "::127.0.0.1",
  "64:ff9b::a00:1",
  "64:ff9b::7f00:1",
  "64:ff9b:1::1",
  "2002:7f00:1::",
  "2002:c0a8:101::1",
  "2002:a9fe:a9fe::",
  "2001:db8::1",
  "2001::1",
  "100::1",
];
export const PUBLIC = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "64:ff9b::808:808"];

Deno.test("targets: every private, reserved and embedding form is private", () => {
  for (const a of PRIVATE) assert.deepEqual(typeof privateReason(a), "string", a);
  for (const a of PUBLIC) assert.deepEqual(privateReason(a), null, a);
  assert.deepEqual(privateReason("100.63.255.255"), null);
  assert.deepEqual(privateReason("172.32.0.1"), null);
});

Deno.test("targets: a name with any private address among its answers is refused", async () => {
  const resolver = fakeResolver({
    "mixed.test": ["93.184.216.34", "10.0.0.1"],
    "public.test": ["93.184.216.34", "2606:4700:4700::1111"],
  });
  const mixed = await resolveTarget(resolver, "mixed.test", false);
  assert.deepEqual(mixed.ok, false);
  assert.deepEqual(mixed.ok === false && mixed.refused, true);
  assert.deepEqual((await resolveTarget(resolver, "mixed.test", true)).ok, true);
  const pub = await resolveTarget(resolver, "public.test", false);
  assert.deepEqual(pub.ok && pub.address, "93.184.216.34");
  const none = await resolveTarget(resolver, "nowhere.test", false);
  assert.deepEqual(none.ok === false && none.refused, false);
});

Deno.test("targets: every private form is refused (400) to a non-owner, literal and by name", async () => {
  const table: Record<string, string[]> = {};
  PRIVATE.forEach((a, i) => table[`host${i}.evil.test`] = [a]);
  let connects = 0;
  await using t = await testApp({
    resolver: fakeResolver(table),
    connector: () => {
      connects++;
      return Promise.reject(new Error("refused"));
    },
  });
  const { token } = await t.account("user@example.org", { name: "User" });
  const before = await dumpKv(t.kv);
  for (const [i, a] of PRIVATE.entries()) {
    const lit = a.includes(":") ? `[${a}]` : a;
    for (const check of [`url:http://${lit}/`, `tcp:${lit}:22`, `url:http://host${i}.evil.test/`]) {
      const r = await t.req("POST", "/api/me/services", {
        token,
        body: { name: "Probe", check },
      });
      assert.deepEqual(r.status, 400, `${check}: ${r.text}`);
      assert.deepEqual(r.body.field, "check");
      assert.match(r.body.error, /^check: /);
    }
  }
  for (const check of ["url:http://0x7f.1/", "tls:2130706433", "tcp:0177.1:22"]) {
    const r = await t.req("POST", "/api/me/services", { token, body: { name: "Probe", check } });
    assert.deepEqual(r.status, 400, check);
  }
  assert.deepEqual(connects, 0, "no packet is sent for a refused target");
  assert.deepEqual(await dumpKv(t.kv), before, "nothing stored");
});

Deno.test("targets: a resolver that does not answer in time counts as not resolving", async () => {
  const never = () => new Promise<string[]>(() => {});
  const r = await resolveTarget(never, "slow.example.org", false, 20);
  assert.deepEqual(r, { ok: false, error: "the host name does not resolve", refused: false });
});
