/**
 * The first owner of a self-hosted server: the link a start prints, its page, its single use,
 * its expiry and replacement, and the owner command closing it.
 */
import assert from "node:assert/strict";
import { openKv } from "../kv/_atomic.ts";
import { OWNER_CLAIM_LIFE, renewOwnerClaim } from "../kv/accounts/owner_claim.ts";
import { grantRole } from "../kv/accounts/roles.ts";
import { type TrailLine } from "../kv/store/trail.ts";
import { testApp } from "./_helpers.ts";
import { spawnService } from "./_server.ts";

const FORM = {
  origin: "http://test.local",
  "content-type": "application/x-www-form-urlencoded",
};
const CLAIM_LINE = /No owner yet\. .* open (\S+)\/me\/standing\/owner\?claim=([A-Za-z0-9_-]{43}) /;

Deno.test("owner claim: the signed-in person who opens the printed link becomes the owner, once", async () => {
  await using t = await testApp();
  const token = await renewOwnerClaim(t.kv, true, t.clock.now());
  assert.ok(token);
  const page = `/me/standing/owner?claim=${token}`;

  // Signed out: to the sign-in page, and back here afterwards.
  const out = await t.req("GET", page);
  assert.equal(out.status, 303);
  assert.equal(
    out.headers.get("location"),
    `/sign-in?next=${encodeURIComponent(page)}`,
  );

  const { account, token: session } = await t.account("root@example.org", { name: "Root" });
  const cookie = `session=${session}`;
  const shown = await t.req("GET", page, { headers: { cookie } });
  assert.equal(shown.status, 200);
  assert.match(
    shown.text,
    /<h1>Become this server&#39;s owner<\/h1>|<h1>Become this server's owner<\/h1>/,
  );
  assert.match(shown.text, /<button type="submit">Become the owner<\/button>/);
  assert.match(shown.text, /noindex/);
  // Nothing changed by looking.
  assert.deepEqual((await t.req("GET", "/api/me", { token: session })).body.roles, []);

  const done = await t.req("POST", "/me/standing/owner", {
    headers: { ...FORM, cookie },
    raw: new URLSearchParams({ claim: token }),
  });
  assert.equal(done.status, 303, done.text);
  assert.equal(done.headers.get("location"), "/me/standing?owner=1");
  assert.deepEqual((await t.req("GET", "/api/me", { token: session })).body.roles, ["owner"]);
  const standing = await t.req("GET", "/me/standing?owner=1", { headers: { cookie } });
  assert.match(standing.text, /You are now this server(&#39;|')s owner/);

  // One trail line, by the account itself.
  const lines: TrailLine[] = [];
  for await (const e of t.kv.list<TrailLine>({ prefix: ["trail"] })) lines.push(e.value);
  const grant = lines.filter((l) => l.action === "role.grant");
  assert.equal(grant.length, 1);
  assert.equal(grant[0].actor, `account:${account.id}`);
  assert.deepEqual(grant[0].fields, ["owner"]);

  // Used up: a second person gets a plain page, and no role.
  const { token: other } = await t.account("other@example.org", { name: "Other" });
  const again = await t.req("GET", page, { headers: { cookie: `session=${other}` } });
  assert.equal(again.status, 200);
  assert.match(again.text, /This link no longer works/);
  assert.doesNotMatch(again.text, /Become the owner<\/button>/);
  const stolen = await t.req("POST", "/me/standing/owner", {
    headers: { ...FORM, cookie: `session=${other}` },
    raw: new URLSearchParams({ claim: token }),
  });
  assert.notEqual(stolen.status, 303);
  assert.ok(stolen.status < 500, stolen.text);
  assert.deepEqual((await t.req("GET", "/api/me", { token: other })).body.roles, []);
  // Closed for good: a later start prints nothing.
  assert.equal(await renewOwnerClaim(t.kv, false, t.clock.now()), null);
});

Deno.test("owner claim: a wrong, replaced or expired token makes nobody the owner", async () => {
  await using t = await testApp();
  const { token: session } = await t.account("root@example.org", { name: "Root" });
  const cookie = `session=${session}`;
  const post = (claim: string) =>
    t.req("POST", "/me/standing/owner", {
      headers: { ...FORM, cookie },
      raw: new URLSearchParams({ claim }),
    });

  // No claim at all (an existing install that never had one): nothing opens.
  assert.equal(await renewOwnerClaim(t.kv, false, t.clock.now()), null);
  assert.notEqual((await post("x".repeat(43))).status, 303);

  const first = (await renewOwnerClaim(t.kv, true, t.clock.now()))!;
  // A restart replaces the token: only the newest printed link works.
  const second = (await renewOwnerClaim(t.kv, false, t.clock.now()))!;
  assert.ok(second && second !== first);
  const old = await t.req("GET", `/me/standing/owner?claim=${first}`, { headers: { cookie } });
  assert.match(old.text, /This link no longer works/);
  assert.notEqual((await post(first)).status, 303);
  assert.notEqual((await post("")).status, 303);
  assert.notEqual((await post("y".repeat(500))).status, 303);
  for (const r of [await post(""), await post("y".repeat(500))]) {
    assert.ok(r.status >= 400 && r.status < 500, `${r.status}`);
    assert.doesNotMatch(r.text, /Invalid input|expected string|Too big/);
  }

  // Past its life the newest one is refused too.
  t.clock.advance(OWNER_CLAIM_LIFE + 1);
  assert.notEqual((await post(second)).status, 303);
  assert.deepEqual((await t.req("GET", "/api/me", { token: session })).body.roles, []);

  // The owner command closes an open claim.
  const third = (await renewOwnerClaim(t.kv, false, t.clock.now()))!;
  await grantRole(t.kv, "someone@example.org", "owner", t.clock.now());
  assert.equal(await renewOwnerClaim(t.kv, false, t.clock.now()), null);
  assert.notEqual((await post(third)).status, 303);
  assert.deepEqual((await t.req("GET", "/api/me", { token: session })).body.roles, []);
});

Deno.test("owner claim: a new install prints the link at each start until an owner exists", async () => {
  const dir = await Deno.makeTempDir({ prefix: "owner_claim_" });
  const kvPath = `${dir}/kv.sqlite3`;
  try {
    const printed = async () => {
      await using server = await spawnService(kvPath, { BASE_URL: "http://127.0.0.1:9" });
      const m = await server.stdout.waitFor(CLAIM_LINE, 30_000);
      assert.equal(m[1], "http://127.0.0.1:9");
      return m[2];
    };
    const first = await printed();
    const second = await printed();
    assert.notEqual(first, second);
    // The line is the only place the token is: the KV holds its hash.
    const kv = await openKv(kvPath);
    try {
      const raw = JSON.stringify((await kv.get(["owner_claim"])).value);
      assert.ok(!raw.includes(second));
      await grantRole(kv, "root@example.org", "owner", Date.now());
    } finally {
      kv.close();
    }
    await using server = await spawnService(kvPath, { BASE_URL: "http://127.0.0.1:9" });
    // The line would follow "listening on"; a moment's wait shows it does not.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.doesNotMatch(server.stdout.text, /No owner yet/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
