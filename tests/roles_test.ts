import assert from "node:assert/strict";
import { openKv } from "../kv/_atomic.ts";
import { grantRole, listRoleHolders, revokeRole } from "../kv/accounts/roles.ts";
import { type TrailLine, verifyTrail } from "../kv/store/trail.ts";
import { dumpKv, testApp } from "./_helpers.ts";
import { runTask, spawnService } from "./_server.ts";

async function trailLines(kv: Deno.Kv): Promise<TrailLine[]> {
  const out: TrailLine[] = [];
  for await (const e of kv.list<TrailLine>({ prefix: ["trail"] })) out.push(e.value);
  return out;
}

Deno.test("roles: grant to an existing account writes the role and one trail line", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const before = (await trailLines(t.kv)).length;
  const r = await grantRole(t.kv, "ada@example.org", "reviewer", t.clock.now());
  assert.equal(r.changed, true);
  assert.equal(r.created, false);
  assert.equal(r.account.id, account.id);
  const me = await t.req("GET", "/api/me", { token });
  assert.deepEqual(me.body.roles, ["reviewer"]);
  assert.equal(me.body.standing, "reviewer");
  assert.equal(me.body.name, "Ada");
  const lines = await trailLines(t.kv);
  assert.equal(lines.length, before + 1);
  const line = lines[lines.length - 1];
  assert.equal(line.actor, "owner");
  assert.equal(line.action, "role.grant");
  assert.equal(line.subject, `account:${account.id}`);
  assert.deepEqual(line.fields, ["reviewer"]);
  assert.equal(line.at, new Date(t.clock.now()).toISOString());
  assert.ok(!JSON.stringify(line).includes("ada@"), "no address in the trail");
  const v = await verifyTrail(t.kv, true);
  assert.equal(v.ok, true);
  assert.equal(v.lines, before + 1);
  // The line is part of the account's own trail (the data export reads this index).
  const own = await t.kv.get(["trail_by_account", account.id, line.seq]);
  assert.equal(own.value, true);
});

Deno.test("roles: a grant to an unknown address creates the account under its canonical form", async () => {
  await using t = await testApp();
  const r = await grantRole(t.kv, "bob@example.org", "owner", t.clock.now());
  assert.equal(r.created, true);
  assert.equal(r.changed, true);
  assert.equal(r.account.email, "bob@example.org");
  assert.deepEqual(r.account.roles, ["owner"]);
  assert.equal(r.account.name, "");
  const lines = await trailLines(t.kv);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].action, "role.grant");
  assert.equal(lines[0].subject, `account:${r.account.id}`);
  // Signing in later with any spelling of the address lands on that account, as owner.
  const asked = await t.req("POST", "/api/verify/request", {
    body: { email: " Bob@Example.ORG ", purpose: "login", age_ok: true },
  });
  assert.equal(asked.status, 202);
  const v = (await t.req("GET", `/api/verify?token=${t.mail.linkToken("bob@example.org")}`)).body;
  assert.equal(v.actor.id, r.account.id);
  assert.equal(v.actor.standing, "owner");
  const team = await t.req("GET", "/api/me", { token: v.token });
  assert.deepEqual(team.body.roles, ["owner"]);
});

Deno.test("roles: a grant or revoke that changes nothing writes nothing", async () => {
  await using t = await testApp();
  await t.account("ada@example.org", { roles: ["contributor"] });
  const before = await dumpKv(t.kv);
  const again = await grantRole(t.kv, "ada@example.org", "contributor", t.clock.now());
  assert.equal(again.changed, false);
  const notHeld = await revokeRole(t.kv, "ada@example.org", "owner", t.clock.now());
  assert.equal(notHeld?.changed, false);
  const unknown = await revokeRole(t.kv, "nobody@example.org", "owner", t.clock.now());
  assert.equal(unknown, null);
  assert.equal(await dumpKv(t.kv), before);
});

Deno.test("roles: revoke removes the role at once and writes one trail line", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { roles: [] });
  await grantRole(t.kv, "ada@example.org", "owner", t.clock.now());
  await grantRole(t.kv, "ada@example.org", "contributor", t.clock.now());
  const owner = await t.req("GET", "/api/me", { token });
  assert.deepEqual(owner.body.roles, ["contributor", "owner"]);
  t.clock.advance(1000);
  const r = await revokeRole(t.kv, "ada@example.org", "owner", t.clock.now());
  assert.equal(r?.changed, true);
  const me = await t.req("GET", "/api/me", { token });
  assert.deepEqual(me.body.roles, ["contributor"]);
  assert.equal(me.body.standing, "contributor");
  const lines = await trailLines(t.kv);
  assert.deepEqual(
    lines.map((l) => [l.action, l.fields?.[0], l.subject]),
    [
      ["role.grant", "owner", `account:${account.id}`],
      ["role.grant", "contributor", `account:${account.id}`],
      ["role.revoke", "owner", `account:${account.id}`],
    ],
  );
  assert.equal((await verifyTrail(t.kv, true)).ok, true);
});

Deno.test("roles: concurrent grants to one account all land, each with its line", async () => {
  await using t = await testApp();
  await t.account("ada@example.org");
  const now = t.clock.now();
  await Promise.all([
    grantRole(t.kv, "ada@example.org", "owner", now),
    grantRole(t.kv, "ada@example.org", "reviewer", now),
    grantRole(t.kv, "ada@example.org", "contributor", now),
    grantRole(t.kv, "new@example.org", "reviewer", now),
    grantRole(t.kv, "new@example.org", "owner", now),
  ]);
  const holders = await listRoleHolders(t.kv);
  assert.deepEqual(
    holders.map((a) => [a.email, a.roles]),
    [
      ["ada@example.org", ["contributor", "reviewer", "owner"]],
      ["new@example.org", ["reviewer", "owner"]],
    ],
  );
  const v = await verifyTrail(t.kv, true);
  assert.equal(v.ok, true);
  assert.equal(v.lines, 5);
  // One account for the new address, whichever grant created it.
  const ids = new Set<number>();
  for await (const e of t.kv.list({ prefix: ["accounts"] })) ids.add(e.key[1] as number);
  assert.equal(ids.size, 2);
});

Deno.test("roles: two handles on one KV file grant at once; locked commits are retried", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = await openKv(`${dir}/kv.sqlite3`);
    const b = await openKv(`${dir}/kv.sqlite3`);
    try {
      const now = Date.now();
      const emails = Array.from({ length: 12 }, (_, i) => `p${i}@example.org`);
      await Promise.all(
        emails.map((e, i) => grantRole(i % 2 ? a : b, e, i % 3 ? "reviewer" : "owner", now)),
      );
      const holders = await listRoleHolders(a);
      assert.deepEqual(holders.map((h) => h.email).sort(), [...emails].sort());
      const v = await verifyTrail(b, true);
      assert.equal(v.ok, true);
      assert.equal(v.lines, 12);
    } finally {
      a.close();
      b.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("roles: list names only accounts that hold a role", async () => {
  await using t = await testApp();
  await t.account("plain@example.org");
  await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const holders = await listRoleHolders(t.kv);
  assert.deepEqual(holders.map((a) => a.email), ["rev@example.org"]);
});

Deno.test("roles command: usage errors exit 2 and touch no KV", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/data/kv.sqlite3`;
    const cases: [string[], RegExp][] = [
      [[], /a command is required/],
      [["promote", "a@b.org", "owner"], /unknown command: promote/],
      [["grant", "a@b.org"], /grant takes an address and a role/],
      [["grant", "a@b.org", "admin"], /unknown role: "admin"/],
      [["revoke", "a@b.org", "Owner"], /unknown role/],
      [["grant", "not-an-address", "owner"], /not a valid e-mail address/],
      [["grant", "a@b@c.org", "owner"], /not a valid e-mail address/],
      [["list", "extra"], /list takes no arguments/],
    ];
    for (const [args, re] of cases) {
      const r = await runTask("roles", args, { KV_PATH: kvPath });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.match(r.stderr, /usage: deno task roles grant <email> <role>/);
      assert.match(r.stderr, /roles: contributor, reviewer, owner/);
    }
    await assert.rejects(Deno.stat(`${dir}/data`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("roles command: works on the server's KV file while the server answers under load", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    await using server = await spawnService(kvPath, { BASE_URL: "http://roles.localhost" });
    // Sign in through the link the server prints (no mail transport configured).
    const asked = await fetch(`${server.url}/api/verify/request`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "ada@example.org", purpose: "login", age_ok: true }),
    });
    assert.equal(asked.status, 202, await asked.text());
    const link = await server.stdout.waitFor(/http:\/\/roles\.localhost\/me\?verify=([\w-]+)/);
    const verified = await fetch(`${server.url}/api/verify?token=${link[1]}`);
    assert.equal(verified.status, 200);
    const { token } = await verified.json();
    const auth = { authorization: `Bearer ${token}` };

    // Load on the server while the commands write: reads, and writes that commit on the same
    // file (each link request stores a link and a mail, and counts its rate limits).
    let stop = false;
    let answered = 0;
    const failures: string[] = [];
    const load = Array.from({ length: 6 }, async (_, i) => {
      for (let n = 0; !stop; n++) {
        const res = i === 0 && n < 4
          ? await fetch(`${server.url}/api/verify/request`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: `load${n}@example.org`, purpose: "address" }),
          })
          : await fetch(`${server.url}/api/${n % 2 ? "me" : "healthz"}`, { headers: auth });
        await res.body?.cancel();
        if (res.status >= 300 && res.status !== 202) failures.push(`${res.status}`);
        answered++;
      }
    });

    const env = { KV_PATH: kvPath };
    const results = await Promise.all([
      runTask("roles", ["grant", "ada@example.org", "owner"], env),
      runTask("roles", ["grant", "ada@example.org", "reviewer"], env),
      runTask("roles", ["grant", "Zed@Example.org", "contributor"], env),
      runTask("roles", ["grant", "yan@example.org", "reviewer"], env),
    ]);
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.match(results[0].stdout, /^granted owner to account \d+ \(ada@example\.org\)$/m);
    assert.match(
      results[2].stdout,
      /^created account \d+ \(zed@example\.org\) with role contributor$/m,
    );

    // The running server sees the change on the next request.
    const me = await (await fetch(`${server.url}/api/me`, { headers: auth })).json();
    assert.deepEqual(me.roles, ["reviewer", "owner"]);
    assert.equal(me.standing, "owner");

    const revoked = await runTask("roles", ["revoke", "ada@example.org", "owner"], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /^revoked owner from account \d+/m);
    const after = await (await fetch(`${server.url}/api/me`, { headers: auth })).json();
    assert.deepEqual(after.roles, ["reviewer"]);

    const unknown = await runTask("roles", ["revoke", "ghost@example.org", "owner"], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no account has the address ghost@example\.org/);

    const list = await runTask("roles", ["list"], env);
    assert.equal(list.code, 0, list.stderr);
    const rows = list.stdout.trim().split("\n").map((l) => l.split("\t").slice(1, 3));
    assert.deepEqual(rows.sort(), [
      ["ada@example.org", "reviewer"],
      ["yan@example.org", "reviewer"],
      ["zed@example.org", "contributor"],
    ]);

    stop = true;
    await Promise.all(load);
    assert.deepEqual(failures, []);
    assert.ok(answered > 10, `the server answered ${answered} requests meanwhile`);

    // One line per change (5) after the sign-in's account.create, chained.
    const audit = await (await fetch(`${server.url}/api/audit/verify?full=1`)).json();
    assert.equal(audit.ok, true);
    assert.equal(audit.lines, 6);
    assert.doesNotMatch(server.stderr.text, /locked|error/i);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
