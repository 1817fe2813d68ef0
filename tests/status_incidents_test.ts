/**
 * The public status page as visitors read it (issues 46 and 47): a service's state in words for
 * them (Operational, Down, Under maintenance, No data yet, Unreachable (<parent> down)), never
 * the owner's hints; the page's incidents, open ones at the top and the rest by month, with what
 * explains an outage; the same in the page's JSON; the Atom feed of its incidents, linked from
 * the page's head and read by a real XML parser.
 */
import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { MINUTE } from "../lib/clock.ts";
import { DOMParser } from "./_dev_deps.ts";
import { type TestApp, testApp } from "./_helpers.ts";

const ATOM = "http://www.w3.org/2005/Atom";

async function lan(t: TestApp) {
  const { account, token } = await t.account("ops@status-words.test", { name: "Riverside IT" });
  const add = async (name: string, depends_on: number[] = []) => {
    const r = await t.req("POST", "/api/me/services", {
      token,
      body: { name, check: "webhook:", interval: 60, depends_on },
    });
    assert.equal(r.status, 200, r.text);
    return r.body as { item: { id: number }; hook_url: string };
  };
  const router = await add("LAN router");
  const nas = await add("NAS", [router.item.id]);
  const printer = await add("Printer");
  const fresh = await add("Camera");
  // The router is not on the page: the NAS behind it still reads unreachable.
  const put = await t.req("PUT", "/api/me/status-page", {
    token,
    body: {
      enabled: true,
      title: "Riverside school",
      services: [{ id: nas.item.id }, { id: printer.item.id }, { id: fresh.item.id }],
    },
  });
  assert.equal(put.status, 200, put.text);
  return { account, token, router, nas, printer, fresh, slug: account.slug };
}

const ping = (t: TestApp, s: { hook_url: string }, tail = "") =>
  t.req("POST", `${new URL(s.hook_url).pathname}${tail}`);

/** The `<li>` of a listed service, by its name. */
const rowOf = (html: string, name: string) => {
  const m = html.match(
    new RegExp(`<li class="svc[^"]*status-svc">\\s*<h3><bdi>${name}</bdi></h3>.*?</li>`, "s"),
  );
  assert.ok(m, `a row for ${name}`);
  return m[0];
};

Deno.test("status page: visitors' words, unreachable behind a parent, no owner's hints", async () => {
  await using t = await testApp();
  const { router, nas, printer, slug } = await lan(t);
  await ping(t, printer);
  await ping(t, nas);
  let html = (await t.req("GET", `/status/${slug}`)).text;
  assert.match(rowOf(html, "Printer"), /Operational/);
  assert.match(rowOf(html, "NAS"), /Operational/);
  assert.match(rowOf(html, "Camera"), /No data yet/);
  for (const owner of ["alert nobody", "not measured yet", "first check", "Up up", "Down down"]) {
    assert.ok(!html.includes(owner), `no owner's words: ${owner}`);
  }

  // The router and the NAS fail: the NAS is unreachable, not down; the printer is down alone.
  for (const s of [router, nas, printer]) assert.equal((await ping(t, s, "/fail")).status, 200);
  await runDueChecks(t.deps);
  html = (await t.req("GET", `/status/${slug}`)).text;
  assert.match(rowOf(html, "NAS"), /state-unreachable/);
  assert.match(rowOf(html, "NAS"), /Unreachable \(LAN router down\)/);
  assert.match(rowOf(html, "Printer"), /state-off[^]*Down/);
  assert.match(html, /1 of 3 services is down/);
  const json = (await t.req("GET", `/api/status/${slug}`)).body;
  const nasJson = json.services.find((s: { name: string }) => s.name === "NAS");
  assert.equal(nasJson.state, "off");
  assert.deepEqual(nasJson.unreachable_via, ["LAN router"]);
  assert.deepEqual(
    json.services.find((s: { name: string }) => s.name === "Printer").unreachable_via,
    [],
  );

  // The router back: the NAS reads down on its own.
  t.clock.advance(1_000);
  await ping(t, router);
  html = (await t.req("GET", `/status/${slug}`)).text;
  assert.doesNotMatch(rowOf(html, "NAS"), /Unreachable/);
  assert.match(rowOf(html, "NAS"), /Down/);
});

Deno.test("status page: incidents open at the top, history by month, explained, JSON and Atom", async () => {
  await using t = await testApp();
  const { token, router, nas, printer, slug } = await lan(t);
  await ping(t, router);
  await ping(t, nas);
  const open = async (title: string, services: number[]) => {
    const r = await t.req("POST", "/api/me/incidents", {
      token,
      body: { title, services, impact: "major", text: `${title}: we are looking.` },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.item.id as number;
  };
  // An outage the router explains: the NAS unreachable behind it for the incident's span.
  const nasDown = await open("NAS cannot be reached", [nas.item.id]);
  for (const s of [router, nas]) await ping(t, s, "/fail");
  await runDueChecks(t.deps);
  t.clock.advance(20 * MINUTE);
  await ping(t, router);
  await ping(t, nas);
  const update = (id: number, state: string, text: string) =>
    t.req("POST", `/api/me/incidents/${id}/updates`, { token, body: { state, text } });
  assert.equal((await update(nasDown, "identified", "The router restarted.")).status, 201);
  t.clock.advance(5 * MINUTE);
  assert.equal((await update(nasDown, "resolved", "All reachable again.")).status, 201);
  // One still open; one about a service the page does not list (not shown); one about nothing
  // in particular (shown on every page).
  t.clock.advance(MINUTE);
  const printing = await open("Printing is slow", [printer.item.id]);
  const hidden = await open("Router firmware", [router.item.id]);
  const everyone = await open("Planned move <to the new building>", []);

  const res = await t.req("GET", `/status/${slug}`);
  assert.equal(res.status, 200);
  const html = res.text;
  const openAt = html.indexOf('id="open-incidents"');
  const servicesAt = html.indexOf("<h3><bdi>NAS</bdi></h3>");
  const historyAt = html.indexOf('id="incident-history"');
  assert.ok(openAt > 0 && openAt < servicesAt && servicesAt < historyAt, "open, services, past");
  const openPart = html.slice(openAt, servicesAt);
  assert.match(openPart, /Printing is slow/);
  assert.match(openPart, /Planned move &lt;to the new building&gt;/);
  assert.doesNotMatch(openPart, /NAS cannot be reached/);
  assert.ok(!html.includes("Router firmware"), "an incident of services the page lists not");
  const past = html.slice(historyAt);
  assert.match(past, /<h3 id="month-2026-03">March 2026<\/h3>/);
  assert.match(past, /NAS cannot be reached/);
  assert.match(past, /lasted 25 min/);
  assert.match(past, /All reachable again\.[^]*The router restarted\.[^]*we are looking\./);
  assert.match(past, /NAS was unreachable because LAN router, which it depends on, was down/);
  assert.match(
    html,
    new RegExp(
      `<link rel="alternate" type="application/atom\\+xml" title="Incidents" href="http://test\\.local/status/${slug}/incidents\\.atom"`,
    ),
  );

  const json = (await t.req("GET", `/api/status/${slug}`)).body;
  assert.deepEqual(
    json.incidents.map((i: { title: string }) => i.title),
    ["Planned move <to the new building>", "Printing is slow", "NAS cannot be reached"],
  );
  const done = json.incidents[2];
  assert.equal(done.id, nasDown);
  assert.deepEqual(done.affected, ["NAS"]);
  assert.equal("services" in done, false, "no ids of services");
  assert.equal(done.state, "resolved");
  assert.equal(done.duration_s, 25 * 60);
  assert.deepEqual(done.updates.map((u: { state: string }) => u.state), [
    "investigating",
    "identified",
    "resolved",
  ]);
  assert.match(done.explained, /LAN router, which it depends on, was down/);
  assert.equal(json.incidents[1].explained, null);
  assert.equal(json.incidents[1].resolved, null);
  assert.ok(!JSON.stringify(json).includes("Router firmware"));
  assert.ok(printing && hidden && everyone);

  // The feed: valid Atom, an entry per incident shown, newest first, linking to its card.
  const feed = await t.req("GET", `/status/${slug}/incidents.atom`);
  assert.equal(feed.status, 200);
  assert.match(feed.headers.get("content-type")!, /^application\/atom\+xml/);
  const faults: string[] = [];
  const doc = new DOMParser({
    onError: (level: string, msg: string) => level !== "warning" && faults.push(msg),
  }).parseFromString(feed.text, "application/xml");
  assert.deepEqual(faults, []);
  const root = doc.documentElement!;
  assert.equal(root.namespaceURI, ATOM);
  assert.equal(root.localName, "feed");
  const entries = Array.from(root.getElementsByTagNameNS(ATOM, "entry"));
  const titles = entries.map((e) => e.getElementsByTagNameNS(ATOM, "title")[0].textContent);
  assert.deepEqual(titles, [
    "Planned move <to the new building> (Investigating)",
    "Printing is slow (Investigating)",
    "NAS cannot be reached (Resolved)",
  ]);
  const link = entries[2].getElementsByTagNameNS(ATOM, "link")[0].getAttribute("href");
  assert.equal(link, `http://test.local/status/${slug}#incident-${nasDown}`);
  assert.match(html, new RegExp(`id="incident-${nasDown}"`));
  const self = Array.from(root.getElementsByTagNameNS(ATOM, "link"))
    .find((l) => l.getAttribute("rel") === "self")!.getAttribute("href");
  assert.equal(self, `http://test.local/status/${slug}/incidents.atom`);
  assert.equal((await t.req("GET", "/status/nobody-here/incidents.atom")).status, 404);
});
