import assert from "node:assert/strict";
import { accountKey } from "../kv/accounts/accounts.ts";
import { MINUTE } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { ApiError } from "../http/errors.ts";
import { router } from "../http/router.ts";
import {
  actorRef,
  optionalToken,
  requireFresh,
  requireOwner,
  requireTeam,
  requireToken,
} from "../http/guards.ts";
import { testApp } from "./_helpers.ts";

/** No real route uses every guard yet: a tiny router with each, answering who got through. */
function guarded(deps: Deps) {
  const app = router();
  app.onError((err, c) => {
    if (!(err instanceof ApiError)) throw err;
    return c.json({ error: err.message, ...err.extra }, err.status, err.headers);
  });
  app.get("/token", requireToken(deps), (c) => c.json({ actor: actorRef(c) }));
  app.get("/optional", optionalToken(deps), (c) => c.json({ actor: actorRef(c) }));
  app.post("/token", requireToken(deps), (c) => c.json({ actor: actorRef(c) }));
  app.get("/team", requireTeam(deps), (c) => c.json({ actor: actorRef(c) }));
  app.get("/owner", requireOwner(deps), (c) => c.json({ actor: actorRef(c) }));
  app.delete("/fresh", requireToken(deps), (c) => {
    requireFresh(deps, c);
    return c.json({ ok: true });
  });
  app.delete("/team-fresh", requireTeam(deps), (c) => {
    requireFresh(deps, c);
    return c.json({ ok: true });
  });
  return async (
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ) => {
    const res = await app.request(path, { method, headers, body });
    return { status: res.status, body: await res.json() };
  };
}

async function setup() {
  const t = await testApp();
  const call = guarded(t.deps);
  const collector = await t.account("c@b.org", { name: "Col" });
  const contributor = await t.account("k@b.org", { name: "Kon", roles: ["contributor"] });
  const reviewer = await t.account("r@b.org", { name: "Rev", roles: ["reviewer"] });
  const owner = await t.account("o@b.org", { name: "Own", roles: ["owner"] });
  const service = t.deps.config.serviceToken!;
  return { t, call, collector, contributor, reviewer, owner, service };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

Deno.test("guards: team is 401 signed out, 403 for other accounts, open to reviewer and owner", async () => {
  const s = await setup();
  await using _t = s.t;
  const none = await s.call("GET", "/team");
  assert.equal(none.status, 401);
  assert.equal(typeof none.body.error, "string");
  assert.equal((await s.call("GET", "/team", bearer("x".repeat(43)))).status, 401);
  for (const who of [s.collector, s.contributor]) {
    const r = await s.call("GET", "/team", bearer(who.token));
    assert.equal(r.status, 403);
    assert.equal(typeof r.body.error, "string");
  }
  for (const who of [s.reviewer, s.owner]) {
    const r = await s.call("GET", "/team", bearer(who.token));
    assert.equal(r.status, 200);
    assert.equal(r.body.actor, `account:${who.account.id}`);
  }
});

Deno.test("guards: the service token is accepted in X-Service-Token only, compared exactly", async () => {
  const s = await setup();
  await using _t = s.t;
  const ok = await s.call("GET", "/team", { "x-service-token": s.service });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.actor, "service");
  const wrong = [
    s.service.slice(0, -1),
    s.service + "x",
    s.service.toUpperCase(),
    s.service.slice(1),
    "x" + s.service.slice(1),
    "",
    "service",
  ];
  for (const v of wrong) {
    assert.equal((await s.call("GET", "/team", { "x-service-token": v })).status, 401, v);
  }
  // Not from other headers, the query string or the body.
  assert.equal((await s.call("GET", "/team", bearer(s.service))).status, 401);
  assert.equal((await s.call("GET", "/team", { "x-api-key": s.service })).status, 401);
  assert.equal((await s.call("GET", `/team?service_token=${s.service}`)).status, 401);
  assert.equal((await s.call("GET", `/team?x-service-token=${s.service}`)).status, 401);
  // A wrong service token does not spoil a good bearer token.
  const both = await s.call("GET", "/team", {
    "x-service-token": "nope",
    ...bearer(s.reviewer.token),
  });
  assert.equal(both.status, 200);
  assert.equal(both.body.actor, `account:${s.reviewer.account.id}`);
});

Deno.test("guards: with no SERVICE_TOKEN configured no service token is accepted", async () => {
  await using t = await testApp({ config: { serviceToken: undefined } });
  const call = guarded(t.deps);
  assert.equal((await call("GET", "/team", { "x-service-token": "" })).status, 401);
  assert.equal((await call("GET", "/team", { "x-service-token": "undefined" })).status, 401);
});

Deno.test("guards: owner is 401 signed out, 403 for reviewer and service token", async () => {
  const s = await setup();
  await using _t = s.t;
  assert.equal((await s.call("GET", "/owner")).status, 401);
  for (const who of [s.collector, s.contributor, s.reviewer]) {
    assert.equal((await s.call("GET", "/owner", bearer(who.token))).status, 403);
  }
  assert.equal((await s.call("GET", "/owner", { "x-service-token": s.service })).status, 403);
  assert.equal((await s.call("GET", "/owner", { "x-service-token": "bad" })).status, 401);
  const ok = await s.call("GET", "/owner", bearer(s.owner.token));
  assert.equal(ok.status, 200);
  assert.equal(ok.body.actor, `account:${s.owner.account.id}`);
});

Deno.test("guards: a bearer token is never taken from the query string or the body", async () => {
  const s = await setup();
  await using _t = s.t;
  const tok = s.owner.token;
  for (const q of ["token", "access_token", "bearer", "authorization", "Authorization"]) {
    assert.equal((await s.call("GET", `/token?${q}=${tok}`)).status, 401, q);
    assert.equal((await s.call("GET", `/team?${q}=${tok}`)).status, 401, q);
    assert.equal(
      (await s.call("GET", `/owner?${q}=${encodeURIComponent("Bearer " + tok)}`)).status,
      401,
    );
  }
  const json = { "content-type": "application/json" };
  for (const b of [{ token: tok }, { access_token: tok }, { authorization: `Bearer ${tok}` }]) {
    assert.equal((await s.call("POST", "/token", json, JSON.stringify(b))).status, 401);
  }
  const form = { "content-type": "application/x-www-form-urlencoded" };
  assert.equal((await s.call("POST", "/token", form, `access_token=${tok}`)).status, 401);
  // Nor from a cookie, nor in another scheme.
  assert.equal((await s.call("GET", "/token", { cookie: `token=${tok}` })).status, 401);
  assert.equal((await s.call("GET", "/token", { authorization: `Basic ${tok}` })).status, 401);
  assert.equal((await s.call("GET", "/token", { authorization: tok })).status, 401);
  assert.equal((await s.call("GET", "/token", { authorization: `Bearer ${tok}x` })).status, 401);
  // The Authorization header works, and a public route ignores a bad one.
  assert.equal((await s.call("GET", "/token", bearer(tok))).status, 200);
  assert.equal((await s.call("GET", "/token", { authorization: `bearer ${tok}` })).status, 200);
  const pub = await s.call("GET", "/optional", bearer("x".repeat(43)));
  assert.equal(pub.status, 200);
  assert.equal(pub.body.actor, "system");
  assert.equal(
    (await s.call("GET", "/optional", bearer(tok))).body.actor,
    `account:${s.owner.account.id}`,
  );
});

Deno.test("guards: a token whose account is gone answers 401", async () => {
  const s = await setup();
  await using _t = s.t;
  await s.t.kv.delete(accountKey(s.reviewer.account.id));
  assert.equal((await s.call("GET", "/token", bearer(s.reviewer.token))).status, 401);
  assert.equal((await s.call("GET", "/team", bearer(s.reviewer.token))).status, 401);
});

Deno.test("guards: fresh token under 15 minutes, then 409 {error, fresh_required: true}", async () => {
  const s = await setup();
  await using _t = s.t;
  s.t.clock.advance(15 * MINUTE - 1);
  assert.equal((await s.call("DELETE", "/fresh", bearer(s.collector.token))).status, 200);
  s.t.clock.advance(1);
  const stale = await s.call("DELETE", "/fresh", bearer(s.collector.token));
  assert.equal(stale.status, 409);
  assert.equal(stale.body.fresh_required, true);
  assert.equal(typeof stale.body.error, "string");
  assert.deepEqual(Object.keys(stale.body).sort(), ["error", "fresh_required"]);
  // A new link gives a fresh token, which works again.
  const again = await s.t.signIn("c@b.org");
  assert.equal((await s.call("DELETE", "/fresh", bearer(again.token))).status, 200);
  // Freshness is the token's age, not the account's; use does not refresh it.
  s.t.clock.advance(14 * MINUTE);
  assert.equal((await s.call("DELETE", "/fresh", bearer(again.token))).status, 200);
  s.t.clock.advance(MINUTE);
  assert.equal((await s.call("DELETE", "/fresh", bearer(again.token))).status, 409);
  // Without a session (service token) nothing is fresh.
  const svc = await s.call("DELETE", "/team-fresh", { "x-service-token": s.service });
  assert.equal(svc.status, 409);
  assert.equal(svc.body.fresh_required, true);
});
