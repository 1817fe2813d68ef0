import assert from "node:assert/strict";
import { DAY, HOUR } from "../lib/clock.ts";
import { systemConnector, systemTls } from "../lib/net.ts";
import { fakeResolver, testApp } from "./_helpers.ts";
import { flakyTarget, localTls, makeCerts } from "./_servers.ts";

/** Flap threshold and certificate expiry alerts, against real local targets. */

Deno.test("threshold: 3 failed checks in a row before off; page and mail say how many", async () => {
  await using target = flakyTarget();
  await using t = await testApp({ connector: systemConnector });
  const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
  const bad = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Flappy", check: target.check, threshold: 6 },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "threshold");
  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Flappy", check: target.check, threshold: 3 },
  });
  assert.equal(made.status, 200, made.text);
  const id = made.body.item.id;
  assert.equal(made.body.item.state, "ok");
  assert.equal(made.body.item.threshold, 3);
  assert.equal(made.body.item.failed_checks, 0);

  target.failing = true;
  const check = () => t.req("POST", `/api/me/services/${id}/check`, { token });
  for (const n of [1, 2]) {
    const r = await check();
    assert.equal(r.body.item.state, "ok", `after ${n} failed`);
    assert.equal(r.body.item.failed_checks, n);
    assert.match(r.body.item.status, new RegExp(`failed check ${n} of 3 before an alert`));
  }
  assert.equal(t.mail.sent.length, 0, "no alert below the threshold");
  const third = await check();
  assert.equal(third.body.item.state, "off");
  assert.equal(third.body.item.failed_checks, 3);
  assert.match(third.body.item.status, /HTTP 503 .*\(3 failed checks in a row\)/);
  const mail = t.mail.last("owner@example.org")!;
  assert.match(mail.subject, /"Flappy" is off/);
  assert.match(mail.text, /Failed checks in a row: 3 \(alerting after 3\)/);

  // One good check ends the streak and brings it back.
  target.failing = false;
  const back = await check();
  assert.equal(back.body.item.state, "ok");
  assert.equal(back.body.item.failed_checks, 0);
  assert.match(t.mail.last("owner@example.org")!.subject, /is back/);

  // Threshold 1 (the default, by PATCH): the first failure counts at once.
  const p = await t.req("PATCH", `/api/me/services/${id}`, { token, body: { threshold: 1 } });
  assert.equal(p.body.item.threshold, 1);
  target.failing = true;
  const once = await check();
  assert.equal(once.body.item.state, "off");
  assert.equal(t.mail.sent.filter((m) => /is off/.test(m.subject)).length, 2);
});

Deno.test("threshold: a first check that fails below the threshold leaves the service waiting", async () => {
  await using t = await testApp({ connector: systemConnector });
  const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Closed", check: `tcp:127.0.0.1:${port}`, threshold: 2 },
  });
  assert.equal(r.body.item.state, "wait");
  assert.equal(r.body.item.failed_checks, 1);
  assert.match(r.body.item.status, /connection refused \(failed check 1 of 2/);
});

Deno.test("certificate expiry: one alert each at 14, 7 and 1 days left; none at creation", async () => {
  const certs = await makeCerts(["svc.test"], 20);
  const srv = localTls(certs);
  try {
    await using t = await testApp({
      connector: systemConnector,
      resolver: fakeResolver({ "svc.test": ["127.0.0.1"] }),
      tls: systemTls([certs.ca]),
    });
    t.clock.set(Date.now());
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const made = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Cert", check: `tls:svc.test:${srv.port}` },
    });
    assert.equal(made.body.item.state, "ok", made.text);
    const expires = Date.parse(made.body.item.cert_expires);
    assert.ok(expires > t.clock.now() + 19 * DAY);
    const id = made.body.item.id;
    const expiryMails = () => t.mail.sent.filter((m) => /^Certificate of/.test(m.subject));
    const checkAt = async (daysLeft: number) => {
      t.clock.set(expires - daysLeft * DAY);
      const r = await t.req("POST", `/api/me/services/${id}/check`, { token });
      assert.equal(r.status, 200, r.text);
      return r.body.item;
    };
    assert.equal((await checkAt(15)).state, "ok");
    assert.equal(expiryMails().length, 0);
    assert.equal((await checkAt(13.9)).state, "warn");
    assert.equal(expiryMails().length, 1);
    assert.match(expiryMails()[0].subject, /"Cert" expires within 14 days/);
    await checkAt(13);
    await checkAt(8);
    assert.equal(expiryMails().length, 1, "once per mark");
    await checkAt(6.5);
    assert.equal(expiryMails().length, 2);
    assert.match(expiryMails()[1].subject, /within 7 days/);
    await checkAt(0.5);
    await checkAt(0.2);
    assert.equal(expiryMails().length, 3);
    assert.match(expiryMails()[2].subject, /within 1 day$/);
    // No warn/off mail for a warn; the expiry alerts are the only ones.
    assert.equal(t.mail.sent.length, 3);

    // A renewed certificate (another expiry date) starts over.
    const renewed = await makeCerts(["svc.test"], 10);
    const srv2 = localTls(renewed);
    try {
      await using u = await testApp({
        connector: systemConnector,
        resolver: fakeResolver({ "svc.test": ["127.0.0.1"] }),
        tls: systemTls([renewed.ca]),
      });
      u.clock.set(Date.now() + HOUR);
      const o = await u.account("owner@example.org", { name: "Owner", roles: ["owner"] });
      const r = await u.req("POST", "/api/me/services", {
        token: o.token,
        body: { name: "Soon", check: `tls:svc.test:${srv2.port}` },
      });
      assert.equal(r.body.item.state, "warn");
      // The first result of a new service mails nothing and counts the marks already passed.
      assert.equal(u.mail.sent.length, 0);
      const check = () => u.req("POST", `/api/me/services/${r.body.item.id}/check`, o);
      await check();
      assert.equal(u.mail.sent.length, 0);
      u.clock.advance(4 * DAY);
      await check();
      assert.equal(u.mail.sent.length, 1);
      assert.match(u.mail.sent[0].subject, /"Soon" expires within 7 days/);
    } finally {
      await srv2.close();
    }
  } finally {
    await srv.close();
  }
});
