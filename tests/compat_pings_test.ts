import { runDueChecks } from "../jobs/checks.ts";
import assert from "node:assert/strict";
import {
  fakeResolver,
  serviceEvents as events,
  serviceItem as item,
  type TestApp,
  testApp,
} from "./_helpers.ts";

/**
 * Healthchecks' pinging API (/ping/<uuid>, /ping/<ping key>/<slug>) and Uptime Kuma's push
 * route, answered as those products answer (hc/api/tests/test_ping.py, test_ping_by_slug.py,
 * Kuma's server/routers/api-router.js), into the same events and state as /api/hooks.
 */

async function heartbeat(t: TestApp, token: string, body: Record<string, unknown> = {}) {
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "DB Backup", check: "webhook:", interval: 5, ...body },
  });
  assert.equal(r.status, 200, r.text);
  return r.body.item as { id: number; uuid: string; slug: string; methods: string };
}

const RID = "3f2a9c4e-0d6b-4f53-9d2e-6a1c2b7e8f90";

Deno.test("hc ping by uuid: OK with Healthchecks' headers; start, log, fail, exit codes, rid", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  assert.match(hb.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(hb.slug, "db-backup");
  assert.equal(hb.methods, "");

  const ok = await t.req("GET", `/ping/${hb.uuid}`);
  assert.equal(ok.status, 200);
  assert.equal(ok.text, "OK");
  assert.equal(ok.headers.get("access-control-allow-origin"), "*");
  assert.equal(ok.headers.get("ping-body-limit"), "10240");
  assert.match(ok.headers.get("cache-control")!, /no-cache/);
  assert.equal(ok.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal((await item(t, token, hb.id)).state, "ok");

  assert.equal((await t.req("GET", `/ping/${hb.uuid}/start?rid=${RID.toUpperCase()}`)).text, "OK");
  t.clock.advance(30_000);
  const end = await t.req("POST", `/ping/${hb.uuid}/0?rid=${RID}`, {
    raw: "hello world",
    headers: { "content-type": "text/plain" },
  });
  assert.equal(end.status, 200);
  const log = await t.req("POST", `/ping/${hb.uuid}/log`, { raw: "note" });
  assert.equal(log.text, "OK");
  const head = await t.req("HEAD", `/ping/${hb.uuid}/`);
  assert.equal(head.status, 200, "HEAD records a success, as Healthchecks does");
  let ev = await events(t, token, hb.id);
  assert.deepEqual(
    ev.map((e: { kind: string }) => e.kind),
    ["success", "log", "success", "start", "success"],
  );
  assert.equal(ev[2].code, 0);
  assert.equal(ev[2].duration_ms, 30_000);
  assert.equal(ev[2].body, "hello world");
  assert.equal(ev[3].rid, RID);

  // Exit codes: 007 is 7 (Django's <int:>), over 255 is "invalid url format".
  assert.equal((await t.req("GET", `/ping/${hb.uuid}/007`)).status, 200);
  ev = await events(t, token, hb.id);
  assert.equal(ev[0].kind, "fail");
  assert.equal(ev[0].code, 7);
  await runDueChecks(t.deps); // the look the failure asked for (the KV queue's, in the server)
  const s = await item(t, token, hb.id);
  assert.equal(s.state, "off");
  assert.equal((await t.req("GET", `/ping/${hb.uuid}/fail`)).status, 200);
  const over = await t.req("GET", `/ping/${hb.uuid}/256`);
  assert.equal(over.status, 400);
  assert.equal(over.text, "invalid url format");
  for (const bad of ["not-a-uuid", "123e4567-e89b-12d3-a456-42661417400"]) {
    const r = await t.req("GET", `/ping/${hb.uuid}/start?rid=${bad}`);
    assert.equal(r.status, 400);
    assert.equal(r.text, "invalid uuid format");
  }
  assert.equal((await events(t, token, hb.id)).length, 7, "refused pings record nothing");
});

Deno.test("hc ping by uuid: not found, another form, wrong methods, long bodies", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  const missing = await t.req("GET", "/ping/5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278");
  assert.equal(missing.status, 404);
  assert.equal(missing.text, "not found");
  // Django's <uuid:> takes the canonical lower-case form only.
  assert.equal((await t.req("GET", `/ping/${hb.uuid.toUpperCase()}`)).status, 404);
  assert.equal((await t.req("GET", `/ping/${hb.uuid.replaceAll("-", "")}`)).status, 404);
  assert.equal((await t.req("GET", `/ping/${hb.uuid}/start/`)).status, 404);
  for (const method of ["PUT", "DELETE", "PATCH"]) {
    const r = await t.req(method, `/ping/${hb.uuid}`);
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get("allow"), "HEAD, GET, POST");
  }
  // A body over the limit is cut to its first 10 240 bytes, as Healthchecks stores its first
  // PING_BODY_LIMIT bytes; the ping counts.
  const big = "a".repeat(10_240) + "b".repeat(100_000);
  const r = await t.req("POST", `/ping/${hb.uuid}/log`, { raw: big });
  assert.equal(r.status, 200);
  const ev = await events(t, token, hb.id);
  assert.equal(ev[0].body, "a".repeat(10_240));
  assert.equal(ev.length, 1);
});

Deno.test("methods POST: /ping records other methods as ignored; /api/hooks refuses them", async () => {
  await using t = await testApp({ resolver: fakeResolver({ "site.test": ["93.184.215.14"] }) });
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const created = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly", check: "webhook:", interval: 5, methods: "POST" },
  });
  assert.equal(created.status, 200, created.text);
  const hb = created.body.item;
  const hook = new URL(created.body.hook_url).pathname;
  assert.equal(hb.methods, "POST");
  const get = await t.req("GET", `/ping/${hb.uuid}`);
  assert.equal(get.status, 200);
  assert.equal(get.text, "OK");
  assert.equal((await item(t, token, hb.id)).state, "wait", "an ignored ping changes nothing");
  const ev = await events(t, token, hb.id);
  assert.equal(ev[0].kind, "log");
  assert.match(ev[0].status, /^ignored: a GET request/);
  const native = await t.req("GET", hook);
  assert.equal(native.status, 405);
  assert.equal(native.headers.get("allow"), "POST");
  assert.equal((await t.req("POST", hook)).status, 200);
  assert.equal((await t.req("POST", `/ping/${hb.uuid}`)).text, "OK");
  assert.equal((await item(t, token, hb.id)).state, "ok");
  // Back to any method.
  const patched = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { methods: "" },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.item.methods, "");
  assert.equal((await t.req("GET", hook)).status, 200);
  assert.equal((await events(t, token, hb.id))[0].kind, "success");
  // Only a heartbeat has them.
  const url = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Site", check: "url:https://site.test/", methods: "POST" },
  });
  assert.equal(url.status, 400);
  assert.equal(url.body.field, "methods");
});

Deno.test("hc ping by slug: ping key shown once, 404 without it, 409 for a shared slug, 400 upper case", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  const none = await t.req("GET", "/api/me/ping-key", { token });
  assert.deepEqual(none.body, {
    exists: false,
    created: null,
    ping_endpoint: "http://test.local/ping/",
  });
  const made = await t.req("POST", "/api/me/ping-key", { token });
  assert.equal(made.status, 200, made.text);
  const key: string = made.body.ping_key;
  assert.match(key, /^[A-Za-z0-9_-]{22}$/);
  assert.equal((await t.req("GET", "/api/me/ping-key", { token })).body.exists, true);

  const ok = await t.req("GET", `/ping/${key}/db-backup`);
  assert.equal(ok.status, 200);
  assert.equal(ok.text, "OK");
  assert.equal(ok.headers.get("access-control-allow-origin"), "*");
  for (
    const [sig, kind, code] of [["start", "start", null], ["0", "success", 0], ["3", "fail", 3]]
  ) {
    assert.equal((await t.req("GET", `/ping/${key}/db-backup/${sig}`)).text, "OK");
    const ev = (await events(t, token, hb.id))[0];
    assert.equal(ev.kind, kind);
    assert.equal(ev.code, code);
  }
  assert.equal((await t.req("POST", `/ping/${key}/db-backup/log`, { raw: "hi" })).status, 200);
  const upper = await t.req("GET", `/ping/${key}/DB-backup`);
  assert.equal(upper.status, 400);
  assert.equal(upper.text, "invalid url format");
  assert.equal((await t.req("GET", `/ping/${key}/db-backup/256`)).text, "invalid url format");
  const wrong = await t.req("GET", "/ping/rrrrrrrrrrrrrrrrrrrrrr/db-backup");
  assert.equal(wrong.status, 404);
  assert.equal(wrong.text, "not found");
  assert.equal((await t.req("GET", `/ping/${key}/other`)).status, 404);

  // A second heartbeat with the same slug: the slug is ambiguous; the UUIDs still work.
  const twin = await heartbeat(t, token, { name: "DB backup" });
  assert.equal(twin.slug, "db-backup");
  const amb = await t.req("GET", `/ping/${key}/db-backup`);
  assert.equal(amb.status, 409);
  assert.equal(amb.text, "ambiguous slug");
  assert.equal((await t.req("GET", `/ping/${twin.uuid}`)).text, "OK");
  // Renamed apart, each slug names one service again.
  const patched = await t.req("PATCH", `/api/me/services/${twin.id}`, {
    token,
    body: { slug: "db-backup-2" },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal((await t.req("GET", `/ping/${key}/db-backup`)).text, "OK");
  assert.equal((await t.req("GET", `/ping/${key}/db-backup-2`)).text, "OK");
  assert.equal((await events(t, token, twin.id)).length, 2);
  const badSlug = await t.req("PATCH", `/api/me/services/${twin.id}`, {
    token,
    body: { slug: "Not A Slug" },
  });
  assert.equal(badSlug.status, 400);
  assert.equal(badSlug.body.field, "slug");

  // A new key: the old one stops at once, every slug moves to the new one.
  const next = (await t.req("POST", "/api/me/ping-key", { token })).body.ping_key;
  assert.notEqual(next, key);
  assert.equal((await t.req("GET", `/ping/${key}/db-backup`)).status, 404);
  assert.equal((await t.req("GET", `/ping/${next}/db-backup-2`)).text, "OK");
  // Deleted, its slug is gone.
  assert.equal((await t.req("DELETE", `/api/me/services/${twin.id}`, { token })).status, 200);
  assert.equal((await t.req("GET", `/ping/${next}/db-backup-2`)).status, 404);
  assert.equal((await t.req("GET", `/ping/${twin.uuid}`)).status, 404);
});

Deno.test("hc auto-provisioning: ?create=1 makes one check, 201 Created, even for two at once", async () => {
  await using t = await testApp({
    resolver: fakeResolver({ "hooks.example.org": ["93.184.215.14"] }),
  });
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const ch = await t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Hook", url: "https://hooks.example.org/x" },
  });
  const key = (await t.req("POST", "/api/me/ping-key", { token })).body.ping_key;
  const off = await t.req("GET", `/ping/${key}/srv01`);
  assert.equal(off.status, 404, "auto-provisioning is off by default");
  const both = await Promise.all([
    t.req("GET", `/ping/${key}/srv01?create=1`),
    t.req("GET", `/ping/${key}/srv01?create=1`),
  ]);
  assert.deepEqual(both.map((r) => r.status).sort(), [200, 201]);
  assert.deepEqual(both.map((r) => r.text).sort(), ["Created", "OK"]);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  assert.equal(items.length, 1, "two concurrent first pings make one check");
  const s = items[0];
  assert.equal(s.name, "srv01");
  assert.equal(s.slug, "srv01");
  assert.equal(s.kind, "webhook");
  assert.equal(s.interval, 1440, "Healthchecks' default period: a day");
  assert.equal(ch.status, 200, ch.text);
  assert.deepEqual(s.channels, [ch.body.item.id], "every channel of the account");
  assert.equal((await events(t, token, s.id)).length, 2);
  assert.equal((await t.req("GET", `/ping/${key}/srv01?create=1`)).status, 200);
  // Another key makes nothing; at the account's limit, "not found".
  assert.equal((await t.req("GET", "/ping/rrrrrrrrrrrrrrrrrrrrrr/x?create=1")).status, 404);
  for (let i = 2; i <= 30; i++) {
    assert.equal(
      (await t.req("GET", `/ping/${key}/srv${i}?create=1`, { from: `192.0.2.${i}` })).status,
      201,
    );
  }
  const full = await t.req("GET", `/ping/${key}/srv31?create=1`);
  assert.equal(full.status, 404);
  assert.equal(full.text, "not found");
});

Deno.test("kuma push: up, down with its message, ping as response time; Kuma's answers", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  const made = await t.req("POST", `/api/me/services/${hb.id}/push`, { token });
  assert.equal(made.status, 200, made.text);
  const push = new URL(made.body.push_url).pathname;
  assert.match(push, /^\/api\/push\/[A-Za-z0-9]{32}$/);
  const up = await t.req("GET", `${push}?status=up&msg=OK&ping=12.5`);
  assert.equal(up.status, 200);
  assert.deepEqual(up.body, { ok: true });
  let ev = (await events(t, token, hb.id))[0];
  assert.equal(ev.kind, "success");
  assert.equal(ev.status, "OK");
  assert.equal(ev.ms, 12.5);
  assert.equal((await item(t, token, hb.id)).state, "ok");
  const down = await t.req("POST", `${push}?status=down&msg=disk%20full`);
  assert.deepEqual(down.body, { ok: true });
  ev = (await events(t, token, hb.id))[0];
  assert.equal(ev.kind, "fail");
  assert.equal(ev.status, "disk full");
  assert.equal(ev.ms, null);
  await runDueChecks(t.deps); // the look the failure asked for (the KV queue's, in the server)
  const s = await item(t, token, hb.id);
  assert.equal(s.state, "off");
  assert.equal(s.status, "disk full");
  // No parameters: up, "OK"; any status but "up" is down, as Kuma reads it.
  assert.deepEqual((await t.req("GET", push)).body, { ok: true });
  assert.equal((await events(t, token, hb.id))[0].status, "OK");
  await t.req("GET", `${push}?status=pending`);
  assert.equal((await events(t, token, hb.id))[0].kind, "fail");
  const badPing = await t.req("GET", `${push}?ping=-5`);
  assert.equal(badPing.status, 404);
  assert.deepEqual(badPing.body, {
    ok: false,
    msg: "Invalid ping value. Must be between 0 and 100000000000 ms.",
  });
  const unknown = await t.req("GET", "/api/push/nothing");
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body, { ok: false, msg: "Monitor not found or not active." });
  // A new token: the old address stops.
  const next = new URL(
    (await t.req("POST", `/api/me/services/${hb.id}/push`, { token })).body
      .push_url,
  ).pathname;
  assert.equal((await t.req("GET", push)).status, 404);
  assert.equal((await t.req("GET", next)).status, 200);
  // Another account cannot make one for this service.
  const other = await t.account("else@example.org", { name: "Else" });
  assert.equal(
    (await t.req("POST", `/api/me/services/${hb.id}/push`, { token: other.token })).status,
    404,
  );
});

const HC_EXPORT = JSON.parse(
  await Deno.readTextFile(new URL("./data/healthchecks_v3_checks.json", import.meta.url)),
);
const KUMA_EXPORT = JSON.parse(
  await Deno.readTextFile(new URL("./data/uptime_kuma_backup.json", import.meta.url)),
);

Deno.test("import: a Healthchecks project keeps UUIDs and slugs; the plan first, then all at once", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const dry = await t.req("POST", "/api/me/import", {
    token,
    body: { data: HC_EXPORT, dry_run: true },
  });
  assert.equal(dry.status, 200, dry.text);
  assert.equal(dry.body.source, "healthchecks");
  assert.deepEqual(dry.body.create.map((p: { name: string }) => p.name), [
    "Filesystem Backup",
    "Database Backup",
    "Weekly report",
    "Log rotate",
  ]);
  assert.deepEqual(dry.body.cannot, []);
  const [fs, db, weekly, rotate] = dry.body.create;
  assert.equal(weekly.schedule, "Mon *-*-* 08:00:00", "an OnCalendar schedule comes over");
  assert.equal(fs.interval, 60);
  assert.deepEqual(fs.notes, ["integrations not kept: it alerts your channels for new services"]);
  assert.equal(db.schedule, "15 5 * * *");
  // A period is kept exactly (the interval of the list below it for its readers).
  assert.equal(rotate.interval, 60);
  assert.equal(rotate.period_seconds, 7200);
  assert.ok(!rotate.notes.some((n: string) => n.startsWith("period")), rotate.notes.join());
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 0);

  const done = await t.req("POST", "/api/me/import", { token, body: { data: HC_EXPORT } });
  assert.equal(done.status, 200, done.text);
  assert.equal(done.body.created.length, 4);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  const byName = Object.fromEntries(items.map((s: { name: string }) => [s.name, s]));
  assert.equal(byName["Filesystem Backup"].uuid, "31365bce-8da9-4729-8ff3-aaa71d56b712");
  assert.equal(byName["Filesystem Backup"].slug, "filesystem-backup");
  assert.equal(byName["Filesystem Backup"].what, "Runs incremental backup every hour");
  assert.deepEqual(byName["Filesystem Backup"].tags, ["backup", "fs"]);
  assert.equal(byName["Filesystem Backup"].grace, 10, "Healthchecks' grace of 600 s is kept");
  assert.deepEqual(byName["Database Backup"].tags, ["production", "db"]);
  assert.equal(byName["Database Backup"].schedule, "15 5 * * *");
  assert.equal(byName["Database Backup"].grace, 20);
  assert.equal(byName["Log rotate"].methods, "POST");
  // The check's old ping address works with the base changed.
  const ping = await t.req("GET", "/ping/803f680d-e89b-492b-82ef-2be7b774a92d/start");
  assert.equal(ping.text, "OK");
  // Imported twice: each UUID is a check here already, nothing is created.
  const again = await t.req("POST", "/api/me/import", { token, body: { data: HC_EXPORT } });
  assert.equal(again.status, 409);
  assert.equal(again.body.error, "nothing to import");
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 4);
  // Not an export: 400 naming data, nothing stored.
  for (const data of [[], { checks: "x" }, "text", { monitors: [] }]) {
    const bad = await t.req("POST", "/api/me/import", { token, body: { data } });
    assert.equal(bad.status, 400, JSON.stringify(data));
    assert.equal(bad.body.field, "data");
  }
  assert.equal((await t.req("POST", "/api/me/import", { body: { data: HC_EXPORT } })).status, 401);
});

Deno.test("import: an Uptime Kuma backup: http, keyword, port and push; what cannot be, and why", async () => {
  await using t = await testApp({
    resolver: fakeResolver({ "site.test": ["93.184.215.14"], "db.test": ["8.8.8.8"] }),
  });
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const r = await t.req("POST", "/api/me/import", { token, body: { data: KUMA_EXPORT } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.source, "uptime-kuma");
  assert.deepEqual(r.body.create.map((p: { name: string; kind: string }) => [p.name, p.kind]), [
    ["Website", "url"],
    ["Shop keyword", "url"],
    ["Postgres port", "tcp"],
    ["Nightly backup push", "webhook"],
  ]);
  assert.deepEqual(r.body.cannot.map((c: { from: string }) => c.from), [
    "Router ping",
    "DNS",
    "Infra",
    "Intranet",
  ]);
  assert.match(r.body.cannot[0].why, /a ping monitor/);
  assert.match(r.body.cannot[3].why, /private/);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  const site = items.find((s: { name: string }) => s.name === "Website");
  assert.equal(site.threshold, 3, "two retries: the third failed check alerts");
  assert.equal(site.interval, 5);
  assert.equal(site.what, "");
  assert.deepEqual(site.tags, ["prod"]);
  // The push monitor's address works with the base changed.
  const push = await t.req(
    "GET",
    "/api/push/Xk3v9QeLm2Tz8Rb1Nw4Pd7Hs6Jf0Ac5Y?status=up&msg=OK&ping=",
  );
  assert.deepEqual(push.body, { ok: true });
  const hb = items.find((s: { name: string }) => s.name === "Nightly backup push");
  assert.equal(hb.interval, 1440);
  assert.equal((await events(t, token, hb.id))[0].status, "OK");
});

Deno.test("import: the account's limit holds: past 30 services the rest cannot be", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const checks = Array.from({ length: 32 }, (_, i) => ({
    name: `Job ${i + 1}`,
    slug: `job-${i + 1}`,
    timeout: 300,
    grace: 60,
  }));
  const r = await t.req("POST", "/api/me/import", { token, body: { data: { checks } } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.created.length, 30);
  assert.deepEqual(r.body.cannot.map((c: { why: string }) => c.why), [
    "over the limit of 30 services",
    "over the limit of 30 services",
  ]);
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 30);
});

Deno.test("import: tags become the service's tags (one word each, at most 20), not its description", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const many = Array.from({ length: 22 }, (_, i) => `t${i}`).join(" ");
  const checks = [
    { name: "Plain", tags: "nightly  prod nightly", desc: "Backs up\nthe wiki", timeout: 3600 },
    { name: "Many", tags: many, timeout: 3600 },
    { name: "Long", tags: "x".repeat(60), timeout: 3600 },
  ];
  const r = await t.req("POST", "/api/me/import", { token, body: { data: { checks } } });
  assert.equal(r.status, 200, r.text);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  const byName = Object.fromEntries(items.map((s: { name: string }) => [s.name, s]));
  assert.deepEqual(byName.Plain.tags, ["nightly", "prod"]);
  assert.equal(byName.Plain.what, "Backs up the wiki");
  assert.equal(byName.Many.tags.length, 20);
  const NO_UUID = "no UUID in the export (a read-only key): a new one is made";
  assert.deepEqual(r.body.create[1].notes, ["2 tags past 20 dropped", NO_UUID]);
  assert.deepEqual(byName.Long.tags, ["x".repeat(50)]);
  assert.deepEqual(r.body.create[2].notes, ["tags cut to 50 characters", NO_UUID]);
  // Kuma's tag names may hold spaces: one word each here.
  const kuma = {
    version: "1.23.0",
    notificationList: [],
    monitorList: [{
      id: 1,
      name: "Nightly push",
      type: "push",
      interval: 86400,
      maxretries: 0,
      pushToken: "Ab3v9QeLm2Tz8Rb1Nw4Pd7Hs6Jf0Ac5Y",
      active: true,
      tags: [{ id: 1, monitor_id: 1, tag_id: 1, value: "", name: "home lab", color: "#059669" }],
    }],
  };
  const k = await t.req("POST", "/api/me/import", { token, body: { data: kuma } });
  assert.equal(k.status, 200, k.text);
  assert.deepEqual(k.body.create[0].notes, ['tag "home lab" became "home-lab"']);
  const push = (await t.req("GET", "/api/me/services", { token })).body.items
    .find((s: { name: string }) => s.name === "Nightly push");
  assert.deepEqual(push.tags, ["home-lab"]);
});
