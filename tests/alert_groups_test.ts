import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { openKv } from "../kv/_atomic.ts";
import { GROUP_WAIT, keptAlerts } from "../kv/alerts/alert_groups.ts";
import { sendDueGroups } from "../kv/alerts/grouped_alerts.ts";
import { MINUTE, readable } from "../lib/clock.ts";
import { systemConnector, systemTls } from "../lib/net.ts";
import { dumpKv, type TestApp, testApp } from "./_helpers.ts";
import { makeCerts, webhookReceiver } from "./_servers.ts";

/**
 * One outage, few alerts (issue 24 part 1, issue 30 part 1), with the fake clock: the first
 * off alert of services sharing a place goes out at once, the offs that follow within 30
 * seconds as one follow-up mail and post per channel, and the backs as one summary; a lone
 * failure alerts at once wherever it is; the default group never groups; the switch off gives
 * one alert per service; the followers of a status page get one grouped mail; two runners
 * send a group once.
 */

const OPS = "ops@example.org";
/** Between two looks: three of them fit in a group's window (GROUP_WAIT). */
const STEP = GROUP_WAIT / 3;
const FAN = "fan@example.net";

interface Post {
  event: string;
  title: string;
  service: unknown;
  services?: { name: string; state: string }[];
  group?: { name: string; total: number };
}

/** An app whose channel posts land in a receiver on 127.0.0.1 (`posts()`: their bodies). */
async function withReceiver(
  fn: (t: TestApp, posts: () => Post[], url: string) => Promise<void>,
) {
  const certs = await makeCerts(["127.0.0.1"], 30);
  await using receiver = webhookReceiver(certs);
  await using t = await testApp({ connector: systemConnector, tls: systemTls([certs.ca]) });
  t.clock.set(Date.now()); // the receiver's certificate is judged by the service's clock
  await fn(t, () => receiver.posts.map((p) => p.body as unknown as Post), receiver.url);
}

/**
 * An account with four hourly heartbeats at the place "LAN" and one in the cloud (each beat
 * once), all alerting to the channel at `channel` when there is one.
 */
async function riverside(t: TestApp, channel: string | null) {
  // The owner may post to a channel on 127.0.0.1.
  const { account, token } = await t.account(OPS, { name: "Riverside", roles: ["owner"] });
  const ch = channel
    ? await t.req("POST", "/api/me/channels", {
      token,
      body: { name: "Pager", url: channel },
    })
    : null;
  if (ch) assert.equal(ch.status, 200, ch.text);
  const hooks: Record<string, { id: number; path: string }> = {};
  const names = ["Router", "Printer", "NAS", "Camera", "Website"];
  for (const name of names) {
    const r = await t.req("POST", "/api/me/services", {
      token,
      body: {
        name,
        check: "webhook:",
        interval: 60,
        place: name === "Website" ? "cloud" : "LAN",
        channels: ch ? [ch.body.item.id] : [],
      },
    });
    assert.equal(r.status, 200, r.text);
    hooks[name] = { id: r.body.item.id, path: new URL(r.body.hook_url).pathname };
    assert.equal((await t.req("GET", hooks[name].path)).status, 200);
  }
  return { account, token, hooks };
}

const mailsTo = (t: TestApp, to: string) => t.mail.sent.filter((m) => m.to === to);

Deno.test("alert groups: the first off goes at once, the two after it as one follow-up, and one summary when back", async () => {
  await withReceiver(async (t, posts, url) => {
    const { hooks } = await riverside(t, url);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    // Router fails: its own alert at once, as without grouping.
    await t.req("GET", `${hooks.Router.path}/fail`);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    assert.deepEqual(mailsTo(t, OPS).map((m) => m.subject), ['Watched service "Router" is off']);
    assert.deepEqual(posts().map((p) => p.title), ['Watched service "Router" is off']);
    // Two more within the 30 seconds: they wait for one follow-up.
    await t.req("GET", `${hooks.Printer.path}/fail`);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    await t.req("GET", `${hooks.NAS.path}/fail`);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    assert.equal(mailsTo(t, OPS).length, 1, "the follow-ups wait");
    t.clock.advance(GROUP_WAIT / 2);
    await runDueChecks(t.deps);
    const off = mailsTo(t, OPS);
    assert.equal(off.length, 2, off.map((m) => m.subject).join(" | "));
    assert.equal(off[1].subject, "LAN: 2 more services off");
    assert.match(off[1].text, /After "Router" \(alerted at once\), 2 more of your 4/);
    for (const name of ["Printer", "NAS"]) assert.match(off[1].text, new RegExp(`"${name}": off`));
    assert.doesNotMatch(off[1].text, /"Router":|Camera|Website/);
    assert.equal(posts().length, 2);
    const follow = posts()[1];
    assert.equal(follow.event, "off");
    assert.equal(follow.title, "LAN: 2 more services off");
    assert.equal(follow.service, null);
    assert.deepEqual(follow.group, { name: "LAN", total: 4 });
    assert.deepEqual(follow.services!.map((s) => [s.name, s.state]).sort(), [
      ["NAS", "off"],
      ["Printer", "off"],
    ]);
    // Nothing more while they stay off.
    for (let i = 0; i < 5; i++) {
      t.clock.advance(STEP);
      await runDueChecks(t.deps);
    }
    assert.equal(mailsTo(t, OPS).length, 2);

    // Back together: one summary mail and one post.
    for (const name of ["Router", "Printer", "NAS"]) await t.req("GET", hooks[name].path);
    for (let i = 0; i < 4; i++) {
      t.clock.advance(STEP);
      await runDueChecks(t.deps);
    }
    const all = mailsTo(t, OPS);
    assert.equal(all.length, 3, all.map((m) => m.subject).join(" | "));
    assert.equal(all[2].subject, "LAN: 3 of 4 services back");
    assert.deepEqual(posts().map((p) => [p.event, p.title]), [
      ["off", 'Watched service "Router" is off'],
      ["off", "LAN: 2 more services off"],
      ["back", "LAN: 3 of 4 services back"],
    ]);
    // Each service's state in the API's words (ok, warn, off, wait), as a lone back says it.
    assert.deepEqual(posts()[2].services!.map((s) => [s.name, s.state]).sort(), [
      ["NAS", "ok"],
      ["Printer", "ok"],
      ["Router", "ok"],
    ]);
    // Nothing is left pending.
    assert.doesNotMatch(await dumpKv(t.kv), /alert_group/);
  });
});

Deno.test("alert groups: a lone failure alerts at once, alone in its place or not", async () => {
  await withReceiver(async (t, posts, url) => {
    const { hooks } = await riverside(t, url);
    // Alone in its place: at once, as without grouping.
    await t.req("GET", `${hooks.Website.path}/fail`);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    assert.deepEqual(mailsTo(t, OPS).map((m) => m.subject), ['Watched service "Website" is off']);
    const alone = mailsTo(t, OPS)[0].text;

    // Alone failing at a shared place: the same mail, at once too.
    await t.req("GET", `${hooks.Camera.path}/fail`);
    t.clock.advance(STEP);
    const failedAt = t.clock.now();
    await runDueChecks(t.deps);
    const mails = mailsTo(t, OPS);
    assert.equal(mails.length, 2);
    assert.equal(mails[1].subject, 'Watched service "Camera" is off');
    // The text is the one of a service alone, with the time of the look that found it off.
    assert.equal(
      mails[1].text,
      alone.replaceAll("Website", "Camera")
        .replace(/\(\d{4}-[^)]*\)/, `(${readable(failedAt)})`)
        .replace(/failure signalled [^\n]*/, mails[1].text.match(/failure signalled [^\n]*/)![0])
        .replace(/\/me\/services\/\d+/, `/me/services/${hooks.Camera.id}`),
    );
    assert.deepEqual(posts().map((p) => [p.event, p.title]), [
      ["off", 'Watched service "Website" is off'],
      ["off", 'Watched service "Camera" is off'],
    ]);
    assert.deepEqual((posts()[1].service as { name: string }).name, "Camera");
    // No follow-up came: the window closes with nothing in it.
    for (let i = 0; i < 3; i++) {
      t.clock.advance(STEP);
      await runDueChecks(t.deps);
    }
    assert.equal(mailsTo(t, OPS).length, 2);
    assert.doesNotMatch(await dumpKv(t.kv), /alert_group/);
  });
});

Deno.test("alert groups: the default group is no shared cause: its services alert one by one, at once", async () => {
  await using t = await testApp();
  const { token } = await t.account(OPS, { name: "Riverside" });
  const paths: string[] = [];
  for (const name of ["Backup", "Export", "Mirror"]) {
    // The default fields: group "Public", no place.
    const r = await t.req("POST", "/api/me/services", { token, body: { name, check: "webhook:" } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.item.group, "Public");
    paths.push(new URL(r.body.hook_url).pathname);
    assert.equal((await t.req("GET", paths.at(-1)!)).status, 200);
  }
  for (const p of paths) await t.req("GET", `${p}/fail`);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  assert.deepEqual(mailsTo(t, OPS).map((m) => m.subject).sort(), [
    'Watched service "Backup" is off',
    'Watched service "Export" is off',
    'Watched service "Mirror" is off',
  ]);
  for (const p of paths) await t.req("GET", p);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  assert.equal(mailsTo(t, OPS).length, 6, "the backs at once too");
  assert.doesNotMatch(await dumpKv(t.kv), /alert_group/);
});

Deno.test("alert groups: a new off of a service whose back waits goes at once, after that back", async () => {
  await using t = await testApp();
  const { hooks } = await riverside(t, null);
  await t.req("GET", `${hooks.Router.path}/fail`);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  await t.req("GET", hooks.Router.path);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  assert.equal(mailsTo(t, OPS).length, 1, "the back waits for the others'");
  await t.req("GET", `${hooks.Router.path}/fail`);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  assert.deepEqual(mailsTo(t, OPS).map((m) => m.subject), [
    'Watched service "Router" is off',
    'Watched service "Router" is back',
    'Watched service "Router" is off',
  ]);
});

Deno.test("alert groups: turned off, every service alerts on its own at once (API and what it stores)", async () => {
  await withReceiver(async (t, posts, url) => {
    const { token, hooks } = await riverside(t, url);
    assert.deepEqual((await t.req("GET", "/api/me/alert-settings", { token })).body, {
      grouping: true,
    });
    const bad = await t.req("PATCH", "/api/me/alert-settings", {
      token,
      body: { grouping: "no" },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.field, "grouping");
    assert.equal((await t.req("PATCH", "/api/me/alert-settings", { body: {} })).status, 401);
    const off = await t.req("PATCH", "/api/me/alert-settings", {
      token,
      body: { grouping: false },
    });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.body, { ok: true, grouping: false });
    assert.equal((await t.req("GET", "/api/me/alert-settings", { token })).body.grouping, false);

    for (const name of ["Router", "Printer", "NAS"]) await t.req("GET", `${hooks[name].path}/fail`);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    assert.deepEqual(mailsTo(t, OPS).map((m) => m.subject).sort(), [
      'Watched service "NAS" is off',
      'Watched service "Printer" is off',
      'Watched service "Router" is off',
    ]);
    assert.equal(posts().length, 3);

    // On again: the next outage is grouped.
    const on = await t.req("PATCH", "/api/me/alert-settings", { token, body: { grouping: true } });
    assert.equal(on.body.grouping, true);
    for (const name of ["Router", "Printer", "NAS"]) await t.req("GET", hooks[name].path);
    for (let i = 0; i < 4; i++) {
      t.clock.advance(STEP);
      await runDueChecks(t.deps);
    }
    assert.equal(mailsTo(t, OPS).at(-1)!.subject, "LAN: 3 of 4 services back");
    assert.equal(mailsTo(t, OPS).length, 4);
  });
});

Deno.test("alert groups: followers get one grouped mail naming the listed services", async () => {
  await using t = await testApp();
  const { account, token, hooks } = await riverside(t, null);
  const put = await t.req("PUT", "/api/me/status-page", {
    token,
    body: {
      enabled: true,
      title: "Riverside",
      services: [{ id: hooks.Router.id }, { id: hooks.Printer.id }, { id: hooks.Website.id }],
    },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(
    (await t.req("POST", `/api/status/${account.slug}/follow`, { body: { email: FAN } })).status,
    202,
  );
  const link = mailsTo(t, FAN)[0].text.match(/confirm\?token=([0-9]+\.[A-Za-z0-9_-]+)/)![1];
  const done = await t.req("POST", `/api/status/${account.slug}/confirm`, {
    body: { token: link },
  });
  assert.equal(done.status, 200, done.text);

  // Camera off first (not on the page): at once, no follower mail. Three more at the LAN,
  // two of them on the page: one follow-up mail naming those two.
  await t.req("GET", `${hooks.Camera.path}/fail`);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  for (const name of ["Router", "Printer", "NAS"]) await t.req("GET", `${hooks[name].path}/fail`);
  for (let i = 0; i < 3; i++) {
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
  }
  const fan = mailsTo(t, FAN).slice(1);
  assert.equal(fan.length, 1, fan.map((m) => m.subject).join(" | "));
  assert.equal(fan[0].subject, "Riverside: LAN: 2 services off");
  assert.match(fan[0].text, /"Router" is off/);
  assert.match(fan[0].text, /"Printer" is off/);
  assert.doesNotMatch(fan[0].text, /NAS|Camera/);
  assert.match(fan[0].text, /unfollow\?token=/);
  assert.deepEqual(mailsTo(t, OPS).slice(-2).map((m) => m.subject), [
    'Watched service "Camera" is off',
    "LAN: 3 more services off",
  ]);

  // Back, with only one listed among them: that one's own mail.
  await t.req("GET", hooks.Camera.path);
  await t.req("GET", hooks.Router.path);
  await t.req("GET", hooks.NAS.path);
  for (let i = 0; i < 4; i++) {
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
  }
  assert.deepEqual(mailsTo(t, FAN).slice(2).map((m) => m.subject), [
    'Riverside: "Router" is back',
  ]);
});

Deno.test("alert groups: two processes on one KV file send a group once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "groups_" });
  try {
    await using t = await testApp({ kvPath: `${dir}/kv.sqlite3` });
    const { hooks } = await riverside(t, null);
    await t.req("GET", `${hooks.Router.path}/fail`);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    for (const name of ["Printer", "NAS"]) await t.req("GET", `${hooks[name].path}/fail`);
    t.clock.advance(STEP);
    await runDueChecks(t.deps);
    t.clock.advance(GROUP_WAIT);
    // A second process: its own handle on the same file.
    const other = await openKv(`${dir}/kv.sqlite3`);
    try {
      const sent = await Promise.all([
        sendDueGroups(t.deps),
        sendDueGroups({ ...t.deps, kv: other }),
      ]);
      assert.equal(sent[0] + sent[1], 1);
    } finally {
      other.close();
    }
    assert.deepEqual(mailsTo(t, OPS).map((m) => m.subject), [
      'Watched service "Router" is off',
      "LAN: 2 more services off",
    ]);
    await runDueChecks(t.deps);
    assert.equal(mailsTo(t, OPS).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("alert groups: a window over the place holds them, they alert at its end (the first at once) and remind one by one", async () => {
  await using t = await testApp();
  const { token, hooks } = await riverside(t, null);
  for (const name of ["Router", "Printer"]) {
    const r = await t.req("PATCH", `/api/me/services/${hooks[name].id}`, {
      token,
      body: { remind: 1 },
    });
    assert.equal(r.status, 200, r.text);
  }
  const now = t.clock.now();
  const w = await t.req("POST", "/api/me/maintenance", {
    token,
    body: {
      name: "Switch swap",
      places: ["LAN"],
      from: new Date(now - MINUTE).toISOString(),
      to: new Date(now + 30 * MINUTE).toISOString(),
    },
  });
  assert.equal(w.status, 201, w.text);
  for (const name of ["Router", "Printer"]) await t.req("GET", `${hooks[name].path}/fail`);
  const minutes = async (n: number) => {
    for (let i = 0; i < n; i++) {
      t.clock.advance(MINUTE);
      await runDueChecks(t.deps);
    }
  };
  await minutes(5);
  assert.equal(mailsTo(t, OPS).length, 0, "the window holds them");
  // The window ends with both still off: the first look's alert at once, the other's after it.
  await minutes(30);
  const ended = mailsTo(t, OPS).map((m) => m.subject);
  assert.equal(ended.length, 2, ended.join(" | "));
  assert.deepEqual([...ended].sort(), [
    'Watched service "Printer" is off',
    'Watched service "Router" is off',
  ]);
  // Reminders stay per service, an hour after the off alert.
  await minutes(62);
  assert.deepEqual(mailsTo(t, OPS).slice(2).map((m) => m.subject).sort(), [
    'Watched service "Printer" is still off',
    'Watched service "Router" is still off',
  ]);
  // Back: one mail again (within minutes: the others, beaten two hours ago, turn off soon).
  for (const name of ["Router", "Printer"]) await t.req("GET", hooks[name].path);
  await minutes(4);
  assert.deepEqual(mailsTo(t, OPS).slice(4).map((m) => m.subject), ["LAN: 2 of 4 services back"]);
});

Deno.test("alert groups: a service flapping within the 30 seconds keeps alternating alerts ending in its state", () => {
  const said = (events: string) =>
    [...events].map((e, i) => ({
      event: e === "o" ? "off" as const : "back" as const,
      text: `look ${i}`,
      at: i,
      seen: e === "o" ? "off" as const : "ok" as const,
    }));
  const kept = (events: string) => keptAlerts(said(events)).map((a) => a.text).join(" ");
  assert.equal(kept("ob"), "look 0 look 1");
  assert.equal(kept("obo"), "look 0 look 1 look 2");
  assert.equal(kept("obob"), "look 0 look 3");
  assert.equal(kept("obobo"), "look 0 look 3 look 4");
  assert.equal(kept("bobobo"), "look 0 look 5");
});

Deno.test("alert groups: turned off while a follow-up waits, the service's back follows it, never before it", async () => {
  await using t = await testApp();
  const { token, hooks } = await riverside(t, null);
  await t.req("GET", `${hooks.Router.path}/fail`);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  await t.req("GET", `${hooks.Printer.path}/fail`);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  assert.equal(mailsTo(t, OPS).length, 1, "the follow-up waits in its group");
  const off = await t.req("PATCH", "/api/me/alert-settings", { token, body: { grouping: false } });
  assert.equal(off.status, 200, off.text);
  await t.req("GET", hooks.Printer.path);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  assert.equal(mailsTo(t, OPS).length, 1, "the back waits behind its off");
  t.clock.advance(GROUP_WAIT / 2);
  await runDueChecks(t.deps);
  assert.deepEqual(mailsTo(t, OPS).map((m) => m.subject), [
    'Watched service "Router" is off',
    'Watched service "Printer" is off',
    'Watched service "Printer" is back',
  ]);
  // Grouping off: the next failure alerts at once.
  await t.req("GET", `${hooks.NAS.path}/fail`);
  t.clock.advance(STEP);
  await runDueChecks(t.deps);
  assert.equal(mailsTo(t, OPS).at(-1)!.subject, 'Watched service "NAS" is off');
});
