import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { MINUTE } from "../lib/clock.ts";
import { systemConnector } from "../lib/net.ts";
import { testApp } from "./_helpers.ts";
import { flakyTarget } from "./_servers.ts";

/**
 * Every off alerts (issue 44 part 2): what an import brings that is failing alerts after it
 * like any other service, whatever state it was in before (a url check never checked here, a
 * heartbeat whose first signal is a failure); only alerts turned off keep it quiet.
 */

const OPS = "ops@example.org";

Deno.test("every off: checks imported failing alert at their first look; a heartbeat at its first failure", async () => {
  await using target = flakyTarget();
  target.failing = true;
  await using t = await testApp({ connector: systemConnector });
  // The owner may watch 127.0.0.1.
  const { token } = await t.account(OPS, { name: "Ops", roles: ["owner"] });
  const url = target.check.slice("url:".length);
  const kuma = {
    version: "1.23.0",
    notificationList: [],
    monitorList: [
      { id: 1, name: "Local API", type: "http", url, interval: 60, maxretries: 0, active: true },
      { id: 2, name: "Quiet API", type: "http", url, interval: 60, maxretries: 0, active: true },
    ],
  };
  const r = await t.req("POST", "/api/me/import", { token, body: { data: kuma } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.created.length, 2);
  const quiet = r.body.created.find((s: { name: string }) => s.name === "Quiet API");
  const off = await t.req("PATCH", `/api/me/services/${quiet.id}`, {
    token,
    body: { alerts: false },
  });
  assert.equal(off.status, 200, off.text);
  const hc = {
    checks: [{ name: "Nightly backup", slug: "nightly-backup", timeout: 86400, grace: 3600 }],
  };
  const h = await t.req("POST", "/api/me/import", { token, body: { data: hc } });
  assert.equal(h.status, 200, h.text);
  assert.equal(t.mail.sent.filter((m) => m.to === OPS).length, 0, "nothing alerts at the import");

  // The runner's first look at the imported checks: off, and the one with alerts on alerts.
  t.clock.advance(MINUTE);
  await runDueChecks(t.deps);
  const subjects = () => t.mail.sent.filter((m) => m.to === OPS).map((m) => m.subject);
  assert.deepEqual(subjects(), ['Watched service "Local API" is off']);
  const listed = (await t.req("GET", "/api/me/services", { token })).body.items;
  const stateOf = (name: string) => listed.find((s: { name: string }) => s.name === name).state;
  assert.equal(stateOf("Local API"), "off");
  assert.equal(stateOf("Quiet API"), "off", "off without an alert: its alerts are off");
  // Not again at the next look.
  t.clock.advance(MINUTE);
  await runDueChecks(t.deps);
  assert.equal(subjects().length, 1);

  // The imported heartbeat's first signal here is a failure: it alerts.
  const uuid = listed.find((s: { name: string }) => s.name === "Nightly backup").uuid;
  assert.equal((await t.req("GET", `/ping/${uuid}/fail`)).status, 200);
  await runDueChecks(t.deps); // the look the failure asked for (the KV queue's, in the server)
  assert.deepEqual(subjects(), [
    'Watched service "Local API" is off',
    'Watched service "Nightly backup" is off',
  ]);
});
