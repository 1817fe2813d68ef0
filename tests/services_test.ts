import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { MINUTE } from "../lib/clock.ts";
import { dumpKv, fakeResolver, testApp } from "./_helpers.ts";

type T = Awaited<ReturnType<typeof testApp>>;

const PUBLIC = { "site.test": ["93.184.216.34"], "db.test": ["8.8.8.8"] };

async function app() {
  return await testApp({ resolver: fakeResolver(PUBLIC) });
}

async function add(t: T, token: string, body: Record<string, unknown>) {
  return await t.req("POST", "/api/me/services", { token, body: { name: "Site", ...body } });
}

Deno.test("services: list answers items and the allowed values", async () => {
  await using t = await app();
  const { token } = await t.account("user@example.org", { name: "User" });
  const r = await t.req("GET", "/api/me/services", { token });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    items: [],
    team: false,
    machine: null,
    kinds: ["url", "mcp", "tcp", "tls", "webhook"],
    groups: ["Public", "LAN and tailnet", "Data", "Jobs"],
    places: [
      "via tunnel",
      "cloudflared",
      "LAN",
      "tailnet",
      "container only",
      "oneshot",
      "cloud",
      "on site",
    ],
    intervals: [5, 15, 60, 240, 1440],
    max: 30,
  });
  assert.equal((await t.req("GET", "/api/me/services")).status, 401);
});

Deno.test("services: create runs the first check before answering; item shape", async () => {
  await using t = await app();
  const { token } = await t.account("user@example.org", { name: "User" });
  const r = await add(t, token, {
    check: "url:https://site.test/health?x=1",
    what: "Public site",
    group: "Public",
    place: "cloud",
    interval: 5,
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.hook_url, undefined);
  const item = r.body.item;
  assert.deepEqual(Object.keys(item).sort(), [
    "alerts",
    "badge_path",
    "beat",
    "cert_expires",
    "channels",
    "checked",
    "created",
    "depends_on",
    "failed_checks",
    "grace",
    "grace_seconds",
    "group",
    "http",
    "id",
    "interval",
    "kind",
    "maintenance",
    "methods",
    "min_duration",
    "ms",
    "name",
    "paused",
    "period_seconds",
    "place",
    "remind",
    "schedule",
    "slug",
    "state",
    "status",
    "tags",
    "target_hint",
    "threshold",
    "tz",
    "uuid",
    "what",
  ]);
  assert.equal(item.kind, "url");
  assert.equal(item.target_hint, "https://site.test");
  assert.equal(item.state, "off", "the test connector refuses every connection");
  assert.equal(item.status, "connection refused");
  assert.equal(item.checked, new Date(t.clock.now()).toISOString());
  assert.equal(item.beat, null);
  assert.equal(item.alerts, true);
  const list = await t.req("GET", "/api/me/services", { token });
  assert.equal(list.body.items.length, 1);
  assert.ok(!list.text.includes("/health"), "never the full address");
});

Deno.test("services: invalid fields answer 400 naming the field, nothing stored", async () => {
  await using t = await app();
  const { token } = await t.account("user@example.org", { name: "User" });
  const before = await dumpKv(t.kv);
  const cases: [Record<string, unknown>, string][] = [
    [{ name: "x", check: "webhook:" }, "name"],
    [{ name: "y".repeat(81), check: "webhook:" }, "name"],
    [{ check: "webhook:", what: "w".repeat(161) }, "what"],
    [{ check: "webhook:", group: "Other" }, "group"],
    [{ check: "webhook:", place: "moon" }, "place"],
    [{ check: "webhook:", interval: 7 }, "interval"],
    [{ check: "webhook:", interval: "60" }, "interval"],
    [{ check: "ftp:site.test" }, "check"],
    [{ check: "url:https://nowhere.test/" }, "check"],
    [{ check: 5 }, "check"],
    [{ name: "nul\u0000byte", check: "webhook:" }, "name"],
    [{ name: "two\nlines", check: "webhook:" }, "name"],
    [{ name: "lone \ud800 half", check: "webhook:" }, "name"],
    [{ check: "webhook:", what: "bell\u0007" }, "what"],
    [{ check: "webhook:", what: "lone \udc00" }, "what"],
  ];
  for (const [body, field] of cases) {
    const r = await add(t, token, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.field, field, r.text);
  }
  const noName = await t.req("POST", "/api/me/services", { token, body: { check: "webhook:" } });
  assert.equal(noName.status, 400);
  const notJson = await t.req("POST", "/api/me/services", {
    token,
    raw: "name=x",
    headers: { "content-type": "application/json" },
  });
  assert.equal(notJson.status, 400);
  assert.equal(await dumpKv(t.kv), before);
});

Deno.test("services: 30 per account, the 31st answers 409", async () => {
  await using t = await app();
  const { token } = await t.account("user@example.org", { name: "User" });
  const other = await t.account("other@example.org", { name: "Other" });
  await Promise.all(
    Array.from({ length: 30 }, (_, i) => add(t, token, { name: `Job ${i}`, check: "webhook:" })),
  );
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 30);
  const over = await add(t, token, { check: "webhook:" });
  assert.equal(over.status, 409);
  assert.match(over.body.error, /30/);
  const overChecked = await add(t, token, { check: "tcp:db.test:5432" });
  assert.equal(overChecked.status, 409);
  assert.equal((await add(t, other.token, { check: "webhook:" })).status, 200);
  const first = (await t.req("GET", "/api/me/services", { token })).body.items[0];
  assert.equal((await t.req("DELETE", `/api/me/services/${first.id}`, { token })).status, 200);
  assert.equal((await add(t, token, { check: "webhook:" })).status, 200);
  assert.equal((await add(t, token, { check: "webhook:" })).status, 409);
});

Deno.test("services: PATCH changes the allowed fields only; others' services are 404", async () => {
  await using t = await app();
  const { token } = await t.account("user@example.org", { name: "User" });
  const other = await t.account("other@example.org", { name: "Other" });
  const id = (await add(t, token, { check: "tcp:db.test:5432", group: "Data" })).body.item.id;
  const r = await t.req("PATCH", `/api/me/services/${id}`, {
    token,
    body: { name: "Database", what: "Main DB", place: "LAN", interval: 15, alerts: false },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.item.name, "Database");
  assert.equal(r.body.item.group, "Data");
  assert.equal(r.body.item.interval, 15);
  assert.equal(r.body.item.alerts, false);
  for (
    const body of [{ check: "tcp:db.test:1" }, { kind: "url" }, { interval: 10 }, {
      name: "esc\u001b[31m",
    }, { what: "\ud83d" }]
  ) {
    const bad = await t.req("PATCH", `/api/me/services/${id}`, { token, body });
    assert.equal(bad.status, 400, JSON.stringify(body));
  }
  const before = await dumpKv(t.kv);
  for (const [m, p] of [["PATCH", ""], ["DELETE", ""], ["POST", "/check"], ["POST", "/rotate"]]) {
    const res = await t.req(m, `/api/me/services/${id}${p}`, {
      token: other.token,
      body: m === "PATCH" ? { name: "Mine now" } : undefined,
    });
    assert.equal(res.status, 404, `${m} ${p}`);
  }
  assert.equal((await t.req("PATCH", "/api/me/services/abc", { token, body: {} })).status, 404);
  assert.equal(await dumpKv(t.kv), before);
});

Deno.test("services: manual check 60 an hour; not for heartbeats; rotate only heartbeats", async () => {
  await using t = await app();
  const { token } = await t.account("user@example.org", { name: "User" });
  const id = (await add(t, token, { check: "tcp:db.test:5432" })).body.item.id;
  const hb = (await add(t, token, { check: "webhook:" })).body.item.id;
  assert.equal((await t.req("POST", `/api/me/services/${hb}/check`, { token })).status, 400);
  assert.equal((await t.req("POST", `/api/me/services/${id}/rotate`, { token })).status, 400);
  // A fresh hour, and the one before it empty: the check at creation counted two hours back.
  t.clock.set((Math.floor(t.clock.now() / 3_600_000) + 2) * 3_600_000);
  for (let i = 0; i < 60; i++) {
    const r = await t.req("POST", `/api/me/services/${id}/check`, { token });
    assert.equal(r.status, 200);
    assert.equal(r.body.item.state, "off");
  }
  const over = await t.req("POST", `/api/me/services/${id}/check`, { token });
  assert.equal(over.status, 429);
  // 60 an hour, spent at the hour's start: the first comes back a minute past its end.
  assert.equal(over.headers.get("retry-after"), "3660");
});

Deno.test("services: the check at creation counts as a manual check; past the limit it waits for the runner", async () => {
  let connects = 0;
  await using t = await testApp({
    resolver: fakeResolver(PUBLIC),
    connector: () => {
      connects++;
      return Promise.reject(Object.assign(new Error("refused"), { name: "ConnectionRefused" }));
    },
  });
  const { token } = await t.account("user@example.org", { name: "User" });
  t.clock.set(Math.ceil(t.clock.now() / 3_600_000) * 3_600_000);
  const first = await add(t, token, { check: "tcp:db.test:5432" });
  assert.equal(first.status, 200);
  assert.equal(first.body.item.state, "off");
  assert.equal(connects, 1);
  const id = first.body.item.id;
  for (let i = 0; i < 59; i++) {
    assert.equal((await t.req("POST", `/api/me/services/${id}/check`, { token })).status, 200);
  }
  assert.equal(connects, 60);
  // The hour's 60 are used: creation still succeeds, without touching the target.
  const second = await add(t, token, { name: "Later", check: "tcp:db.test:5433" });
  assert.equal(second.status, 200);
  assert.equal(second.body.item.state, "wait");
  assert.equal(second.body.item.checked, null);
  assert.equal(connects, 60);
  assert.equal((await t.req("POST", `/api/me/services/${id}/check`, { token })).status, 429);
  // A heartbeat needs no check and is not counted.
  assert.equal((await add(t, token, { name: "Beat", check: "webhook:" })).status, 200);
  // The runner checks the unchecked service at the next minute, and the one off from its first
  // result, whose alert that look sends.
  t.clock.advance(MINUTE);
  const ran = await runDueChecks(t.deps);
  assert.equal(ran.ran, 2);
  assert.equal(connects, 62);
  const list = (await t.req("GET", "/api/me/services", { token })).body.items;
  assert.equal(list.find((s: { id: number }) => s.id === second.body.item.id).state, "off");
});

Deno.test("services: owners may watch private targets; team listing and machine", async () => {
  const snap = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(
      snap,
      JSON.stringify({
        host: "box",
        read: "2026-03-02T08:59:00.000Z",
        services: [{
          group: "Data",
          name: "pg",
          what: "db",
          where: "LAN",
          state: "ok",
          status: "up",
          flag: null,
        }],
      }),
    );
    await using t = await testApp({
      resolver: fakeResolver({ "nas.lan": ["192.168.1.5"] }),
      config: { machineSnapshot: snap },
    });
    const owner = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const reviewer = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
    const user = await t.account("user@example.org", { name: "User" });
    const r = await add(t, owner.token, { check: "tcp:nas.lan:445", name: "NAS" });
    assert.equal(r.status, 200);
    assert.equal((await add(t, user.token, { check: "tcp:nas.lan:445" })).status, 400);
    await add(t, user.token, { check: "webhook:", name: "Cron" });

    const mine = await t.req("GET", "/api/me/services", { token: owner.token });
    assert.equal(mine.body.team, true);
    assert.equal(mine.body.machine.host, "box");
    assert.equal(mine.body.machine.services[0].name, "pg");
    const rev = await t.req("GET", "/api/me/services", { token: reviewer.token });
    assert.equal(rev.body.team, true);
    assert.equal(rev.body.machine, null, "the machine is the owner's");

    assert.equal((await t.req("GET", "/api/services")).status, 401);
    assert.equal((await t.req("GET", "/api/services", { token: user.token })).status, 403);
    const team = await t.req("GET", "/api/services", {
      headers: { "x-service-token": t.deps.config.serviceToken! },
    });
    assert.equal(team.status, 200);
    assert.equal(team.body.items.length, 2);
    const nas = team.body.items.find((s: { name: string }) => s.name === "NAS");
    assert.equal(nas.target, "tcp:nas.lan:445");
    assert.deepEqual(nas.account, {
      id: owner.account.id,
      name: "Owner",
      email: "owner@example.org",
    });
    assert.equal(team.body.machine.host, "box");
    assert.equal((await t.req("GET", "/api/services", { token: reviewer.token })).status, 200);

    await Deno.writeTextFile(snap, "{broken");
    assert.equal(
      (await t.req("GET", "/api/me/services", { token: owner.token })).body.machine,
      null,
    );
  } finally {
    await Deno.remove(snap);
  }
});

Deno.test("services: export, counts and erasure through the account parts", async () => {
  const { servicesPart } = await import("../kv/parts/services.ts");
  await using t = await app();
  const { account, token } = await t.account("user@example.org", { name: "User" });
  const keep = await t.account("keep@example.org", { name: "Keep" });
  await add(t, token, { check: "tcp:db.test:5432" });
  const hb = await add(t, token, { check: "webhook:" });
  await add(t, keep.token, { check: "webhook:" });
  assert.equal((await t.req("GET", new URL(hb.body.hook_url).pathname)).status, 200);
  const exported = await servicesPart.export(t.deps, account);
  const services = exported.services as { check: string }[];
  assert.equal(services.length, 2);
  assert.equal(services[0].check, "tcp:db.test:5432");
  assert.deepEqual(await servicesPart.counts!(t.deps, account), { services: 2 });
  await servicesPart.erase(t.deps, account, { keep: new Set(), remove: new Set() });
  const dump = await dumpKv(t.kv);
  for (const line of dump.split("\n")) {
    if (/^\["(services|services_by_id|service_due|service_count|beats|hooks)"/.test(line)) {
      assert.ok(
        !line.includes(`,${account.id},`) && !line.includes(`"account":${account.id}`),
        line,
      );
    }
  }
  assert.equal((await t.req("GET", new URL(hb.body.hook_url).pathname)).status, 404);
  assert.deepEqual(await servicesPart.counts!(t.deps, account), { services: 0 });
  assert.deepEqual(await servicesPart.counts!(t.deps, keep.account), { services: 1 });
});

Deno.test("services: the routes are in the OpenAPI document", async () => {
  await using t = await app();
  const r = await t.req("GET", "/api/openapi.json");
  assert.equal(r.status, 200, r.text.slice(0, 200));
  for (
    const p of [
      "/api/me/services",
      "/api/me/services/{id}",
      "/api/me/services/{id}/check",
      "/api/me/services/{id}/rotate",
      "/api/services",
      "/api/hooks/{key}",
    ]
  ) assert.ok(r.body.paths[p], p);
  assert.ok(r.body.paths["/api/hooks/{key}"].get && r.body.paths["/api/hooks/{key}"].post);
});

Deno.test("services: in the account export, the actors' counts, and gone with the account", async () => {
  await using t = await app();
  const { account, token } = await t.account("user@example.org", { name: "User" });
  const keep = await t.account("keep@example.org", { name: "Keep" });
  await add(t, token, { check: "tcp:db.test:5432" });
  const hb = await add(t, token, { check: "webhook:" });
  const hook = new URL(hb.body.hook_url).pathname;
  assert.equal((await t.req("GET", `${hook}?status=fine`)).status, 200);
  await add(t, keep.token, { check: "webhook:" });

  const ex = await t.req("GET", "/api/me/export", { token });
  assert.equal(ex.status, 200);
  const services = JSON.stringify(ex.body);
  assert.ok(services.includes("tcp:db.test:5432"));
  assert.ok(!services.includes(hook.split("/").pop()!), "no hook key in the export");

  const actors = await t.req("GET", "/api/actors", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(actors.status, 200);
  const me = (actors.body.items ?? actors.body.actors ?? []).find((
    a: { id: number },
  ) => a.id === account.id);
  assert.equal(me.counts.services, 2);

  const erased = await t.req("DELETE", "/api/me", { token });
  assert.equal(erased.status, 200, erased.text);
  assert.equal((await t.req("GET", hook)).status, 404);
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes("db.test"), "no service of the erased account is left");
  assert.ok(!dump.includes('"fine"'), "no beat is left");
  assert.ok(!dump.includes(`["service_count",${account.id}]`));
  assert.equal(
    (await t.req("GET", "/api/me/services", { token: keep.token })).body.items.length,
    1,
  );
});
