/**
 * Sign-in through providers, end to end: the app (in process) against a real OpenID provider
 * (npm `oidc-provider` on 127.0.0.1, its own login and consent pages) and a local server that
 * answers GitHub's documented OAuth endpoints. A cookie-keeping client walks the redirects as
 * a browser does.
 */
import assert from "node:assert/strict";
import { findAccountByEmail } from "../kv/accounts/accounts.ts";
import { identitiesOf } from "../kv/accounts/identities.ts";
import { listSessions } from "../kv/accounts/sessions.ts";
import { loadConfig } from "../lib/config.ts";
import { MINUTE } from "../lib/clock.ts";
import { dumpKv, expectLog, type TestApp, testApp } from "./_helpers.ts";
import {
  browse,
  gitHubLike,
  type GitHubUser,
  openIdProvider,
  type Person,
  type ProviderShape,
} from "./_providers.ts";
import { captureLog } from "../lib/log.ts";

const BASE = "http://test.local";

const PEOPLE: Record<string, Person> = {
  alice: { sub: "alice", email: "alice@example.org", email_verified: true, name: "Alice Provider" },
  bob: { sub: "bob", email: "bob@example.org", email_verified: true, name: "Bob" },
  carol: { sub: "carol", email: "carol@example.org", email_verified: false, name: "Carol" },
  dan: { sub: "dan", email: "dan@example.org", email_verified: false, name: "Dan" },
  erin: { sub: "erin", email: "erin@elsewhere.example", email_verified: true, name: "Erin" },
};

async function setUp(shape: ProviderShape = {}, oidc: { issuer?: string; secret?: string } = {}) {
  const op = await openIdProvider([`${BASE}/sign-in/callback/oidc`], PEOPLE, shape);
  const gh = gitHubLike({
    id: 4242,
    login: "octo",
    name: "Octo Cat",
    emails: [{ email: "octo@example.org", verified: true, primary: true }],
  });
  const config = loadConfig({
    BASE_URL: BASE,
    OIDC_ISSUER: oidc.issuer ?? op.issuer,
    OIDC_CLIENT_ID: op.clientId,
    OIDC_CLIENT_SECRET: oidc.secret ?? op.clientSecret,
    OIDC_NAME: "Example ID",
    GITHUB_CLIENT_ID: gh.clientId,
    GITHUB_CLIENT_SECRET: gh.clientSecret,
    GITHUB_URL: gh.url,
    GITHUB_API_URL: gh.url,
  });
  const app = await testApp({ config: { providers: config.providers, logLevel: "debug" } });
  return {
    app,
    op,
    gh,
    async [Symbol.asyncDispose]() {
      await app[Symbol.asyncDispose]();
      await op[Symbol.asyncDispose]();
      await gh[Symbol.asyncDispose]();
    },
  };
}

function client(app: TestApp) {
  return browse({
    [BASE]: (req) =>
      Promise.resolve(app.app.request(req, undefined, { remoteAddr: { hostname: "192.0.2.7" } })),
  });
}

type Client = ReturnType<typeof client>;

/** From the sign-in page's button to the provider's login page. */
async function startOidc(b: Client, path = "/sign-in/with/oidc") {
  const page = await b.go(`${BASE}${path}`);
  return page;
}

/** At the OpenID provider: signs in as `login`, then Continue on its consent page. */
async function consentAs(b: Client, page: { res: Response; url: string }, login: string) {
  assert.match(page.url, /\/interaction\//, `at the provider's login page, not ${page.url}`);
  const consent = await b.submit(page, { prompt: "login", login, password: "any" });
  assert.match(consent.url, /\/interaction\//);
  return await b.submit(consent, { prompt: "consent" });
}

const textOf = async (page: { res: Response }) => await page.res.text();

Deno.test("OpenID provider: a new verified person gets a new account and a device session", async () => {
  await using s = await setUp();
  const b = client(s.app);
  const signIn = await b.go(`${BASE}/sign-in`);
  const html = await textOf(signIn);
  assert.match(html, /href="\/sign-in\/with\/oidc">\s*Sign in with Example ID/);
  assert.match(html, /Sign in with GitHub/);
  const done = await consentAs(b, await startOidc(b), "alice");
  assert.equal(done.res.status, 200);
  assert.equal(new URL(done.url).pathname, "/me");
  await done.res.body?.cancel();
  const acc = await findAccountByEmail(s.app.kv, "alice@example.org");
  assert.ok(acc);
  assert.equal(acc.value.name, "Alice Provider");
  const ids = await identitiesOf(s.app.kv, acc.value.id);
  assert.deepEqual(ids.map((i) => [i.provider, i.subject]), [["oidc", "alice"]]);
  const sessions = await listSessions(s.app.kv, acc.value.id);
  assert.deepEqual(sessions.map((x) => x.session.via), ["oidc"]);
  // The devices page names how the browser signed in.
  const devices = await textOf(await b.go(`${BASE}/me/devices`));
  assert.match(devices, /<td data-label="[^"]*">Example ID<\/td>/);
  // No new-device notice for a new account; nothing of the exchange kept.
  assert.equal(s.app.mail.sent.length, 0);
  const dump = await dumpKv(s.app.kv);
  assert.doesNotMatch(dump, /sign_in_flows/);
  // The same person again: the same account, a second session, a notice mailed.
  const b2 = client(s.app);
  const again = await consentAs(b2, await startOidc(b2), "alice");
  assert.equal(new URL(again.url).pathname, "/me");
  assert.equal((await listSessions(s.app.kv, acc.value.id)).length, 2);
  assert.equal(s.app.mail.sent.filter((m) => m.to === "alice@example.org").length, 1);
});

Deno.test("OpenID provider: one that takes client_secret_basic only signs in", async () => {
  await using s = await setUp({ authMethods: ["client_secret_basic"] });
  const discovery = await (await fetch(`${s.op.issuer}/.well-known/openid-configuration`)).json();
  assert.deepEqual(discovery.token_endpoint_auth_methods_supported, ["client_secret_basic"]);
  const b = client(s.app);
  const done = await consentAs(b, await startOidc(b), "alice");
  assert.equal(new URL(done.url).pathname, "/me");
  await done.res.body?.cancel();
  assert.ok(await findAccountByEmail(s.app.kv, "alice@example.org"));
});

Deno.test("OpenID provider: one that takes client_secret_post only gets the body form", async () => {
  await using s = await setUp({ authMethods: ["client_secret_post"] });
  const b = client(s.app);
  const done = await consentAs(b, await startOidc(b), "alice");
  assert.equal(new URL(done.url).pathname, "/me");
  await done.res.body?.cancel();
});

Deno.test("OpenID provider: an Authentik-style issuer, a path with its final slash, signs in", async () => {
  await using s = await setUp({ path: "/application/o/catalogue/" });
  assert.match(s.op.issuer, /\/application\/o\/catalogue\/$/);
  const b = client(s.app);
  const done = await consentAs(b, await startOidc(b), "alice");
  assert.equal(new URL(done.url).pathname, "/me");
  await done.res.body?.cancel();
  assert.ok(await findAccountByEmail(s.app.kv, "alice@example.org"));
});

Deno.test("OpenID provider: a Keycloak-style issuer, a path without a final slash, signs in", async () => {
  await using s = await setUp({ path: "/realms/catalogue" });
  assert.match(s.op.issuer, /\/realms\/catalogue$/);
  const b = client(s.app);
  const done = await consentAs(b, await startOidc(b), "alice");
  assert.equal(new URL(done.url).pathname, "/me");
  await done.res.body?.cancel();
});

Deno.test("OpenID provider: an issuer written otherwise than the provider's is refused, and the log says why", async () => {
  const lines: string[] = [];
  const restore = captureLog((line) => lines.push(line));
  try {
    const op = await openIdProvider([`${BASE}/sign-in/callback/oidc`], PEOPLE, {
      path: "/application/o/catalogue/",
    });
    await using _op = op;
    await using s = await setUp({}, { issuer: op.issuer.replace(/\/$/, "") });
    const b = client(s.app);
    const page = await b.go(`${BASE}/sign-in/with/oidc`);
    assert.equal(page.res.status, 502);
    assert.match(await textOf(page), /href="\/sign-in">Mail me a sign-in link instead/);
    const line = lines.map((l) => JSON.parse(l)).find((l) =>
      l.msg === "sign-in provider discovery failed"
    );
    assert.ok(line, lines.join("\n"));
    assert.equal(line.theirs, op.issuer);
    assert.equal(line.configured, op.issuer.replace(/\/$/, ""));
  } finally {
    restore();
  }
});

Deno.test("OpenID provider: a refused client secret is named on the page and in the log, never the secret", async () => {
  const lines: string[] = [];
  const restore = captureLog((line) => lines.push(line));
  try {
    await using s = await setUp({ authMethods: ["client_secret_basic"] }, {
      secret: "not-the-secret-the-provider-knows-0123",
    });
    const b = client(s.app);
    const done = await consentAs(b, await startOidc(b), "alice");
    assert.equal(done.res.status, 502);
    const html = await textOf(done);
    assert.match(html, /Example ID refused this server&#39;s client id or secret/);
    assert.match(html, /OIDC_CLIENT_SECRET/);
    assert.match(html, /href="\/sign-in">Mail me a sign-in link instead/);
    const line = lines.map((l) => JSON.parse(l)).find((l) =>
      l.msg === "sign-in provider refused the token request"
    );
    assert.ok(line, lines.join("\n"));
    assert.equal(line.provider, "oidc");
    assert.equal(line.status, 401);
    assert.equal(line.error, "invalid_client");
    assert.equal(typeof line.error_description, "string");
    assert.doesNotMatch(lines.join("\n"), /not-the-secret|a-client-secret-for-tests/);
    assert.equal(await findAccountByEmail(s.app.kv, "alice@example.org"), null);
  } finally {
    restore();
  }
});

Deno.test("OpenID provider: a verified address joins its account; an unverified one never does", async (t) => {
  await using s = await setUp();
  const bob = await s.app.account("bob@example.org", { name: "Bob Here" });
  const carol = await s.app.account("carol@example.org", { name: "Carol Here" });

  await t.step("verified: joins bob's account, keeps his name, mails the notice", async () => {
    const b = client(s.app);
    const done = await consentAs(b, await startOidc(b), "bob");
    assert.equal(new URL(done.url).pathname, "/me");
    await done.res.body?.cancel();
    const ids = await identitiesOf(s.app.kv, bob.account.id);
    assert.equal(ids.length, 1);
    const acc = await findAccountByEmail(s.app.kv, "bob@example.org");
    assert.equal(acc?.value.name, "Bob Here");
    assert.ok(s.app.mail.sent.some((m) => m.to === "bob@example.org"));
  });

  await t.step("unverified, address taken: refused, the account untouched", async () => {
    const before = await dumpKv(s.app.kv);
    const b = client(s.app);
    const done = await consentAs(b, await startOidc(b), "carol");
    assert.equal(done.res.status, 409);
    const html = await textOf(done);
    assert.match(html, /has not verified that address/);
    assert.match(html, /Mail me a sign-in link instead/);
    assert.equal(b.jarOf("test.local").has("session"), false);
    assert.equal((await identitiesOf(s.app.kv, carol.account.id)).length, 0);
    assert.equal((await listSessions(s.app.kv, carol.account.id)).length, 1);
    assert.equal(
      (await dumpKv(s.app.kv)).split("\n").filter((l) => !l.startsWith('["rate"')).join("\n"),
      before.split("\n").filter((l) => !l.startsWith('["rate"')).join("\n"),
    );
  });

  await t.step("unverified, new address: no account is made", async () => {
    const b = client(s.app);
    const done = await consentAs(b, await startOidc(b), "dan");
    assert.equal(done.res.status, 400);
    assert.match(await textOf(done), /has not verified an e-mail address of yours/);
    assert.equal(await findAccountByEmail(s.app.kv, "dan@example.org"), null);
  });
});

Deno.test("OpenID provider: every failure ends on a page that says what happened", async (t) => {
  await using s = await setUp();

  await t.step("consent declined at the provider", async () => {
    const b = client(s.app);
    const login = await startOidc(b);
    const consent = await b.submit(login, { prompt: "login", login: "alice", password: "x" });
    const html = await consent.res.text();
    const abort = html.match(/href="([^"]*\/abort)"/)?.[1];
    assert.ok(abort, "the consent page has its cancel link");
    const done = await b.go(new URL(abort, consent.url).href);
    assert.equal(done.res.status, 403);
    const text = await textOf(done);
    assert.match(text, /You declined at Example ID/);
    assert.match(text, /href="\/sign-in">Mail me a sign-in link instead/);
  });

  await t.step("wrong state: an answer that is not this browser's", async () => {
    const b = client(s.app);
    const login = await startOidc(b);
    const consent = await b.submit(login, { prompt: "login", login: "alice", password: "x" });
    // Stop at the redirect back to us and change its state.
    const back = await b.submit(consent, { prompt: "consent" }).catch(() => null);
    assert.ok(back);
    await back.res.body?.cancel();
    // Start again, then present another flow's answer (state from elsewhere).
    const b2 = client(s.app);
    const first = await startOidc(b2);
    await first.res.body?.cancel();
    const forged = await b2.go(
      `${BASE}/sign-in/callback/oidc?code=abc&state=not-this-one&iss=${
        encodeURIComponent(s.op.issuer)
      }`,
    );
    assert.equal(forged.res.status, 400);
    assert.match(await textOf(forged), /does not belong to a sign-in started in this browser/);
  });

  await t.step("a replayed callback is refused", async () => {
    const b = client(s.app);
    const login = await startOidc(b);
    const consent = await b.submit(login, { prompt: "login", login: "alice", password: "x" });
    // Follow by hand to keep the callback address.
    const html = await consent.res.text();
    const action = html.match(/<form[^>]*action="([^"]+)"/)![1];
    let res = await b.one(new URL(action, consent.url).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "prompt=consent",
    });
    let url = new URL(action, consent.url).href;
    let callback = "";
    while (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      url = new URL(res.headers.get("location")!, url).href;
      if (url.startsWith(`${BASE}/sign-in/callback/`)) callback = url;
      res = await b.one(url);
    }
    assert.ok(callback);
    assert.equal(new URL(url).pathname, "/me");
    await res.body?.cancel();
    // The same answer again, in the same browser: the flow is used up.
    const again = await b.go(callback);
    assert.equal(again.res.status, 410);
    assert.match(await textOf(again), /finished already or took longer than 10 minutes/);
    // The same code with a new flow's state: the provider refuses the used code.
    const fresh = await startOidc(b);
    await fresh.res.body?.cancel();
    const flowState = new URL(
      (await b.one(`${BASE}/sign-in/with/oidc`)).headers.get("location")!,
    ).searchParams.get("state")!;
    const replay = new URL(callback);
    replay.searchParams.set("state", flowState);
    const refused = await expectLog(
      [/"provider":"oidc","status":400,"error":"invalid_grant"/],
      () => b.go(replay.href),
    );
    assert.equal(refused.res.status, 400);
    assert.match(await textOf(refused), /did not confirm who you are/);
  });

  await t.step("an expired flow", async () => {
    const b = client(s.app);
    const login = await startOidc(b);
    s.app.clock.advance(11 * MINUTE);
    const done = await consentAs(b, login, "alice");
    assert.equal(done.res.status, 410);
    await done.res.body?.cancel();
  });

  await t.step("the provider is down", async () => {
    s.op.down = true;
    try {
      const b = client(s.app);
      const done = await expectLog(
        [/"sign-in provider answered with an error","provider":"oidc","status":503/],
        () => b.go(`${BASE}/sign-in/with/oidc`),
      );
      assert.equal(done.res.status, 502);
      assert.match(await textOf(done), /Example ID did not answer/);
    } finally {
      s.op.down = false;
    }
  });

  await t.step("an unknown provider is a 404", async () => {
    const res = await s.app.req("GET", "/sign-in/with/myspace");
    assert.equal(res.status, 404);
  });
});

Deno.test("sign-in methods: link a provider, sign in with it, unlink it; export and erase", async () => {
  await using s = await setUp();
  const b = client(s.app);
  // Signed in by a mailed link (the session cookie of an account made for the test).
  const me = await s.app.account("zoe@example.org", { name: "Zoe" });
  b.jarOf("test.local").set("session", me.token);
  const page = await textOf(await b.go(`${BASE}/me/sign-in-methods`));
  assert.match(page, /always signs you in/);
  assert.match(page, /href="\/me\/sign-in-methods\/add\/oidc">Add Example ID/);
  // Erin's address at the provider is not Zoe's: linking does not need it to be.
  const done = await consentAs(b, await startOidc(b, "/me/sign-in-methods/add/oidc"), "erin");
  assert.equal(new URL(done.url).pathname, "/me/sign-in-methods");
  const listed = await done.res.text();
  assert.match(listed, /Example ID now signs you in/);
  assert.match(listed, /erin@elsewhere\.example/);
  const ids = await identitiesOf(s.app.kv, me.account.id);
  assert.equal(ids.length, 1);

  // Erin's provider account now signs in to Zoe's account.
  const other = client(s.app);
  const signedIn = await consentAs(other, await startOidc(other), "erin");
  assert.equal(new URL(signedIn.url).pathname, "/me");
  await signedIn.res.body?.cancel();
  assert.equal((await listSessions(s.app.kv, me.account.id)).length, 2);
  assert.equal(await findAccountByEmail(s.app.kv, "erin@elsewhere.example"), null);

  // Another account cannot link the same provider account.
  const ann = await s.app.account("ann@example.org", { name: "Ann" });
  const c = client(s.app);
  c.jarOf("test.local").set("session", ann.token);
  const taken = await consentAs(c, await startOidc(c, "/me/sign-in-methods/add/oidc"), "erin");
  assert.equal(taken.res.status, 409);
  const takenPage = await textOf(taken);
  assert.match(takenPage, /already signs in to another account here/);
  // The way back, and the way into the account that has it: a mailed link.
  assert.match(takenPage, /href="\/me\/sign-in-methods">Back to your sign-in methods/);
  assert.match(takenPage, /href="\/sign-in">Mail me a sign-in link instead/);

  // Export lists it (no token), erasure removes it.
  const exported = await s.app.req("GET", "/api/me/export", { token: me.token });
  assert.equal(exported.status, 200);
  const data = exported.body as { identities: { provider: string; subject: string }[] };
  assert.deepEqual(data.identities.map((i) => [i.provider, i.subject]), [["oidc", "erin"]]);
  assert.doesNotMatch(exported.text, /access_token|client_secret/);

  // Unlink: the page's Remove button.
  const removeHtml = await textOf(await b.go(`${BASE}/me/sign-in-methods`));
  const action =
    removeHtml.match(/action="(\/me\/sign-in-methods\/oidc\/[0-9a-f]{40}\/remove)"/)![1];
  const removed = await b.go(`${BASE}${action}`, { method: "POST" });
  assert.equal(new URL(removed.url).pathname, "/me/sign-in-methods");
  await removed.res.body?.cancel();
  assert.equal((await identitiesOf(s.app.kv, me.account.id)).length, 0);
  // Erin is now a stranger again: a verified new address makes her own account.
  const third = client(s.app);
  const own = await consentAs(third, await startOidc(third), "erin");
  await own.res.body?.cancel();
  const erin = await findAccountByEmail(s.app.kv, "erin@elsewhere.example");
  assert.ok(erin);
  assert.notEqual(erin.value.id, me.account.id);
});

Deno.test("erasure removes the identities of the account", async () => {
  await using s = await setUp();
  const b = client(s.app);
  const done = await consentAs(b, await startOidc(b), "alice");
  await done.res.body?.cancel();
  const acc = (await findAccountByEmail(s.app.kv, "alice@example.org"))!;
  const token = b.jarOf("test.local").get("session")!;
  const erased = await s.app.req("DELETE", "/api/me", { token });
  assert.equal(erased.status, 200, erased.text);
  assert.equal((await identitiesOf(s.app.kv, acc.value.id)).length, 0);
  assert.doesNotMatch(await dumpKv(s.app.kv), /"alice"|"identities/);
});

const GH_USER: GitHubUser = {
  id: 4242,
  login: "octo",
  name: "Octo Cat",
  emails: [
    { email: "old@example.org", verified: true, primary: false },
    { email: "octo@example.org", verified: true, primary: true },
  ],
};

Deno.test("GitHub: a verified primary address signs in; the token is not kept", async (t) => {
  await using s = await setUp();
  s.gh.user = GH_USER;

  await t.step(
    "new account from the verified primary address",
    async () => {
      const b = client(s.app);
      const done = await b.go(`${BASE}/sign-in/with/github?next=/me/devices`);
      assert.equal(new URL(done.url).pathname, "/me/devices");
      assert.match(await textOf(done), /<td data-label="[^"]*">GitHub<\/td>/);
      const acc = await findAccountByEmail(s.app.kv, "octo@example.org");
      assert.ok(acc);
      assert.equal(acc.value.name, "Octo Cat");
      const ids = await identitiesOf(s.app.kv, acc.value.id);
      assert.deepEqual(ids.map((i) => [i.provider, i.subject]), [["github", "4242"]]);
      const dump = await dumpKv(s.app.kv);
      for (const token of s.gh.tokensSeen) assert.ok(!dump.includes(token), "no token in KV");
      for (const code of s.gh.codes) assert.ok(!dump.includes(code), "no code in KV");
    },
  );

  await t.step("a replayed code is refused", async () => {
    const b = client(s.app);
    const first = await b.one(`${BASE}/sign-in/with/github`);
    const authorize = first.headers.get("location")!;
    const state = new URL(authorize).searchParams.get("state")!;
    const used = s.gh.codes[0];
    const res = await expectLog(
      [/"provider":"github","status":200,"error":"bad_verification_code"/],
      () => b.go(`${BASE}/sign-in/callback/github?code=${used}&state=${state}`),
    );
    assert.equal(res.res.status, 400);
    assert.match(await textOf(res), /GitHub did not confirm who you are/);
  });

  await t.step("an unverified primary address is refused", async () => {
    s.gh.user = {
      id: 77,
      login: "newbie",
      name: null,
      emails: [{ email: "newbie@example.org", verified: false, primary: true }],
    };
    const b = client(s.app);
    const done = await b.go(`${BASE}/sign-in/with/github`);
    assert.equal(done.res.status, 400);
    assert.match(await textOf(done), /GitHub has not verified an e-mail address of yours/);
    assert.equal(await findAccountByEmail(s.app.kv, "newbie@example.org"), null);
  });

  await t.step("declined at GitHub", async () => {
    s.gh.deny = true;
    try {
      const b = client(s.app);
      const done = await b.go(`${BASE}/sign-in/with/github`);
      assert.equal(done.res.status, 403);
      assert.match(await textOf(done), /You declined at GitHub/);
    } finally {
      s.gh.deny = false;
    }
  });

  await t.step("GitHub down at the token exchange", async () => {
    s.gh.down = true;
    s.gh.user = GH_USER;
    try {
      const b = client(s.app);
      const done = await expectLog(
        [/"sign-in provider answered with an error","provider":"github","status":503/],
        () => b.go(`${BASE}/sign-in/with/github`),
      );
      assert.equal(done.res.status, 502);
      assert.match(await textOf(done), /GitHub did not answer/);
    } finally {
      s.gh.down = false;
    }
  });
});

Deno.test("provider sign-ins are rate limited per client network", async () => {
  await using s = await setUp();
  for (let i = 0; i < 30; i++) {
    const res = await s.app.req("GET", "/sign-in/with/github");
    assert.equal(res.status, 303);
  }
  const over = await s.app.req("GET", "/sign-in/with/github");
  assert.equal(over.status, 429);
  assert.ok(over.headers.get("retry-after"));
  assert.match(over.text, /too many sign-ins/);
  assert.match(over.text, /Mail me a sign-in link instead/);
});
