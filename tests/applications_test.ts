import assert from "node:assert/strict";
import { verifyTrail } from "../kv/store/trail.ts";
import { dumpKv, testApp } from "./_helpers.ts";

const TEXT = "I teach gardening and would like to help.";

Deno.test("applications: apply, 409 while open, team approves, role and mail, shown under /me", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const r = await t.req("POST", "/api/me/apply", { token, body: { text: TEXT } });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(Object.keys(r.body.application).sort(), ["created", "id"]);
  assert.equal(r.body.application.created, new Date(t.clock.now()).toISOString());
  const me = await t.req("GET", "/api/me", { token });
  assert.deepEqual(me.body.application, {
    id: r.body.application.id,
    created: r.body.application.created,
    outcome: null,
    reason: null,
    decided: null,
  });
  const again = await t.req("POST", "/api/me/apply", { token, body: { text: TEXT } });
  assert.equal(again.status, 409);
  const list = await t.req("GET", "/api/applications", { token: rev.token });
  assert.equal(list.status, 200);
  assert.equal(list.body.items.length, 1);
  assert.equal(list.body.items[0].text, TEXT);
  assert.deepEqual(list.body.items[0].applicant, {
    id: account.id,
    name: "Ada",
    email: "ada@example.org",
    standing: "collector",
  });
  const id = r.body.application.id;
  t.clock.advance(5000);
  const d = await t.req("PATCH", `/api/applications/${id}`, {
    token: rev.token,
    body: { outcome: "approved", reason: "Welcome aboard" },
  });
  assert.equal(d.status, 200, d.text);
  assert.equal(d.body.application.outcome, "approved");
  const mail = t.mail.last("ada@example.org")!;
  assert.match(mail.subject, /approved/);
  assert.match(mail.text, /Welcome aboard/);
  const me2 = await t.req("GET", "/api/me", { token });
  assert.deepEqual(me2.body.roles, ["contributor"]);
  assert.equal(me2.body.standing, "contributor");
  assert.equal(me2.body.application.outcome, "approved");
  assert.equal(me2.body.application.reason, "Welcome aboard");
  assert.equal(me2.body.application.decided, new Date(t.clock.now()).toISOString());
  // A decided application is not decided twice; it leaves the open list.
  const twice = await t.req("PATCH", `/api/applications/${id}`, {
    token: rev.token,
    body: { outcome: "declined", reason: "No" + "pe" },
  });
  assert.equal(twice.status, 409);
  assert.equal(
    (await t.req("GET", "/api/applications", { token: rev.token })).body.items.length,
    0,
  );
  const all = await t.req("GET", "/api/applications?all=1", { token: rev.token });
  assert.equal(all.body.items.length, 1);
  // The grant is a trail line in the decision's atomic.
  const actions: string[] = [];
  for await (const e of t.kv.list<{ action: string; subject: string }>({ prefix: ["trail"] })) {
    actions.push(`${e.value.action} ${e.value.subject}`);
  }
  assert.ok(actions.includes(`role.grant account:${account.id}`));
  assert.ok(actions.includes(`application.approve application:${id}`));
  assert.equal((await verifyTrail(t.kv, true)).ok, true);
  // A new application may follow a decided one.
  assert.equal((await t.req("POST", "/api/me/apply", { token, body: { text: TEXT } })).status, 202);
});

Deno.test("applications: decline by service token keeps roles; the mail gives the reason", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const r = await t.req("POST", "/api/me/apply", { token, body: { text: TEXT } });
  const svc = { "x-service-token": t.deps.config.serviceToken! };
  const d = await t.req("PATCH", `/api/applications/${r.body.application.id}`, {
    headers: svc,
    body: { outcome: "declined", reason: "Not yet" },
  });
  assert.equal(d.status, 200, d.text);
  assert.match(t.mail.last("ada@example.org")!.text, /Not yet/);
  const me = await t.req("GET", "/api/me", { token });
  assert.deepEqual(me.body.roles, []);
  assert.equal(me.body.application.outcome, "declined");
});

Deno.test("applications: validation, auth and unknown ids", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["owner"] });
  const before = await dumpKv(t.kv);
  for (const text of ["x".repeat(19), "x".repeat(2001), 42]) {
    const r = await t.req("POST", "/api/me/apply", { token, body: { text } });
    assert.equal(r.status, 400);
    assert.equal(r.body.field, "text");
  }
  assert.equal(await dumpKv(t.kv), before);
  assert.equal((await t.req("POST", "/api/me/apply", { body: { text: TEXT } })).status, 401);
  assert.equal((await t.req("GET", "/api/applications")).status, 401);
  assert.equal((await t.req("GET", "/api/applications", { token })).status, 403);
  assert.equal(
    (await t.req("GET", "/api/applications", { headers: { "x-service-token": "wrong" } })).status,
    401,
  );
  const r = await t.req("POST", "/api/me/apply", { token, body: { text: TEXT } });
  const id = r.body.application.id;
  const cases: [unknown, string][] = [
    [{ outcome: "maybe", reason: "abc" }, "outcome"],
    [{ outcome: "approved", reason: "ab" }, "reason"],
    [{ outcome: "approved" }, "reason"],
  ];
  for (const [body, field] of cases) {
    const x = await t.req("PATCH", `/api/applications/${id}`, { token: rev.token, body });
    assert.equal(x.status, 400);
    assert.equal(x.body.field, field);
  }
  const byApplicant = await t.req("PATCH", `/api/applications/${id}`, {
    token,
    body: { outcome: "approved", reason: "self" },
  });
  assert.equal(byApplicant.status, 403);
  const unknown = await t.req("PATCH", "/api/applications/999", {
    token: rev.token,
    body: { outcome: "approved", reason: "abc" },
  });
  assert.equal(unknown.status, 404);
});

Deno.test("applications: two applications at once leave exactly one open", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const [a, b] = await Promise.all([
    t.req("POST", "/api/me/apply", { token, body: { text: TEXT } }),
    t.req("POST", "/api/me/apply", { token, body: { text: TEXT } }),
  ]);
  assert.deepEqual([a.status, b.status].sort(), [202, 409]);
  let n = 0;
  for await (const _ of t.kv.list({ prefix: ["applications"] })) n++;
  assert.equal(n, 1);
});
