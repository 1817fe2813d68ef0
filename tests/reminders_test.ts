import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { HOUR, MINUTE } from "../lib/clock.ts";
import { systemTls } from "../lib/net.ts";
import { fakeResolver, testApp } from "./_helpers.ts";
import { localHttp, loopbackConnector, makeCerts } from "./_servers.ts";

/**
 * Reminders while a service stays off (issue 24, part 5), with the fake clock: every N hours
 * after the off alert, to mail and to every channel of the service; none to followers; they
 * stop when it is back (one recovery), and none come without `remind`.
 */

const OPS = "ops@example.org";

Deno.test("reminders: repeat every N hours to mail and channels while off, and stop when back", async () => {
  const certs = await makeCerts(["hooks.test"], 30);
  const posts: { event: string; title: string }[] = [];
  const srv = localHttp(async (req) => {
    posts.push(JSON.parse(await req.text()));
    return new Response("ok");
  }, certs);
  try {
    await using t = await testApp({
      connector: loopbackConnector(srv.port),
      resolver: fakeResolver({ "hooks.test": ["93.184.216.34"] }),
      tls: systemTls([certs.ca]),
    });
    t.clock.set(Date.now()); // the receiver's certificate is judged by the service's clock
    const { token } = await t.account(OPS, { name: "Ops" });
    const ch = await t.req("POST", "/api/me/channels", {
      token,
      body: { name: "Pager", url: "https://hooks.test/in" },
    });
    const bad = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Backup", check: "webhook:", remind: 25 },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.field, "remind");
    const made = await t.req("POST", "/api/me/services", {
      token,
      body: {
        name: "Backup",
        check: "webhook:",
        interval: 5,
        remind: 2,
        channels: [ch.body.item.id],
      },
    });
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.item.remind, 2);
    const hook = new URL(made.body.hook_url).pathname;
    const id = made.body.item.id;

    await t.req("GET", `${hook}/fail`);
    await runDueChecks(t.deps);
    const offAt = t.clock.now();
    const mails = () => t.mail.sent.filter((m) => m.to === OPS).map((m) => m.subject);
    assert.deepEqual(mails(), ['Watched service "Backup" is off']);
    assert.deepEqual(posts.map((p) => p.event), ["off"]);

    // Looks every minute while off: nothing before two hours, a reminder at two, another at four.
    const steps = [
      [HOUR, 1],
      [2 * HOUR - MINUTE, 1],
      [2 * HOUR + MINUTE, 2],
      [2 * HOUR + 2 * MINUTE, 2],
      [4 * HOUR + 2 * MINUTE, 3],
    ];
    for (const [at, n] of steps) {
      t.clock.set(offAt + at);
      await runDueChecks(t.deps);
      assert.equal(mails().length, n, `after ${at / MINUTE} minutes`);
    }
    assert.equal(mails()[1], 'Watched service "Backup" is still off');
    assert.match(t.mail.last(OPS)!.text, /repeats every 2 hours while it stays off/);
    assert.deepEqual(posts.map((p) => p.event), ["off", "reminder", "reminder"]);
    assert.equal(posts[1].title, 'Watched service "Backup" is still off');

    // Back: one recovery, then no reminder any more.
    await t.req("GET", `${hook}/0`);
    t.clock.advance(MINUTE); // the runner looks every minute while off
    await runDueChecks(t.deps);
    assert.equal(mails().at(-1), 'Watched service "Backup" is back');
    t.clock.advance(3 * MINUTE);
    await t.req("GET", `${hook}/0`);
    await runDueChecks(t.deps);
    assert.equal(mails().length, 4);
    assert.deepEqual(posts.map((p) => p.event), ["off", "reminder", "reminder", "back"]);

    // Turned off with PATCH: the next outage alerts once and does not repeat.
    const patched = await t.req("PATCH", `/api/me/services/${id}`, {
      token,
      body: { remind: null },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.item.remind, null);
    await t.req("GET", `${hook}/fail`);
    await runDueChecks(t.deps);
    t.clock.advance(25 * HOUR);
    await runDueChecks(t.deps);
    assert.deepEqual(mails().slice(4), ['Watched service "Backup" is off']);
    // Its post is on its way to the channel: the receiver takes it before it closes (else the
    // send would fail on a closed port, and log so after the test).
    const deadline = Date.now() + 10_000;
    while (posts.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(posts.map((p) => p.event), ["off", "reminder", "reminder", "back", "off"]);
  } finally {
    await srv.close();
  }
});
