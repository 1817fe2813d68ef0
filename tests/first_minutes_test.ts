/**
 * What a new user meets in the first ten minutes (issue 21), in process: the sign-in form names
 * a new account, a used link opened by a signed-in browser says so and leads on, sign-out says
 * it happened, the heartbeat's lines match docs/operations.md, and the small display faults.
 */
import assert from "node:assert/strict";
import { SIGNALS } from "../web/me_services.tsx";
import { testApp } from "./_helpers.ts";

const ORIGIN = "http://localhost";
const post = (fields: Record<string, string>, cookie = "") => ({
  raw: new URLSearchParams(fields).toString(),
  headers: {
    "content-type": "application/x-www-form-urlencoded",
    origin: ORIGIN,
    ...(cookie ? { cookie } : {}),
  },
});
const cookieOf = (h: Headers) => h.get("set-cookie")?.match(/^(session=[^;]*)/)?.[1] ?? "";

Deno.test("sign-in: a name for a new account, a used link while signed in, signing out", async () => {
  await using t = await testApp();
  const page = await t.req("GET", "/sign-in");
  assert.match(page.text, /<label for="f-name">Your name \(new accounts\)<\/label>/);
  assert.match(page.text, /<input id="f-name" name="name"[^>]*maxlength="120"/);

  const sent = await t.req(
    "POST",
    "/sign-in",
    post({ email: "nia@example.org", name: "Nia Okafor", age_ok: "on", next: "/me" }),
  );
  assert.equal(sent.status, 303, sent.text);
  const token = t.mail.linkToken("nia@example.org");
  const done = await t.req("POST", "/me/verify", post({ token }));
  assert.equal(done.status, 303);
  const cookie = cookieOf(done.headers);
  const me = await t.req("GET", "/me", { headers: { cookie } });
  assert.match(me.text, /Nia Okafor/, "the new account has the name from the form");

  // The link again (Back, or the mail opened again): signed in already, and where to go.
  const again = await t.req("GET", `/me?verify=${token}`, { headers: { cookie } });
  assert.equal(again.status, 200);
  assert.match(again.text, /<h1>You are signed in<\/h1>/);
  assert.match(again.text, /nia@example\.org/);
  assert.match(again.text, /<a href="\/me">Go to your account<\/a>/);
  // Its button pressed again: the same page, no error.
  const twice = await t.req("POST", "/me/verify", post({ token }, cookie));
  assert.equal(twice.status, 303);
  assert.equal(twice.headers.get("location"), `/me?verify=${token}`);
  // Without a session it is still the page that offers a new link.
  const stranger = await t.req("GET", `/me?verify=${token}`);
  assert.equal(stranger.status, 410);
  assert.match(stranger.text, /Ask for a new link/);

  const out = await t.req("POST", "/sign-out", post({}, cookie));
  assert.equal(out.status, 303);
  assert.equal(out.headers.get("location"), "/?signed-out=1");
  const home = await t.req("GET", "/?signed-out=1");
  assert.match(home.text, /<p class="notice" role="status">You are signed out\.<\/p>/);
  assert.doesNotMatch((await t.req("GET", "/")).text, /You are signed out/);
});

Deno.test("heartbeat lines: the page's lines are docs/operations.md's, with the address", async () => {
  const docs = await Deno.readTextFile(new URL("../docs/operations.md", import.meta.url));
  const block = docs.match(/## Heartbeats from cron jobs[^]*?```sh\n([^]*?)```/)![1];
  const lines = block.trim().split("\n").map((l) => l.replace(/\s+#.*$/, "").trim());
  assert.deepEqual(SIGNALS.map((s) => s.line("$B/KEY")), lines);

  await using t = await testApp();
  const { token } = await t.account("hb@example.org", { name: "Hana" });
  const cookie = `session=${token}`;
  const added = await t.req(
    "POST",
    "/me/services",
    post({ kind: "webhook", name: "Backup", interval: "1440", group: "Public" }, cookie),
  );
  assert.equal(added.status, 303, added.text);
  const hookPage = await t.req("GET", added.headers.get("location")!, { headers: { cookie } });
  const hook = hookPage.text.match(/id="hook-url"[^>]*value="([^"]+)"/)![1];
  for (const [i, s] of SIGNALS.entries()) {
    const shown = hookPage.text.match(new RegExp(`id="signal-${i}"[^>]*value="([^"]+)"`))![1];
    assert.equal(shown.replaceAll("&quot;", '"').replaceAll("&amp;", "&"), s.line(hook));
  }
  assert.match(hookPage.text, /Grace is how many minutes late a beat may come/);
});
