import assert from "node:assert/strict";
import { HOUR } from "../lib/clock.ts";
import { systemConnector } from "../lib/net.ts";
import { testApp } from "./_helpers.ts";
import { localHttp } from "./_servers.ts";

/** The public status page and badges show only what the owner chose: never a target or key. */

Deno.test("status page: chosen services with state, 90 days, uptime and note; nothing else", async () => {
  let failing = false;
  const srv = localHttp(() => failing ? new Response("no", { status: 503 }) : new Response("fine"));
  try {
    await using t = await testApp({ connector: systemConnector });
    const { account, token } = await t.account("ops@example.org", {
      name: "Ada Ops",
      roles: ["owner"],
    });
    const site = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Public site", check: `url:http://127.0.0.1:${srv.port}/health` },
    });
    const hb = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Secret backup job", check: "webhook:" },
    });
    const key = new URL(hb.body.hook_url).pathname.split("/").pop()!;
    // A day with 6 hours off.
    t.clock.advance(HOUR);
    failing = true;
    await t.req("POST", `/api/me/services/${site.body.item.id}/check`, { token });
    t.clock.advance(6 * HOUR);
    failing = false;
    await t.req("POST", `/api/me/services/${site.body.item.id}/check`, { token });

    assert.equal((await t.req("GET", `/api/status/${account.slug}`)).status, 404, "unpublished");
    const other = await t.account("x@example.org", { name: "Xavier" });
    const foreign = await t.req("POST", "/api/me/services", {
      token: other.token,
      body: { name: "Not yours", check: "webhook:" },
    });
    const bad = await t.req("PUT", "/api/me/status-page", {
      token,
      body: { enabled: true, services: [{ id: foreign.body.item.id }] },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.field, "services");
    const put = await t.req("PUT", "/api/me/status-page", {
      token,
      body: {
        enabled: true,
        title: "Ada's services",
        services: [{ id: site.body.item.id, note: "Maintenance on Sunday 10:00" }],
      },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.path, `/status/${account.slug}`);

    const page = await t.req("GET", `/api/status/${account.slug}`);
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.title, "Ada's services");
    assert.equal(page.body.services.length, 1);
    const s = page.body.services[0];
    assert.deepEqual(Object.keys(s).sort(), [
      "days",
      "group",
      "maintenance",
      "name",
      "note",
      "paused",
      "state",
      "unreachable_via",
      "uptime",
    ]);
    assert.deepEqual(s.unreachable_via, []);
    assert.deepEqual(page.body.incidents, []);
    assert.equal(s.name, "Public site");
    assert.equal(s.state, "ok");
    assert.equal(s.note, "Maintenance on Sunday 10:00");
    assert.equal(s.days.length, 90);
    const today = s.days[89];
    assert.equal(today.uptime, 1 / 7, "6 of the 7 known hours off");
    for (const hidden of [String(srv.port), "127.0.0.1", "HTTP", key, "Secret backup"]) {
      assert.ok(!page.text.includes(hidden), `the page does not show ${hidden}`);
    }

    // A badge at an unguessable address; a new one replaces it.
    const b1 = await t.req("POST", `/api/me/services/${site.body.item.id}/badge`, { token });
    assert.equal(b1.status, 200);
    const path1 = new URL(b1.body.badge_url).pathname;
    assert.match(path1, /^\/api\/badges\/[A-Za-z0-9_-]{22}\.svg$/);
    const svg = await t.req("GET", path1);
    assert.equal(svg.status, 200);
    assert.match(svg.headers.get("content-type")!, /^image\/svg\+xml/);
    assert.match(svg.text, /<svg[^>]*>.*Public site: up/);
    assert.ok(!svg.text.includes("127.0.0.1") && !svg.text.includes("HTTP"));
    const listed = await t.req("GET", "/api/me/services", { token });
    assert.equal(listed.body.items[0].badge_path, path1);
    const b2 = await t.req("POST", `/api/me/services/${site.body.item.id}/badge`, { token });
    assert.equal((await t.req("GET", path1)).status, 404, "the old badge stops");
    assert.equal((await t.req("GET", new URL(b2.body.badge_url).pathname)).status, 200);
    assert.equal((await t.req("GET", "/api/badges/nothing.svg")).status, 404);
    const hbBadge = await t.req("POST", `/api/me/services/${hb.body.item.id}/badge`, { token });
    const hbSvg = await t.req("GET", new URL(hbBadge.body.badge_url).pathname);
    assert.match(hbSvg.text, /Secret backup job: new/);

    // Withdrawn: gone again.
    await t.req("PUT", "/api/me/status-page", { token, body: { enabled: false } });
    assert.equal((await t.req("GET", `/api/status/${account.slug}`)).status, 404);
  } finally {
    await srv.close();
  }
});
