import assert from "node:assert/strict";
import { DAILY, runJobs } from "../jobs/mod.ts";
import { DORMANT_AFTER } from "../kv/accounts/dormant.ts";
import { DAY } from "../lib/clock.ts";
import { testApp } from "./_helpers.ts";

const SIX = ["contributions", "open_applications", "devices", "invitations", "services", "files"];
const pick = (c: Record<string, number>) => Object.fromEntries(SIX.map((k) => [k, c[k]]));

Deno.test("actors: every account with roles, standing, profile and counts (0 by default)", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  await t.req("POST", "/api/me/apply", {
    token: ada.token,
    body: { text: "Please let me contribute modules." },
  });
  await t.req("POST", "/api/me/invites", { token: ada.token, body: { email: "x@example.org" } });
  await t.req("PATCH", "/api/me", { token: ada.token, body: { org: "Society" } });
  const r = await t.req("GET", "/api/actors", { token: rev.token });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.items.length, 2);
  const a = r.body.items.find((i: { id: number }) => i.id === ada.account.id);
  assert.equal(a.email, "ada@example.org");
  assert.equal(a.standing, "collector");
  assert.deepEqual(a.roles, []);
  assert.equal(a.profile.org, "Society");
  // The six counts docs/api.md names ("Applications, invitations, team listings") are always
  // there; other areas may add their own.
  assert.deepEqual(pick(a.counts), {
    contributions: 0,
    open_applications: 1,
    devices: 1,
    invitations: 1,
    services: 0,
    files: 0,
  });
  assert.equal(a.dormant_notice, null);
  const b = r.body.items.find((i: { id: number }) => i.id === rev.account.id);
  assert.equal(b.standing, "reviewer");
  assert.equal(b.counts.open_applications, 0);
  assert.equal((await t.req("GET", "/api/actors", { token: ada.token })).status, 403);
  assert.equal((await t.req("GET", "/api/actors")).status, 401);
  const svc = await t.req("GET", "/api/actors", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(svc.status, 200);
});

Deno.test("dormant: a year without sign-in gets one notice; a sign-in clears it", async () => {
  await using t = await testApp();
  const body = await t.signIn("ada@example.org", { name: "Ada" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["owner"] });
  t.clock.advance(DORMANT_AFTER - DAY);
  await runJobs(t.deps, DAILY);
  assert.equal(t.mail.sent.filter((m) => /quiet/.test(m.subject)).length, 0);
  t.clock.advance(DAY);
  await runJobs(t.deps, DAILY);
  const notices = t.mail.sent.filter((m) => /quiet/.test(m.subject));
  // Both accounts are a year old without a sign-in: the reviewer was never signed in by link.
  assert.deepEqual(notices.map((m) => m.to).sort(), ["ada@example.org", "rev@example.org"]);
  await runJobs(t.deps, DAILY);
  assert.equal(t.mail.sent.filter((m) => /quiet/.test(m.subject)).length, 2);
  const svc = { "x-service-token": t.deps.config.serviceToken! };
  const r = await t.req("GET", "/api/actors", { headers: svc });
  const a = r.body.items.find((i: { id: number }) => i.id === body.actor.id);
  assert.equal(a.dormant_notice, new Date(t.clock.now()).toISOString());
  await t.signIn("ada@example.org");
  const r2 = await t.req("GET", "/api/actors", { headers: svc });
  const a2 = r2.body.items.find((i: { id: number }) => i.id === body.actor.id);
  assert.equal(a2.dormant_notice, null);
  assert.equal(a2.last_sign_in, new Date(t.clock.now()).toISOString());
  assert.ok(rev.account.id);
});
