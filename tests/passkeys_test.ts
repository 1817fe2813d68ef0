/**
 * Passkeys in process: the options the pages' script gets, and every refusal of the two forms
 * (no answer, no or a used flow, a damaged or unknown credential), the registration form's
 * messages, export and erasure. Real ceremonies (a virtual authenticator making and using a
 * passkey, a counter going back) are in tests/sign_in_browser_test.ts.
 */
import assert from "node:assert/strict";
import { atomic, commit } from "../kv/_atomic.ts";
import { credentialHash, passkeysOf } from "../kv/accounts/passkeys.ts";
import { dumpKv, type TestApp, testApp } from "./_helpers.ts";

const BASE = "http://test.local";

/** A request from a page of this site, with the cookies given. */
async function post(
  t: TestApp,
  path: string,
  cookies: Record<string, string>,
  form?: Record<string, string>,
) {
  const headers: Record<string, string> = { origin: BASE };
  const jar = Object.entries(cookies).map(([k, v]) => `${k}=${v}`).join("; ");
  if (jar) headers.cookie = jar;
  let body: string | undefined;
  if (form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(form).toString();
  }
  const res = await t.app.request(`${BASE}${path}`, { method: "POST", headers, body }, {
    remoteAddr: { hostname: "192.0.2.9" },
  });
  const flow = res.headers.getSetCookie().find((c) => c.startsWith("flow="))?.split(";")[0]
    .slice(5);
  return { res, text: await res.text(), flow };
}

/** A well-formed answer for a credential this site does not know. */
const STRANGER = JSON.stringify({
  id: "c3RyYW5nZXI",
  rawId: "c3RyYW5nZXI",
  type: "public-key",
  response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA" },
  clientExtensionResults: {},
});

Deno.test("passkeys: sign-in options, and every refusal ends on the page with the mailed link", async (t) => {
  await using app = await testApp();

  const first = await post(app, "/sign-in/passkey/options", {});
  assert.equal(first.res.status, 200);
  const options = JSON.parse(first.text);
  assert.equal(options.rpId, "test.local");
  assert.equal(options.userVerification, "required");
  assert.ok(options.challenge.length >= 32);
  assert.ok(first.flow, "the challenge is kept for this browser");
  assert.doesNotMatch(await dumpKv(app.kv), new RegExp(options.challenge));

  await t.step("no answer in the form", async () => {
    const r = await post(app, "/sign-in/passkey", { flow: first.flow! }, { credential: "" });
    assert.equal(r.res.status, 400);
    assert.match(r.text, /Sign-in did not work/);
    assert.match(r.text, /Mail me a sign-in link instead/);
  });

  await t.step("the flow was used by that post: the next one finds none", async () => {
    const r = await post(app, "/sign-in/passkey", { flow: first.flow! }, { credential: STRANGER });
    assert.equal(r.res.status, 410);
  });

  await t.step("a damaged answer", async () => {
    const o = await post(app, "/sign-in/passkey/options", {});
    const r = await post(app, "/sign-in/passkey", { flow: o.flow! }, { credential: "{nope" });
    assert.equal(r.res.status, 400);
    assert.match(r.text, /missing or damaged/);
  });

  await t.step("a passkey this site does not know", async () => {
    const o = await post(app, "/sign-in/passkey/options", {});
    const r = await post(app, "/sign-in/passkey", { flow: o.flow! }, { credential: STRANGER });
    assert.equal(r.res.status, 400);
    assert.match(r.text, /not known here/);
    assert.equal(r.res.headers.getSetCookie().some((c) => c.startsWith("session=")), false);
  });

  await t.step("a form from another site is refused before anything", async () => {
    const res = await app.app.request(`${BASE}/sign-in/passkey/options`, {
      method: "POST",
      headers: { origin: "https://evil.example" },
    });
    assert.equal(res.status, 403);
  });
});

Deno.test("passkeys: adding one needs a signed-in browser, a name and the browser's answer", async () => {
  await using app = await testApp();
  const guest = await post(app, "/me/passkeys/options", {});
  assert.equal(guest.res.status, 303);
  assert.match(guest.res.headers.get("location")!, /^\/sign-in/);

  const me = await app.account("kim@example.org", { name: "Kim" });
  const session = { session: me.token };
  const o = await post(app, "/me/passkeys/options", session);
  assert.equal(o.res.status, 200);
  const options = JSON.parse(o.text);
  assert.equal(options.rp.id, "test.local");
  assert.equal(options.user.name, "kim@example.org");
  assert.equal(options.authenticatorSelection.residentKey, "required");
  assert.equal(options.attestation, "none");

  const noName = await post(app, "/me/passkeys", { ...session, flow: o.flow! }, {
    name: " ",
    credential: "",
  });
  assert.equal(noName.res.status, 400);
  assert.match(noName.text, /Give the passkey a name/);

  const o2 = await post(app, "/me/passkeys/options", session);
  const noAnswer = await post(app, "/me/passkeys", { ...session, flow: o2.flow! }, {
    name: "Laptop",
    credential: "",
  });
  assert.equal(noAnswer.res.status, 400);
  assert.match(noAnswer.text, /needs a browser that can make passkeys/);

  const o3 = await post(app, "/me/passkeys/options", session);
  const damaged = await post(app, "/me/passkeys", { ...session, flow: o3.flow! }, {
    name: "Laptop",
    credential: STRANGER,
  });
  assert.equal(damaged.res.status, 400);
  assert.match(damaged.text, /could not be verified/);
  assert.deepEqual(await passkeysOf(app.kv, me.account.id), []);
});

Deno.test("passkeys: the export lists them without keys; erasure removes them", async () => {
  await using app = await testApp();
  const me = await app.account("lee@example.org", { name: "Lee" });
  const hash = credentialHash("cred-lee");
  await commit(
    atomic(app.kv).set(["passkeys", hash], {
      id: "cred-lee",
      account: me.account.id,
      name: "Phone",
      public_key: new Uint8Array([1, 2, 3, 4]),
      counter: 3,
      transports: ["internal"],
      device_type: "multiDevice",
      backed_up: true,
      created: app.clock.now(),
      last_used: null,
    }).set(["passkeys_by_account", me.account.id, hash], hash),
  );
  const exported = await app.req("GET", "/api/me/export", { token: me.token });
  assert.equal(exported.status, 200);
  const body = exported.body as { passkeys: Record<string, unknown>[] };
  assert.deepEqual(body.passkeys, [{
    name: "Phone",
    created: new Date(app.clock.now()).toISOString(),
    last_used: null,
    synced: true,
    backed_up: true,
  }]);
  assert.doesNotMatch(exported.text, /cred-lee|public_key/);
  const erased = await app.req("DELETE", "/api/me", { token: me.token });
  assert.equal(erased.status, 200, erased.text);
  assert.doesNotMatch(await dumpKv(app.kv), /"passkeys/);
});
