/**
 * The public pages in-process: home, catalogue (filters, sort), module pages at each module's
 * `url` (every field, contributors' profile links, points button, JSON-LD), public profiles,
 * search, the two forms and the status page, sitemap and robots. web_browser_test.ts drives
 * them in Chromium.
 */
import assert from "node:assert/strict";
import { seedModule } from "./_catalogue.ts";
import { testApp } from "./_helpers.ts";

const ORIGIN = "http://localhost";
const post = (fields: Record<string, string>, extra: Record<string, string> = {}) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...extra },
});

async function withCatalogue() {
  const t = await testApp();
  const ann = await t.account("ann@example.com", { name: "Ann Example" });
  await t.kv.set(["accounts", ann.account.id], { ...ann.account, slug: "ann-example" });
  await t.kv.set(["accounts_by_slug", "ann-example"], ann.account.id);
  await seedModule(t, "pond-life", [ann.account.id], {
    over: { facts: [["Duration", "4 sessions"]], gets: ["A species list"], note: "Bring boots" },
  });
  t.clock.advance(60_000);
  await seedModule(t, "bee-count", [ann.account.id], {
    over: { title: "Counting bees", area: "social", state: "finished", track: "" },
  });
  await seedModule(t, "hidden-one", [], { published: false, over: { title: "Not out yet" } });
  return { t, ann };
}

Deno.test("module page: at the module's url with every field, contributors and JSON-LD", async () => {
  const { t } = await withCatalogue();
  await using _ = t;
  const api = await t.req("GET", "/api/catalogue");
  const mod = api.body.modules.find((m: { slug: string }) => m.slug === "pond-life");
  const page = await t.req("GET", mod.url);
  assert.equal(page.status, 200);
  for (
    const text of [
      mod.title,
      mod.lede,
      mod.who,
      mod.area,
      mod.by,
      "4 sessions",
      "Duration",
      "A species list",
      "Bring boots",
      mod.updated,
      "development",
    ]
  ) {
    assert.ok(page.text.includes(text), text);
  }
  assert.match(page.text, /<a href="\/people\/ann-example"><bdi>Ann Example<\/bdi><\/a>/);
  assert.match(page.text, /Sign in to give a point/);
  const ld = page.text.match(/<script type="application\/ld\+json">([^<]*)<\/script>/)![1];
  const data = JSON.parse(ld);
  assert.deepEqual(data.type, ["LearningResource"]);
  assert.equal(data.name, mod.title);
  assert.equal(data.id, "http://test.local/modules/pond-life");
  assert.equal(data.creator[0].id, "http://test.local/people/ann-example");
  // The track is a keyword, never an educational level (which is a KIM concept or absent).
  assert.equal(data.educationalLevel, undefined);
  // No licence stated: the page says so, and the record claims none.
  assert.match(page.text, /Licence not stated/);
  assert.equal(data.license, undefined);
  // Unpublished or unknown: the HTML not-found page.
  assert.equal((await t.req("GET", "/modules/hidden-one")).status, 404);
  assert.equal((await t.req("GET", "/modules/nope")).status, 404);
});

Deno.test("module page: JSON-LD cannot end its element", async () => {
  const { t, ann } = await withCatalogue();
  await using _ = t;
  await seedModule(t, "tricky", [ann.account.id], {
    over: { title: "A </script><script>alert(1)</script> title" },
  });
  const page = await t.req("GET", "/modules/tricky");
  assert.equal(page.status, 200);
  assert.doesNotMatch(page.text, /<script>alert/);
  assert.match(page.text, /\\u003c\/script>/);
});

Deno.test("points: a signed-in browser gives and withdraws its point", async () => {
  const { t } = await withCatalogue();
  await using _ = t;
  const { token } = await t.account("reader@example.com", { name: "Reader" });
  const cookie = `session=${token}`;
  let page = await t.req("GET", "/modules/pond-life", { headers: { cookie } });
  assert.match(page.text, /<button type="submit" ?>Give a point<\/button>/);
  const give = await t.req("POST", "/modules/pond-life/point", post({}, { cookie }));
  assert.equal(give.status, 303);
  assert.equal(give.headers.get("location"), "/modules/pond-life#points");
  page = await t.req("GET", "/modules/pond-life", { headers: { cookie } });
  assert.match(page.text, /1 point, one of them yours/);
  assert.match(page.text, /Withdraw my point/);
  const points = await t.req("GET", "/api/points", { token });
  assert.equal(points.body.counts["pond-life"], 1);
  await t.req("POST", "/modules/pond-life/point", post({}, { cookie }));
  assert.equal((await t.req("GET", "/api/points")).body.counts["pond-life"], 0);
  // Signed out: sent to sign in; cross-site: refused.
  const anon = await t.req("POST", "/modules/pond-life/point", post({}));
  assert.equal(anon.status, 303);
  assert.match(anon.headers.get("location")!, /^\/sign-in\?next=/);
  const evil = await t.req(
    "POST",
    "/modules/pond-life/point",
    post({}, { cookie, origin: "https://evil.example" }),
  );
  assert.equal(evil.status, 403);
  assert.equal((await t.req("GET", "/api/points")).body.counts["pond-life"], 0);
});

Deno.test("catalogue: filters by state, area and track; sorts by points, updated, title", async () => {
  const { t } = await withCatalogue();
  await using _ = t;
  const titles = async (q: string) => {
    const page = await t.req("GET", `/catalogue${q}`);
    assert.equal(page.status, 200);
    return [...page.text.matchAll(/<h3><a href="\/modules\/([a-z-]+)"/g)].map((m) => m[1]);
  };
  assert.deepEqual((await titles("?sort=title")).sort(), ["bee-count", "pond-life"]);
  assert.deepEqual(await titles("?sort=title"), ["bee-count", "pond-life"]);
  assert.deepEqual(await titles("?sort=updated"), ["bee-count", "pond-life"]);
  assert.deepEqual(await titles("?state=finished"), ["bee-count"]);
  assert.deepEqual(await titles("?area=nature-based"), ["pond-life"]);
  assert.deepEqual(await titles("?track=outdoor"), ["pond-life"]);
  assert.deepEqual(await titles("?state=nonsense&sort=bogus"), await titles(""));
  const { token } = await t.account("p@example.com");
  await t.req("POST", "/api/modules/pond-life/point", { token });
  assert.deepEqual(await titles("?sort=points"), ["pond-life", "bee-count"]);
});

Deno.test("home: newest and most-pointed modules, search, forms, sign-in", async () => {
  const { t } = await withCatalogue();
  await using _ = t;
  const { token } = await t.account("p@example.com");
  await t.req("POST", "/api/modules/pond-life/point", { token });
  const home = await t.req("GET", "/");
  assert.match(
    home.text,
    /<h2>Newest modules<\/h2><ul class="cards"><li><h3><a href="\/modules\/bee-count"/,
  );
  assert.match(
    home.text,
    /<h2>Most pointed<\/h2><ul class="cards"><li><h3><a href="\/modules\/pond-life"/,
  );
  for (const href of ["/search", "/request", "/contribute", "/sign-in", "/catalogue"]) {
    assert.ok(home.text.includes(`"${href}"`), href);
  }
});

Deno.test("public profile at /people/<slug> and search results", async () => {
  const { t, ann } = await withCatalogue();
  await using _ = t;
  await t.req("PATCH", "/api/me", {
    token: ann.token,
    body: { org: "Pond School", about: "Teacher" },
  });
  await t.req("POST", "/api/me/journal", {
    token: ann.token,
    body: { text: "Dipping day went well", public: true },
  });
  const me = await t.req("GET", "/api/me", { token: ann.token });
  const profile = await t.req("GET", `/people/${me.body.slug ?? "ann-example"}`);
  assert.equal(profile.status, 200);
  assert.match(profile.text, /<h1><bdi>Ann Example<\/bdi><\/h1>/);
  assert.match(profile.text, /Pond School/);
  assert.match(profile.text, /href="\/modules\/pond-life"/);
  assert.match(profile.text, /Dipping day went well/);
  assert.equal((await t.req("GET", "/people/nobody-here")).status, 404);
  assert.equal((await t.req("GET", "/people/..%2f")).status, 404);

  const found = await t.req("GET", "/search?q=pond");
  assert.equal(found.status, 200);
  assert.match(found.text, /href="\/modules\/pond-life"/);
  const short = await t.req("GET", "/search?q=a");
  assert.match(short.text, /at least 2 characters/);
});

Deno.test("request form: kinds in words, a module chosen by its title from its page's link", async () => {
  const { t } = await withCatalogue();
  await using _ = t;
  const form = await t.req("GET", "/request");
  for (
    const words of ["Ask for a new module", "Report a problem with a module", "Something else"]
  ) {
    assert.match(form.text, new RegExp(`>${words}</option>`), words);
  }
  assert.doesNotMatch(form.text, />(tool|service|report|contribute)<\/option>/);
  assert.doesNotMatch(form.text, /slug/);
  // Published modules by title, sent as their slug; an unpublished one is not offered.
  assert.match(form.text, /<option value="bee-count" >Counting bees<\/option>/);
  assert.doesNotMatch(form.text, /hidden-one|Not out yet/);
  // The module page's link chooses the kind and the module.
  const page = await t.req("GET", "/modules/bee-count");
  assert.match(page.text, /href="\/request\?kind=report&amp;module=bee-count"/);
  const opened = await t.req("GET", "/request?kind=report&module=bee-count");
  assert.match(opened.text, /<option value="report" selected>Report a problem/);
  assert.match(opened.text, /<option value="bee-count" selected>Counting bees/);
  const sent = await t.req(
    "POST",
    "/request",
    post({
      name: "Ann Example",
      email: "ann@example.com",
      kind: "report",
      module: "bee-count",
      text: "The worksheet link of this module is broken.",
    }),
  );
  assert.equal(sent.status, 303, sent.text);
  const list = await t.req("GET", "/api/requests", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(list.body.items[0].module, "bee-count");
  assert.equal(list.body.items[0].kind, "report");
});

Deno.test("request form: errors beside fields, 303 and the team's mail", async () => {
  await using t = await testApp({ config: { teamInbox: "team@example.com" } });
  const form = await t.req("GET", "/request");
  assert.equal(form.status, 200);
  assert.match(form.text, /<label for="f-text">Your message<\/label>/);
  const bad = await t.req("POST", "/request", post({ name: "A", email: "x", text: "short" }));
  assert.equal(bad.status, 400);
  for (const f of ["name", "email", "text"]) {
    assert.match(bad.text, new RegExp(`id="f-${f}-error"`), f);
  }
  const ok = await t.req(
    "POST",
    "/request",
    post({
      name: "Ann Example",
      email: "ann@example.com",
      kind: "module",
      text: "Please make a module about bees and flowers.",
    }),
  );
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.get("location"), "/request/sent");
  const list = await t.req("GET", "/api/requests", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(list.body.items.length, 1);
  assert.equal(list.body.items[0].text, "Please make a module about bees and flowers.");
  // The honeypot: the same answer, nothing stored.
  const bot = await t.req(
    "POST",
    "/request",
    post({
      name: "Bot Person",
      email: "bot@example.com",
      text: "Buy things now please buy",
      website: "http://spam.example",
    }),
  );
  assert.equal(bot.status, 303);
  const after = await t.req("GET", "/api/requests", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(after.body.items.length, 1);
});

Deno.test("proposal form: files and record trail fields, errors, 303 and the status page", async () => {
  await using t = await testApp();
  const form = await t.req("GET", "/contribute");
  assert.match(form.text, /File 1: link/);
  // The records are an optional file, explained in a sentence; the chain hash in words.
  assert.match(form.text, /<label for="f-records">Records file \(optional\)<\/label>/);
  assert.match(form.text, /type="file"[^>]*accept="\.json,application\/json"/);
  assert.match(form.text, /enctype="multipart\/form-data"/);
  assert.match(form.text, /Check code of the last record \(optional\)/);
  assert.doesNotMatch(form.text, /Records as JSON|\{seq, at, actor|hex characters/);
  const multipart = (fields: Record<string, string>, records?: string) => {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    if (records !== undefined) {
      fd.append("records", new File([records], "records.json", { type: "application/json" }));
    }
    return { raw: fd, headers: { origin: ORIGIN } };
  };
  const bad = await t.req(
    "POST",
    "/contribute",
    multipart({
      name: "Ann Example",
      email: "ann@example.com",
      title: "Bees",
      summary: "About bees.",
      file_url_0: "http://not-https.example/file",
    }, "{not json"),
  );
  assert.equal(bad.status, 400);
  assert.match(bad.text, /Must be an https:\/\/ link/);
  assert.match(
    bad.text,
    /id="f-records-error">The records file is not JSON; attach the file the log tool exported, unchanged\./,
  );
  assert.match(bad.text, /value="http:\/\/not-https\.example\/file"/);
  // The attached file is kept for the next send: a browser cannot refill a file field.
  assert.match(bad.text, /<input type="hidden" name="records_kept" value="\{not json"/);
  assert.match(bad.text, /The records file you attached is kept/);

  // A records file and its fingerprint reach the proposal as the API's records and chain.
  const record = { seq: 1, at: "2026-01-01T00:00:00.000Z", actor: "me", action: "start" };
  const withFile = await t.req(
    "POST",
    "/contribute",
    multipart({
      name: "Ann Example",
      email: "ann@example.com",
      title: "Bees with records",
      summary: "About bees, with their history.",
      licence: "CC-BY-4.0",
      chain: "0".repeat(64),
    }, JSON.stringify([record])),
  );
  assert.equal(withFile.status, 303, withFile.text);
  const filed = Number(withFile.headers.get("location")!.match(/id=(\d+)/)![1]);
  // The proposal keeps the verdict on its records (checked again at publication).
  const stored = (await t.kv.get<{ records: { sent: boolean; count: number } }>(
    ["proposals", filed],
  )).value!;
  assert.equal(stored.records.sent, true);
  assert.equal(stored.records.count, 1);

  const ok = await t.req(
    "POST",
    "/contribute",
    post({
      name: "Ann Example",
      email: "ann@example.com",
      title: "Bees in the school garden",
      area: "nature-based",
      summary: "Counting bees through a spring term.",
      licence: "CC-BY-4.0",
      file_label_0: "Worksheet",
      file_url_0: "https://files.example/worksheet.pdf",
      trail: "Drafted in March\nTried with two classes",
    }),
  );
  assert.equal(ok.status, 303);
  const loc = ok.headers.get("location")!;
  assert.match(loc, /^\/contribute\/sent\?id=\d+&status=received$/);
  const id = loc.match(/id=(\d+)/)![1];
  const sent = await t.req("GET", loc);
  assert.match(sent.text, new RegExp(`href="/contribute/status\\?id=${id}"`));
  const mail = t.mail.last("ann@example.com")!;
  assert.ok(mail, "a confirmation mail");
  const status = await t.req("GET", `/contribute/status?id=${id}`);
  assert.equal(status.status, 200);
  assert.match(status.text, new RegExp(`Proposal ${id}: received`));
  assert.doesNotMatch(status.text, /ann@example\.com|Ann Example|Bees in the school/);
  assert.equal((await t.req("GET", "/contribute/status?id=999")).status, 404);
});

Deno.test("sitemap.xml lists public pages; robots.txt points to it", async () => {
  const { t } = await withCatalogue();
  await using _ = t;
  const map = await t.req("GET", "/sitemap.xml");
  assert.equal(map.status, 200);
  assert.match(map.headers.get("content-type")!, /xml/);
  assert.match(map.text, /<loc>http:\/\/test\.local\/modules\/pond-life<\/loc>/);
  assert.match(map.text, /<loc>http:\/\/test\.local\/people\/ann-example<\/loc>/);
  assert.doesNotMatch(map.text, /hidden-one/);
  const robots = await t.req("GET", "/robots.txt");
  assert.match(robots.text, /Sitemap: http:\/\/test\.local\/sitemap\.xml/);
  assert.match(robots.text, /Disallow: \/me/);
});
