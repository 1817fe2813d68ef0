/**
 * What a new user meets in the first ten minutes (issue 21), in process: the sign-in form names
 * a new account, a used link opened by a signed-in browser says so and leads on, sign-out says
 * it happened, the heartbeat's lines match docs/operations.md, and the small display faults.
 */
import assert from "node:assert/strict";
import { SIGNALS } from "../web/_service_form.tsx";
import { ME_PAGES } from "../web/_me.tsx";
import { testApp } from "./_helpers.ts";
import { runTask } from "./_server.ts";

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

Deno.test("display: uptime words agree on both pages; a log sits in its own column; the API badges", async () => {
  await using t = await testApp();
  const { token } = await t.account("hb@example.org", { name: "Hana Probe" });
  const cookie = `session=${token}`;
  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Backup", check: "webhook:", interval: 5 },
  });
  const id = made.body.item.id;
  const hook = new URL(made.body.hook_url).pathname;
  for (let i = 0; i < 8; i++) {
    const r = await t.req("POST", hook, { raw: i === 7 ? "disk 81 % full" : undefined });
    assert.equal(r.status, 200);
    t.clock.advance(1000);
  }
  const saved = await t.req(
    "POST",
    "/me/status-page",
    post({ enabled: "on", title: "Hana's", [`show-${id}`]: "on" }, cookie),
  );
  assert.equal(saved.status, 303, saved.text);
  const words = async () => {
    const mine = await t.req("GET", `/me/services/${id}`, { headers: { cookie } });
    const pub = await t.req("GET", "/status/hana-probe");
    assert.equal(pub.status, 200);
    // A figure, or null where each page says in its words that there is none yet.
    const figure = (text: string) => /^\d/.test(text) ? text : null;
    return {
      mine: figure(mine.text.match(/Uptime, 90 days<\/dt><dd>(.*?)<\/dd>/)![1]),
      pub: figure(pub.text.match(/90-day uptime: ([^<]*)</)![1]),
      page: mine.text,
    };
  };
  // Before a figure: the owner reads why, a visitor only that there is none yet.
  const first = await words();
  assert.equal(first.mine, null);
  assert.equal(first.pub, null);
  assert.match(first.page, /role="img" aria-label="No figure yet: uptime is given once/);
  assert.match((await t.req("GET", "/status/hana-probe")).text, /90-day uptime: no data yet</);
  // The log of the last beat is in the Log column, not under the status.
  assert.match(
    first.page,
    /<th scope="col">Status<\/th><th scope="col">Log<\/th>/,
  );
  assert.match(first.page, /<summary>Show the log<\/summary><pre>disk 81 % full<\/pre>/);
  t.clock.advance(6 * 60_000);
  const { MINUTELY, runJobs } = await import("../jobs/mod.ts");
  await runJobs(t.deps, MINUTELY);
  const later = await words();
  assert.equal(later.pub, later.mine);

  // The API reference's version badges are <pre> in Swagger UI's pill: the page's pre
  // background must not cover their white text.
  const css = await Deno.readTextFile(new URL("../web/static/site.css", import.meta.url));
  assert.match(css, /\.swagger-ui \.info \.title small pre \{\s*background: transparent;/);
});

Deno.test("files page: a refused file lists the accepted endings, in words", async () => {
  await using t = await testApp();
  const { token } = await t.account("fi@example.org", { name: "Fi" });
  const page = await t.req("GET", "/me/files", { headers: { cookie: `session=${token}` } });
  assert.match(page.text, /<summary>Which endings are accepted\?<\/summary><p>\.pdf, \.doc, /);
  const refused = await t.app.request("/me/files/upload", {
    method: "POST",
    headers: {
      origin: "http://test.local",
      cookie: `session=${token}`,
      "x-file-name": "setup.exe",
      "content-length": "2",
      "content-type": "application/octet-stream",
    },
    body: "MZ",
  });
  assert.equal(refused.status, 415);
  const { error } = await refused.json();
  assert.match(error, /^Files ending in \.exe are not accepted\. Accepted endings: \.pdf, \.doc, /);
  assert.doesNotMatch(error, /accepted lists|X-File/);
});

Deno.test("deno task demo says what it made: published and not", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runTask("demo", ["--create"], { KV_PATH: `${dir}/kv.sqlite3` });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /- modules: 5 created, 0 updated, 0 unchanged\n/);
    assert.match(
      r.stdout,
      /- 4 published, shown in the catalogue: pond-life-through-the-seasons, /,
    );
    assert.match(
      r.stdout,
      /- 1 not published, seen only by their contributors: first-steps-with-microcontrollers\n/,
    );
    assert.equal(r.stderr, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("newcomer words: each account page says what it is for; standing, groups, places, points", async () => {
  await using t = await testApp();
  const { token } = await t.account("new@example.org", { name: "Nia" });
  const cookie = `session=${token}`;
  const get = async (path: string) => (await t.req("GET", path, { headers: { cookie } })).text;
  const overview = await get("/me");
  for (const [path, label, purpose] of ME_PAGES.slice(1)) {
    assert.ok(overview.includes(`<dt><a href="${path}">${label}</a></dt><dd>`), path);
    assert.ok(overview.includes(purpose.replaceAll("'", "&#39;")), path);
    if (path !== "/me/profile") {
      assert.match(
        await get(path),
        /<h1>[^<]*<\/h1><p class="lede">/,
        `${path} says what it is for`,
      );
    }
  }
  assert.match(overview, /member: you can keep a profile, a journal, files/);
  assert.match(await get("/me/standing"), /<summary>What the standings are<\/summary>/);
  const services = await get("/me/services/new?kind=url");
  assert.match(services, /LAN and tailnet \(reached only inside your own network\)/);
  assert.match(
    services,
    /come in one follow-up alert\. A maintenance window can cover a whole group/,
  );
  assert.match(services, /cloudflared \(behind a Cloudflare tunnel\), oneshot \(a job that runs/);
  assert.match(services, /A maintenance window can cover a place/);
  assert.match(await get("/me/journal"), /the entry is public: anyone can read it on your profile/);
  const { seedModule } = await import("./_catalogue.ts");
  await seedModule(t, "pond-life", []);
  assert.match(await get("/modules/pond-life"), /A point is one signed-in person saying/);
});
