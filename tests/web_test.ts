/**
 * The web layer in-process: security headers, HTML error pages, the cross-site check,
 * web sessions (cookie, sign-in link that survives scanners, sign-out) and the form helper.
 * The browser tests (web_browser_test.ts) drive the same pages in Chromium.
 */
import assert from "node:assert/strict";
import { findAccountByEmail } from "../kv/accounts/accounts.ts";
import { listSessions } from "../kv/accounts/sessions.ts";
import { displayText } from "../lib/display.ts";
import { testApp } from "./_helpers.ts";
import { waitInWords } from "../web/_web.tsx";

const ORIGIN = "http://localhost";
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const post = (fields: Record<string, string>, extra: Record<string, string> = {}) => ({
  raw: form(fields),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...extra },
});
const cookieOf = (h: Headers) => h.get("set-cookie")?.match(/^(session=[^;]*)/)?.[1] ?? "";

Deno.test("pages carry the security headers; the API keeps its answers", async () => {
  await using t = await testApp();
  const home = await t.req("GET", "/");
  assert.equal(home.status, 200);
  assert.match(home.headers.get("content-type")!, /text\/html/);
  const csp = home.headers.get("content-security-policy")!;
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /style-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  assert.equal(home.headers.get("referrer-policy"), "no-referrer");
  assert.equal(home.headers.get("x-content-type-options"), "nosniff");
  assert.equal(home.headers.get("x-frame-options"), "DENY");
  // HSTS only over https (browsers ignore it on http); no headers of retired browsers.
  assert.equal(home.headers.get("strict-transport-security"), null);
  for (
    const name of ["x-xss-protection", "x-download-options", "x-permitted-cross-domain-policies"]
  ) {
    assert.equal(home.headers.get(name), null, name);
  }
  await using secure = await testApp({ config: { baseUrl: "https://cat.example" } });
  const hsts = (await secure.req("GET", "/")).headers.get("strict-transport-security");
  assert.match(hsts ?? "", /^max-age=\d+; includeSubDomains$/);
  // No inline script or style in the markup (the CSP would block them anyway).
  assert.doesNotMatch(home.text, /<script(?![^>]*\bsrc=)(?![^>]*application\/ld\+json)/);
  assert.doesNotMatch(home.text, /<style|style="/);
  assert.match(home.text, /<!DOCTYPE html>/);

  const api = await t.req("GET", "/api/nothing");
  assert.equal(api.status, 404);
  assert.deepEqual(api.body, { error: "not found" });
  assert.equal(api.headers.get("content-security-policy"), null);
});

Deno.test("not-found and wrong-method pages are HTML with the layout", async () => {
  await using t = await testApp();
  const nf = await t.req("GET", "/no/such/page");
  assert.equal(nf.status, 404);
  assert.match(nf.headers.get("content-type")!, /text\/html/);
  assert.match(nf.text, /<h1>Page not found<\/h1>/);
  assert.match(nf.text, /href="\/catalogue"/);
  const wrong = await t.req("DELETE", "/sign-in", { headers: { origin: ORIGIN } });
  assert.equal(wrong.status, 405);
  assert.match(wrong.text, /<h1>/);
});

Deno.test("a record id no record has (zero) is the not-found page on every kind of record", async () => {
  await using t = await testApp();
  const { token } = await t.account("owner@example.org", { roles: ["owner"] });
  const cookie = `session=${token}`;
  const pages = ["/me/services/0", "/me/incidents/0", "/me/journal/0", "/me/status-pages/0"];
  for (const path of [...pages, "/team/proposals/0", "/me/services/000"]) {
    const page = await t.req("GET", path, { headers: { cookie } });
    assert.equal(page.status, 404, path);
    assert.match(page.text, /<h1>Page not found<\/h1>/, path);
  }
  const posts = ["/me/files/0/delete", "/me/channels/0/delete", "/me/maintenance/0/end"];
  for (const path of [...posts, "/me/api-keys/0/revoke", "/me/devices/0/end"]) {
    const sent = await t.req("POST", path, post({}, { cookie }));
    assert.equal(sent.status, 404, path);
    assert.match(sent.text, /<h1>Page not found<\/h1>/, path);
  }
});

Deno.test("a form posted from another site, or without Origin, is refused", async () => {
  await using t = await testApp();
  const evil = await t.req(
    "POST",
    "/sign-in",
    post({ email: "a@example.com", age_ok: "on" }, {
      origin: "https://evil.example",
    }),
  );
  assert.equal(evil.status, 403);
  assert.match(evil.text, /another site/);
  const none = await t.req("POST", "/sign-in", {
    raw: form({ email: "a@example.com", age_ok: "on" }),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.equal(none.status, 403);
  assert.equal(t.mail.sent.length, 0);
});

Deno.test("the BASE_URL origin is accepted behind a proxy", async () => {
  await using t = await testApp({ config: { baseUrl: "https://cat.example" } });
  const res = await t.req(
    "POST",
    "/sign-in",
    post({ email: "a@example.com", age_ok: "on" }, {
      origin: "https://cat.example",
    }),
  );
  assert.equal(res.status, 303);
});

Deno.test("sign-in form: field errors beside the field, 303 when sent", async () => {
  await using t = await testApp();
  const bad = await t.req("POST", "/sign-in", post({ email: "not-an-address", age_ok: "on" }));
  assert.equal(bad.status, 400);
  assert.match(bad.text, /id="f-email"[^>]*aria-invalid="true"/);
  assert.match(bad.text, /aria-describedby="f-email-error"/);
  assert.match(bad.text, /<p class="error" id="f-email-error">[^<]+<\/p>/);
  assert.match(bad.text, /value="not-an-address"/);
  assert.equal(t.mail.sent.length, 0);

  const ok = await t.req("POST", "/sign-in", post({ email: "a@example.com", age_ok: "on" }));
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.get("location"), "/sign-in/sent");
  assert.match(t.mail.last("a@example.com")!.text, /http:\/\/test\.local\/me\?verify=/);
});

Deno.test("a sign-in link: GET shows and keeps it; the button signs the browser in", async () => {
  await using t = await testApp();
  await t.req("POST", "/sign-in", post({ email: "reader@example.com", age_ok: "on" }));
  const token = t.mail.linkToken("reader@example.com");

  // A scanner opening the link twice: the page, never the session.
  for (let i = 0; i < 2; i++) {
    const page = await t.req("GET", `/me?verify=${token}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /reader@example\.com/);
    assert.match(page.text, /<button type="submit">Sign in on this device<\/button>/);
    assert.equal(page.headers.get("set-cookie"), null);
    assert.equal(page.headers.get("cache-control"), "no-store");
  }
  assert.equal(await sessionsOf(t, "reader@example.com"), 0);

  const done = await t.req("POST", "/me/verify", post({ token }));
  assert.equal(done.status, 303);
  assert.equal(done.headers.get("location"), "/me");
  const setCookie = done.headers.get("set-cookie")!;
  assert.match(setCookie, /^session=\d+_[A-Za-z0-9_-]{43};/);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Lax/);
  assert.doesNotMatch(setCookie, /Secure/); // BASE_URL is http here
  const cookie = cookieOf(done.headers);
  assert.equal(await sessionsOf(t, "reader@example.com"), 1);

  const me = await t.req("GET", "/me", { headers: { cookie } });
  assert.equal(me.status, 200);
  assert.match(me.text, /reader@example\.com/);
  assert.match(me.text, /Sign out/);
  assert.equal(me.headers.get("cache-control"), "private, no-store");

  // The link is used up now.
  const again = await t.req("GET", `/me?verify=${token}`);
  assert.equal(again.status, 410);
  const reuse = await t.req("POST", "/me/verify", post({ token }));
  assert.equal(reuse.status, 410);
  assert.match(reuse.headers.get("content-type")!, /text\/html/);

  // The API is bearer-only: the cookie is no sign-in there.
  const api = await t.req("GET", "/api/me", { headers: { cookie } });
  assert.equal(api.status, 401);

  // The web session is a device like any other: listed, and ended by sign-out.
  const out = await t.req("POST", "/sign-out", post({}, { cookie }));
  assert.equal(out.status, 303);
  assert.match(out.headers.get("set-cookie")!, /session=;/);
  assert.equal(await sessionsOf(t, "reader@example.com"), 0);
  const after = await t.req("GET", "/me", { headers: { cookie } });
  assert.equal(after.status, 303);
  assert.equal(after.headers.get("location"), "/sign-in?next=%2Fme");
});

Deno.test("https: the cookie is Secure and __Host- prefixed", async () => {
  await using t = await testApp({ config: { baseUrl: "https://cat.example" } });
  const { account } = await t.account("s@example.com");
  await t.req(
    "POST",
    "/sign-in",
    post({ email: account.email, age_ok: "on" }, {
      origin: "https://cat.example",
    }),
  );
  const token = t.mail.linkToken(account.email);
  const done = await t.req(
    "POST",
    "/me/verify",
    post({ token }, { origin: "https://cat.example" }),
  );
  assert.equal(done.status, 303);
  assert.match(done.headers.get("set-cookie")!, /^__Host-session=[^;]+;.*Path=\/.*Secure/);
});

Deno.test("a second link in a signed-in browser replaces its session", async () => {
  await using t = await testApp();
  const email = "two@example.com";
  const signIn = async (cookie?: string) => {
    await t.req("POST", "/sign-in", post({ email, age_ok: "on" }, cookie ? { cookie } : {}));
    const token = t.mail.linkToken(email);
    const page = await t.req("GET", `/me?verify=${token}`, { headers: cookie ? { cookie } : {} });
    assert.equal(page.status, 200);
    const done = await t.req("POST", "/me/verify", post({ token }, cookie ? { cookie } : {}));
    assert.equal(done.status, 303);
    return cookieOf(done.headers);
  };
  const first = await signIn();
  t.clock.advance(60_000);
  const second = await signIn(first);
  assert.notEqual(first, second);
  assert.equal(await sessionsOf(t, email), 1);
  assert.equal((await t.req("GET", "/me", { headers: { cookie: second } })).status, 200);
  assert.equal((await t.req("GET", "/me", { headers: { cookie: first } })).status, 303);
});

Deno.test("an ended session's cookie is dropped; a forged cookie is nobody", async () => {
  await using t = await testApp();
  const { token } = await t.account("x@example.com");
  const ok = await t.req("GET", "/me", { headers: { cookie: `session=${token}` } });
  assert.equal(ok.status, 200);
  await t.req("DELETE", "/api/me/token", { token });
  const gone = await t.req("GET", "/me", { headers: { cookie: `session=${token}` } });
  assert.equal(gone.status, 303);
  assert.match(gone.headers.get("set-cookie") ?? "", /session=;/);
  const forged = await t.req("GET", "/", { headers: { cookie: "session=1_xxx" } });
  assert.equal(forged.status, 200);
  assert.match(forged.text, /href="\/sign-in"/);
});

Deno.test("pages are rate-limited with the form again, the wait in words, and Retry-After", async () => {
  await using t = await testApp();
  let last = 0;
  let res;
  for (let i = 0; i < 40 && last !== 429; i++) {
    res = await t.req("POST", "/sign-in", post({ email: `r${i}@example.com`, age_ok: "on" }));
    last = res.status;
  }
  assert.equal(last, 429);
  assert.match(res!.headers.get("content-type")!, /text\/html/);
  assert.ok(Number(res!.headers.get("retry-after")) > 0);
  // The sign-in form again, the sentence beside the address field, not a dead end.
  assert.match(res!.text, /<form method="post" action="\/sign-in"/);
  assert.match(res!.text, /id="f-email-error"[^>]*>[^<]*Too many requests for now; try again in/);
  assert.equal(waitInWords(3600), "an hour");
  assert.equal(waitInWords(50 * 60), "50 minutes");
  assert.equal(waitInWords(61), "2 minutes");
  assert.equal(waitInWords(2 * 3600), "2 hours");
  assert.equal(waitInWords(5), "5 seconds");
});

Deno.test("displayed names lose bidi and zero-width controls", async () => {
  assert.equal(displayText("evil\u202Emoc.elpmaxe"), "evilmoc.elpmaxe");
  assert.equal(displayText("a\u200Bd\u200Fm\u2066i\u2069n\uFEFF"), "admin");
  // A joiner inside an emoji sequence stays.
  assert.equal(displayText("\u{1F469}\u200D\u{1F4BB}"), "\u{1F469}\u200D\u{1F4BB}");
  await using t = await testApp();
  const { token } = await t.account("b@example.com", { name: "Ann\u202Egro.live" });
  const me = await t.req("GET", "/me", { headers: { cookie: `session=${token}` } });
  assert.match(me.text, /<bdi>Anngro\.live<\/bdi>/);
  assert.doesNotMatch(me.text, /\u202E/);
});

Deno.test("static files: versioned, cached, only our own", async () => {
  await using t = await testApp();
  const home = await t.req("GET", "/");
  const css = home.text.match(/href="(\/static\/site\.css\?v=[0-9a-f]+)"/)![1];
  const res = await t.req("GET", css);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /text\/css/);
  assert.match(res.headers.get("cache-control")!, /immutable/);
  assert.equal((await t.req("GET", "/static/..%2Fapp.ts")).status, 404);
  assert.equal((await t.req("GET", "/static/nothing.css")).status, 404);
  // Every script and stylesheet of a page comes from this origin.
  for (const m of home.text.matchAll(/(?:src|href)="([^"]+)"/g)) {
    const same = m[1].startsWith("/") && !m[1].startsWith("//");
    assert.ok(same || m[1].startsWith("#") || m[1].startsWith("http://test.local/"), m[1]);
  }
});

Deno.test("static files: the API reference viewer's files are served before its page is opened", async () => {
  // web/_swagger.ts registers them on first use, so a fresh process must still find them.
  await using t = await testApp();
  for (
    const [name, type] of [["swagger-ui.css", /text\/css/], [
      "swagger-ui-bundle.js",
      /javascript/,
    ]] as const
  ) {
    const res = await t.req("GET", `/static/${name}`);
    assert.equal(res.status, 200, name);
    assert.match(res.headers.get("content-type")!, type);
    assert.ok(res.text.length > 1000, name);
  }
  const page = await t.req("GET", "/api-reference");
  assert.equal(page.status, 200);
  assert.match(page.text, /src="\/static\/swagger-ui-bundle\.js\?v=[0-9a-f]{12}"/);
  assert.match(page.text, /href="\/static\/swagger-ui\.css\?v=[0-9a-f]{12}"/);
});

async function sessionsOf(t: Awaited<ReturnType<typeof testApp>>, email: string) {
  const acc = await t.kv.get<number>(["accounts_by_email", email]);
  if (acc.value === null) return 0;
  return (await listSessions(t.kv, acc.value)).length;
}

Deno.test("the navigations follow the page and the viewer: current link, name, team link", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const page = async (path: string, token?: string) => {
    const r = await t.req("GET", path, token ? { headers: { cookie: `session=${token}` } } : {});
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    return r.text;
  };
  const current = (html: string) =>
    [...html.matchAll(/href="([^"]+)" aria-current="page"/g)].map((m) => m[1]);
  assert.deepEqual(current(await page("/catalogue")), ["/catalogue"]);
  assert.deepEqual(current(await page("/search")), ["/search"]);
  assert.deepEqual(current(await page("/")), []);
  assert.deepEqual(current(await page("/me", ada.token)), ["/me", "/me"]);
  assert.deepEqual(current(await page("/me/devices", ada.token)), ["/me/devices"]);
  assert.match(await page("/catalogue", ada.token), /Account \(<bdi>Ada<\/bdi>\)/);
  const renamed = await t.req("PATCH", "/api/me", {
    token: ada.token,
    body: { name: "Ada Lovelace" },
  });
  assert.equal(renamed.status, 200, renamed.text);
  assert.match(await page("/catalogue", ada.token), /Account \(<bdi>Ada Lovelace<\/bdi>\)/);
  assert.doesNotMatch(await page("/me", ada.token), /href="\/team"/);
  assert.match(await page("/me", rev.token), /href="\/team"/);
  assert.doesNotMatch(await page("/me", ada.token), /href="\/team"/);
});

Deno.test("sign-in: the age confirmation is asked once per account, on the form or the link's page", async () => {
  await using t = await testApp();
  const page = async (token: string) => await t.req("GET", `/me?verify=${token}`);
  const press = async (token: string, fields: Record<string, string> = {}) =>
    await t.req("POST", "/me/verify", post({ token, ...fields }));
  const ask = async (fields: Record<string, string>) => {
    const r = await t.req("POST", "/sign-in", post({ email: "kim@example.com", ...fields }));
    assert.equal(r.status, 303, r.text);
    return t.mail.linkToken("kim@example.com");
  };

  // Not ticked on the form (the answer is the same either way): the link's page asks it, and
  // the link is not used until the box is ticked.
  const first = await ask({});
  assert.match((await page(first)).text, /id="f-age_ok"[^>]*required/);
  const refused = await press(first);
  assert.equal(refused.status, 400);
  assert.match(refused.text, /id="f-age_ok-error">Please confirm this to sign in\./);
  assert.equal((await page(first)).status, 200, "the link still works");
  const done = await press(first, { age_ok: "on" });
  assert.equal(done.status, 303, done.text);
  const kim = await findAccountByEmail(t.kv, "kim@example.com");
  assert.equal(typeof kim?.value.age_confirmed, "number");

  // The next sign-in, box left empty: not asked again.
  const second = await ask({});
  assert.doesNotMatch((await page(second)).text, /f-age_ok/);
  assert.equal((await press(second)).status, 303);

  // Ticked on the form: the link carries it and its page does not ask.
  const r = await t.req("POST", "/sign-in", post({ email: "lee@example.com", age_ok: "on" }));
  assert.equal(r.status, 303);
  const lee = t.mail.linkToken("lee@example.com");
  assert.doesNotMatch((await page(lee)).text, /f-age_ok/);
  assert.equal((await press(lee)).status, 303);
  assert.equal(
    typeof (await findAccountByEmail(t.kv, "lee@example.com"))?.value.age_confirmed,
    "number",
  );
});
