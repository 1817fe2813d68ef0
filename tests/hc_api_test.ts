import assert from "node:assert/strict";
import { HOUR, MINUTE } from "../lib/clock.ts";
import { fakeResolver, type Res, type TestApp, testApp } from "./_helpers.ts";
import { uniqueKey } from "../kv/service/hc_checks.ts";
import { MINUTELY, runJobs } from "../jobs/mod.ts";

/** Healthchecks' Management API (api/hc.ts) and its keys (/api/me/api-keys), app-level. */

async function keys(t: TestApp, email: string) {
  const { token, account } = await t.account(email, { name: "Keeper" });
  const make = async (readonly: boolean) => {
    const r = await t.req("POST", "/api/me/api-keys", { token, body: { name: "ci", readonly } });
    assert.equal(r.status, 201, r.text);
    return r.body.key as string;
  };
  return { token, account, rw: await make(false), ro: await make(true) };
}

const hc = (t: TestApp, method: string, path: string, key?: string, body?: unknown) =>
  t.req(method, path, {
    headers: key === undefined ? {} : { "X-Api-Key": key },
    // `--data ""` of the documented curl lines: an empty body.
    ...(body === undefined ? {} : { raw: body === "" ? "" : JSON.stringify(body) }),
  });

const ok = (r: Res, status = 200) => assert.equal(r.status, status, r.text);

Deno.test("API keys: 32 characters, shown once, stored as a hash, listed without the key, revoked at once", async () => {
  await using t = await testApp();
  const { token, rw, ro } = await keys(t, "k@example.org");
  assert.match(rw, /^hcw_[A-Za-z0-9]{28}$/);
  assert.match(ro, /^hcr_[A-Za-z0-9]{28}$/);
  const list = await t.req("GET", "/api/me/api-keys", { token });
  ok(list);
  assert.equal(list.body.items.length, 2);
  assert.ok(!list.text.includes(rw.slice(4)), "the key is never shown again");
  assert.deepEqual(list.body.items.map((k: { readonly: boolean }) => k.readonly), [false, true]);
  // Nothing in KV holds the key itself.
  for await (const e of t.kv.list({ prefix: [] })) {
    assert.ok(!JSON.stringify(e, (_k, v) => typeof v === "bigint" ? String(v) : v).includes(rw));
  }
  ok(await hc(t, "GET", "/api/v3/checks/", rw));
  const id = list.body.items[0].id;
  ok(await t.req("DELETE", `/api/me/api-keys/${id}`, { token }));
  const after = await hc(t, "GET", "/api/v3/checks/", rw);
  assert.equal(after.status, 401);
  assert.deepEqual(after.body, { error: "wrong api key" });
  assert.equal((await t.req("DELETE", `/api/me/api-keys/${id}`, { token })).status, 404);
  assert.equal((await t.req("GET", "/api/me/api-keys")).status, 401);
  const bad = await t.req("POST", "/api/me/api-keys", { token, body: { readonly: "yes" } });
  assert.equal(bad.status, 400);
});

Deno.test("keys: missing (401), wrong (401), read-only refused on writes (401), api_key in the body", async () => {
  await using t = await testApp();
  const { rw, ro } = await keys(t, "a@example.org");
  const none = await hc(t, "GET", "/api/v3/checks/");
  assert.equal(none.status, 401);
  assert.deepEqual(none.body, { error: "missing api key" });
  assert.deepEqual((await hc(t, "GET", "/api/v3/checks/", "short")).body, {
    error: "missing api key",
  });
  const wrong = await hc(t, "GET", "/api/v3/checks/", "hcw_" + "X".repeat(28));
  assert.equal(wrong.status, 401);
  assert.deepEqual(wrong.body, { error: "wrong api key" });
  const roWrite = await hc(t, "POST", "/api/v3/checks/", ro, { name: "x" });
  assert.equal(roWrite.status, 401);
  assert.deepEqual(roWrite.body, { error: "wrong api key" });
  // A read-only key in the body of a read: reads take the header only.
  assert.equal((await hc(t, "GET", "/api/v3/channels/", ro)).status, 401);
  // The documented alternative: api_key in the JSON body, with curl's form content type.
  const made = await t.req("POST", "/api/v3/checks/", {
    raw: JSON.stringify({
      api_key: rw,
      name: "Backups",
      tags: "prod www",
      timeout: 3600,
      grace: 60,
    }),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  ok(made, 201);
  assert.equal(made.body.name, "Backups");
  assert.equal(made.body.tags, "prod www");
  assert.equal(made.body.timeout, 3600);
  assert.equal(made.body.grace, 60);
  const junk = await t.req("POST", "/api/v3/checks/", {
    raw: "{nope",
    headers: { "X-Api-Key": rw },
  });
  assert.equal(junk.status, 400);
  assert.deepEqual(junk.body, { error: "could not parse request body" });
  const arr = await t.req("POST", "/api/v3/checks/", { raw: "[1]", headers: { "X-Api-Key": rw } });
  assert.deepEqual(arr.body, { error: "json validation error: value is not an object" });
});

Deno.test("create, get, list, update: fields, defaults, read-only view, tags and slug filters", async () => {
  await using t = await testApp();
  const { rw, ro, token } = await keys(t, "b@example.org");
  const made = await hc(t, "POST", "/api/v3/checks/", rw, {});
  ok(made, 201);
  const c = made.body;
  assert.match(c.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(
    { ...c, uuid: "U", ping_url: "P", update_url: "X", pause_url: "X", resume_url: "X" },
    {
      name: "",
      slug: "",
      tags: "",
      desc: "",
      grace: 3600,
      n_pings: 0,
      status: "new",
      started: false,
      last_ping: null,
      next_ping: null,
      manual_resume: false,
      methods: "",
      subject: "",
      subject_fail: "",
      start_kw: "",
      success_kw: "",
      failure_kw: "",
      filter_subject: false,
      filter_body: false,
      filter_http_body: false,
      filter_default_fail: false,
      badge_url: "",
      uuid: "U",
      ping_url: "P",
      update_url: "X",
      pause_url: "X",
      resume_url: "X",
      channels: "",
      timeout: 86400,
    },
  );
  assert.equal(c.update_url, `http://test.local/api/v3/checks/${c.uuid}`);
  assert.equal(c.pause_url, `${c.update_url}/pause`);
  assert.equal(c.resume_url, `${c.update_url}/resume`);
  assert.equal(c.ping_url, `http://test.local/ping/${c.uuid}`);
  // v1 answers its own urls.
  const v1 = await hc(t, "GET", `/api/v1/checks/${c.uuid}`, rw);
  ok(v1);
  assert.equal(v1.body.update_url, `http://test.local/api/v1/checks/${c.uuid}`);

  const cron = await hc(t, "POST", "/api/v3/checks/", rw, {
    name: "Nightly",
    tags: "db prod",
    desc: "Runs ~/db-backup.sh",
    schedule: "15 5 * * *",
    tz: "Europe/Riga",
    grace: 1200,
  });
  ok(cron, 201);
  assert.equal(cron.body.schedule, "15 5 * * *");
  assert.equal(cron.body.tz, "Europe/Riga");
  assert.equal(cron.body.grace, 1200);
  assert.equal(cron.body.timeout, undefined);
  assert.equal(cron.body.desc, "Runs ~/db-backup.sh");

  const all = await hc(t, "GET", "/api/v3/checks/", rw);
  ok(all);
  assert.equal(all.headers.get("access-control-allow-origin"), "*");
  assert.equal(all.body.checks.length, 2);
  const tagged = await hc(t, "GET", "/api/v3/checks/?tag=db&tag=prod", rw);
  assert.deepEqual(tagged.body.checks.map((x: { name: string }) => x.name), ["Nightly"]);
  assert.equal((await hc(t, "GET", "/api/v3/checks/?tag=pro", rw)).body.checks.length, 0);
  assert.equal((await hc(t, "GET", "/api/v3/checks/?tag=nope", rw)).body.checks.length, 0);
  assert.equal((await hc(t, "GET", "/api/v3/checks/?slug=backups", rw)).body.checks.length, 0);

  // Read-only: no uuid, urls or channels; unique_key instead, usable to get the check.
  const rol = await hc(t, "GET", "/api/v3/checks/", ro);
  ok(rol);
  for (const x of rol.body.checks) {
    for (const f of ["uuid", "ping_url", "update_url", "pause_url", "resume_url", "channels"]) {
      assert.equal(x[f], undefined, f);
    }
    assert.match(x.unique_key, /^[0-9a-f]{40}$/);
  }
  const key = uniqueKey(cron.body.uuid);
  const byKey = await hc(t, "GET", `/api/v3/checks/${key}`, ro);
  ok(byKey);
  assert.equal(byKey.body.name, "Nightly");
  assert.equal(byKey.body.unique_key, key);
  assert.equal((await hc(t, "POST", `/api/v3/checks/${key}`, rw, {})).status, 405);

  // Update: only what is sent changes.
  const up = await hc(t, "POST", `/api/v3/checks/${c.uuid}`, rw, {
    name: "Backups",
    tags: "prod www",
    timeout: 3600,
    grace: 60,
  });
  ok(up);
  assert.equal(up.body.name, "Backups");
  assert.equal(up.body.timeout, 3600);
  assert.equal(up.body.grace, 60);
  const again = await hc(t, "POST", `/api/v3/checks/${c.uuid}`, rw, { desc: "hourly" });
  assert.equal(again.body.name, "Backups");
  assert.equal(again.body.tags, "prod www");
  assert.equal(again.body.desc, "hourly");
  // A cron check goes back to a timeout.
  const simple = await hc(t, "POST", `/api/v3/checks/${cron.body.uuid}`, rw, { timeout: 300 });
  ok(simple);
  assert.equal(simple.body.timeout, 300);
  assert.equal(simple.body.schedule, undefined);
  assert.equal(simple.body.grace, 1200);

  // The same service on the native API: tags, uuid, the grace of its interval.
  const native = await t.req("GET", "/api/me/services", { token });
  const item = native.body.items.find((i: { uuid: string }) => i.uuid === c.uuid);
  assert.deepEqual(item.tags, ["prod", "www"]);
  assert.equal(item.interval, 60);
  assert.equal(item.grace, 1);
  assert.equal(item.name, "Backups");
});

Deno.test("validation: Healthchecks' words and statuses", async () => {
  await using t = await testApp();
  const { rw } = await keys(t, "c@example.org");
  const cases: [unknown, string][] = [
    [{ name: 5 }, "json validation error: name is not a string"],
    [{ name: null }, "json validation error: name is not a string"],
    [{ name: "x".repeat(101) }, "json validation error: name is too long"],
    [{ timeout: 59 }, "json validation error: timeout is too small"],
    [{ timeout: 31536001 }, "json validation error: timeout is too large"],
    [{ timeout: "3600" }, "json validation error: timeout is not a number"],
    [{ grace: 30 }, "json validation error: grace is too small"],
    [{ manual_resume: "yes" }, "json validation error: manual_resume is not a boolean"],
    [{ methods: "GET" }, "json validation error: methods has unexpected value"],
    [{ unique: "name" }, "json validation error: unique is not an array"],
    [{ unique: ["id"] }, "json validation error: an item in 'unique' has unexpected value"],
    [{ slug: "Foo" }, "json validation error: slug does not match pattern"],
    [{ tz: "Mars/Base" }, "json validation error: tz is not a valid timezone"],
    [
      { schedule: "61 * * * *" },
      "json validation error: schedule is not a valid cron or OnCalendar expression",
    ],
    [{ channels: "abc" }, "invalid channel identifier: abc"],
    [{ channels: "," }, "empty channel identifier"],
    [{ filter_http_body: true }, "json validation error: filter_http_body is not supported here"],
  ];
  for (const [body, error] of cases) {
    const r = await hc(t, "POST", "/api/v3/checks/", rw, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(r.body, { error }, JSON.stringify(body));
  }
  assert.equal((await hc(t, "GET", "/api/v3/checks/", rw)).body.checks.length, 0, "nothing stored");
});

Deno.test("unique upsert (200 vs 201), channels by id, name and *, another account's check 404", async () => {
  await using t = await testApp({
    resolver: fakeResolver({ "hooks.example.org": ["93.184.216.34"] }),
  });
  const { token, rw } = await keys(t, "d@example.org");
  for (const name of ["Alpha", "Beta"]) {
    const ch = await t.req("POST", "/api/me/channels", {
      token,
      body: { name, url: "https://hooks.example.org/x" },
    });
    assert.equal(ch.status, 200, ch.text);
  }
  const chans = await hc(t, "GET", "/api/v3/channels/", rw);
  ok(chans);
  assert.equal(chans.body.channels.length, 2);
  assert.deepEqual(Object.keys(chans.body.channels[0]).sort(), ["id", "kind", "name"]);
  const [a, b] = chans.body.channels;

  const first = await hc(t, "POST", "/api/v3/checks/", rw, {
    name: "Backups",
    unique: ["name"],
    channels: "*",
  });
  ok(first, 201);
  assert.equal(first.body.channels, [a.id, b.id].sort().join(","));
  const second = await hc(t, "POST", "/api/v3/checks/", rw, {
    name: "Backups",
    unique: ["name"],
    tags: "x",
    channels: "Beta",
  });
  ok(second, 200);
  assert.equal(second.body.uuid, first.body.uuid);
  assert.equal(second.body.tags, "x");
  assert.equal(second.body.channels, b.id);
  const byId = await hc(t, "POST", `/api/v3/checks/${first.body.uuid}`, rw, { channels: a.id });
  assert.equal(byId.body.channels, a.id);
  const none = await hc(t, "POST", `/api/v3/checks/${first.body.uuid}`, rw, { channels: "" });
  assert.equal(none.body.channels, "");
  // A unique field absent from the request: a new check.
  ok(await hc(t, "POST", "/api/v3/checks/", rw, { unique: ["name"] }), 201);
  const tg = await hc(t, "POST", "/api/v3/checks/", rw, { tags: "x", unique: ["tags"] });
  ok(tg, 200);
  assert.equal(tg.body.uuid, first.body.uuid);

  const other = await keys(t, "e@example.org");
  const uuid = first.body.uuid;
  for (
    const [method, path] of [
      ["GET", `/api/v3/checks/${uuid}`],
      ["POST", `/api/v3/checks/${uuid}`],
      ["DELETE", `/api/v3/checks/${uuid}`],
      ["POST", `/api/v3/checks/${uuid}/pause`],
      ["POST", `/api/v3/checks/${uuid}/resume`],
      ["GET", `/api/v3/checks/${uuid}/pings/`],
      ["GET", `/api/v3/checks/${uuid}/flips/`],
      ["GET", `/api/v3/checks/${uniqueKey(uuid)}`],
    ]
  ) {
    const r = await hc(t, method, path, other.rw, method === "POST" ? {} : undefined);
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.deepEqual(r.body, { error: "not found" });
  }
  assert.equal((await hc(t, "GET", "/api/v3/checks/", other.rw)).body.checks.length, 0);
  assert.equal((await hc(t, "GET", "/api/v3/checks/not-a-uuid", rw)).status, 404);
});

Deno.test("pause, resume (409 when not paused), pings, body, flips, delete, CORS, wrong methods", async () => {
  await using t = await testApp();
  const { rw, ro, token } = await keys(t, "f@example.org");
  // A native heartbeat is a Healthchecks check too.
  const native = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Native job", check: "webhook:", interval: 5 },
  });
  ok(native);
  const uuid = native.body.item.uuid;
  const hook = native.body.hook_url.replace("http://test.local", "");
  const got = await hc(t, "GET", `/api/v3/checks/${uuid}`, rw);
  ok(got);
  assert.equal(got.body.timeout, 300);
  assert.equal(got.body.grace, 300);
  assert.equal(got.body.manual_resume, true);

  ok(await t.req("POST", `${hook}/start?rid=1b9d0386-d07e-44b0-8995-4a9a372de43c`));
  t.clock.advance(2500);
  const running = await hc(t, "GET", `/api/v3/checks/${uuid}`, rw);
  assert.equal(running.body.status, "new");
  assert.equal(running.body.started, true);
  assert.equal((await hc(t, "GET", `/api/v1/checks/${uuid}`, rw)).body.status, "started");
  ok(await t.req("POST", `${hook}?rid=1b9d0386-d07e-44b0-8995-4a9a372de43c`, { raw: "all done" }));
  const up = await hc(t, "GET", `/api/v3/checks/${uuid}`, rw);
  assert.equal(up.body.status, "up");
  assert.equal(up.body.started, false);
  assert.equal(up.body.n_pings, 2);
  assert.equal(up.body.last_duration, 2);
  assert.equal(up.body.last_ping, new Date(t.clock.now()).toISOString().slice(0, 19) + "+00:00");
  const nextPing = new Date(t.clock.now() + 5 * MINUTE).toISOString().slice(0, 19) + "+00:00";
  assert.equal(up.body.next_ping, nextPing);
  t.clock.advance(6 * MINUTE);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}`, rw)).body.status, "grace");
  t.clock.advance(5 * MINUTE);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}`, rw)).body.status, "down");

  const pings = await hc(t, "GET", `/api/v3/checks/${uuid}/pings/`, rw);
  ok(pings);
  assert.equal(pings.body.pings.length, 2);
  const [success, start] = pings.body.pings;
  assert.equal(success.type, "success");
  assert.equal(success.n, 2);
  assert.equal(success.duration, 2.5);
  assert.equal(success.rid, "1b9d0386-d07e-44b0-8995-4a9a372de43c");
  assert.equal(success.body_url, `http://test.local/api/v3/checks/${uuid}/pings/2/body`);
  assert.equal(start.type, "start");
  assert.equal(start.body_url, null);
  const body = await hc(t, "GET", `/api/v3/checks/${uuid}/pings/2/body`, rw);
  ok(body);
  assert.equal(body.text, "all done");
  assert.match(body.headers.get("content-type")!, /^text\/plain/);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}/pings/1/body`, rw)).status, 404);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}/pings/9/body`, rw)).status, 404);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}/pings/`, ro)).status, 401);

  const resume409 = await hc(t, "POST", `/api/v3/checks/${uuid}/resume`, rw);
  assert.equal(resume409.status, 409);
  assert.deepEqual(resume409.body, { error: "check is not paused" });
  const paused = await hc(t, "POST", `/api/v3/checks/${uuid}/pause`, rw, "");
  ok(paused);
  assert.equal(paused.body.status, "paused");
  ok(await hc(t, "POST", `/api/v3/checks/${uuid}/pause`, rw));
  const resumed = await hc(t, "POST", `/api/v3/checks/${uuid}/resume`, rw);
  ok(resumed);
  assert.notEqual(resumed.body.status, "paused");
  // The look after the resume counts the check up at once; Healthchecks reads it `new` (0)
  // until its next success, which is the up flip.
  await runJobs(t.deps, MINUTELY);
  const newestFlip = async () =>
    (await hc(t, "GET", `/api/v3/checks/${uuid}/flips/`, ro)).body.flips[0];
  assert.equal((await newestFlip()).up, 0);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}`, rw)).body.status, "new");
  t.clock.advance(90_000);
  ok(await t.req("POST", hook));
  const at = new Date(t.clock.now()).toISOString().slice(0, 19) + "+00:00";
  assert.deepEqual(await newestFlip(), { timestamp: at, up: 1 });

  const flips = await hc(t, "GET", `/api/v3/checks/${uuid}/flips/`, ro);
  ok(flips);
  assert.ok(Array.isArray(flips.body.flips));
  for (const f of flips.body.flips) {
    assert.match(f.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  }
  for (const q of ["?start=abc", "?start=-123", "?start=12345678901234567890", "?seconds=-1"]) {
    assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}/flips/${q}`, rw)).status, 400, q);
  }
  ok(await hc(t, "GET", `/api/v3/checks/${uuid}/flips/?seconds=3600`, rw));

  // CORS as Healthchecks sends it; OPTIONS 204; another method 405.
  const opt = await t.req("OPTIONS", "/api/v3/checks/");
  assert.equal(opt.status, 204);
  assert.equal(opt.headers.get("access-control-allow-headers"), "X-Api-Key");
  assert.equal(opt.headers.get("access-control-max-age"), "600");
  assert.match(opt.headers.get("access-control-allow-methods")!, /GET, POST, OPTIONS/);
  assert.equal((await hc(t, "PUT", "/api/v3/checks/", rw)).status, 405);
  assert.equal((await hc(t, "POST", `/api/v3/checks/${uuid}/pings/`, rw)).status, 405);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}/resume`, rw)).status, 405);
  const missing = await hc(t, "GET", `/api/v3/checks/${uuid}`);
  assert.equal(missing.headers.get("access-control-allow-origin"), "*");

  const status = await t.req("GET", "/api/v3/status/");
  ok(status);
  assert.equal(status.text, "OK");
  assert.ok("*" in (await hc(t, "GET", "/api/v3/badges/", ro)).body.badges);

  const del = await hc(t, "DELETE", `/api/v3/checks/${uuid}`, rw);
  ok(del);
  assert.equal(del.body.name, "Native job");
  assert.equal((await hc(t, "GET", `/api/v3/checks/${uuid}`, rw)).status, 404);
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 0);
});

Deno.test("limits: 100 calls a minute per account (429), the check limit (403), export and erasure", async () => {
  await using t = await testApp();
  const { rw, token } = await keys(t, "g@example.org");
  for (let i = 0; i < 30; i++) {
    ok(await hc(t, "POST", "/api/v3/checks/", rw, { name: `c${i}` }), 201);
  }
  const over = await hc(t, "POST", "/api/v3/checks/", rw, { name: "one more" });
  assert.equal(over.status, 403);
  let last = 0;
  for (let i = 0; i < 80; i++) last = (await hc(t, "GET", "/api/v3/channels/", rw)).status;
  assert.equal(last, 429);
  // Judged over the minute that ends now: at the next minute's start the 100 still count; a
  // second later one comes back.
  t.clock.advance(MINUTE);
  assert.equal((await hc(t, "GET", "/api/v3/channels/", rw)).status, 429);
  t.clock.advance(1000);
  ok(await hc(t, "GET", "/api/v3/channels/", rw));

  const exp = await t.req("GET", "/api/me/export", { token });
  ok(exp);
  assert.equal(exp.body.api_keys.length, 2);
  assert.equal(exp.body.api_keys[0].exists, true);
  assert.ok(!exp.text.includes(rw));
  t.clock.advance(HOUR);
});

const ORIGIN = "http://localhost";
const form = (fields: Record<string, string>, cookie: string) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
});

Deno.test("pages: API keys made (shown once after the redirect) and revoked; tags on the service form", async () => {
  await using t = await testApp();
  const { token } = await t.account("p@example.org", { name: "Pat" });
  const cookie = `session=${token}`;
  const empty = await t.req("GET", "/me/api-keys", { headers: { cookie } });
  ok(empty);
  assert.match(empty.text, /No API keys yet/);
  assert.match(empty.text, /http:\/\/test\.local\/api\/v3\//);
  const made = await t.req(
    "POST",
    "/me/api-keys",
    form({ name: "Terraform", readonly: "on" }, cookie),
  );
  assert.equal(made.status, 303);
  assert.equal(made.headers.get("location"), "/me/api-keys?shown=1");
  const shown = await t.req("GET", "/me/api-keys?shown=1", { headers: { cookie } });
  const key = shown.text.match(/value="(hcr_[A-Za-z0-9]{28})"/)?.[1];
  assert.ok(key, "the key is shown once");
  assert.match(shown.text, /Read-only/);
  ok(await hc(t, "GET", "/api/v3/checks/", key));
  const later = await t.req("GET", "/me/api-keys", { headers: { cookie } });
  assert.ok(!later.text.includes(key), "not on the page without the flash");
  const tooLong = await t.req("POST", "/me/api-keys", form({ name: "x".repeat(81) }, cookie));
  assert.equal(tooLong.status, 400);
  assert.match(tooLong.text, /aria-invalid="true"/);
  const id = (await t.req("GET", "/api/me/api-keys", { token })).body.items[0].id;
  const revoked = await t.req("POST", `/me/api-keys/${id}/revoke`, form({}, cookie));
  assert.equal(revoked.status, 303);
  assert.equal((await hc(t, "GET", "/api/v3/checks/", key)).status, 401);

  // Tags: asked on the add form, kept with the service, shown on its page, filtered by.
  const add = await t.req(
    "POST",
    "/me/services",
    form({
      name: "Nightly backup",
      kind: "webhook",
      check: "",
      group: "Jobs",
      interval: "1440",
      threshold: "1",
      alerts: "on",
      tags: "backup  prod",
    }, cookie),
  );
  assert.equal(add.status, 303, add.text);
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  assert.deepEqual(items[0].tags, ["backup", "prod"]);
  const page = await t.req("GET", `/me/services/${items[0].id}`, { headers: { cookie } });
  assert.match(page.text, /value="backup prod"/);
  // One section, with the ping addresses and the Management API's address.
  assert.equal(page.text.match(/Use with Healthchecks clients/g)?.length, 1);
  assert.match(page.text, /<dt>Management API<\/dt>/);
  assert.ok(page.text.includes(items[0].uuid));
  const bad = await t.req(
    "POST",
    `/me/services/${items[0].id}`,
    form({
      name: "Nightly backup",
      group: "Jobs",
      interval: "1440",
      threshold: "1",
      tags: "x".repeat(51),
    }, cookie),
  );
  assert.equal(bad.status, 400);
  assert.match(bad.text, /a tag has at most 50 characters/i);
  const rw = (await t.req("POST", "/api/me/api-keys", { token, body: {} })).body.key;
  const listed = await hc(t, "GET", "/api/v3/checks/?tag=prod", rw);
  assert.equal(listed.body.checks[0].tags, "backup prod");
  assert.equal(listed.body.checks[0].timeout, 86400);
  assert.equal(listed.body.checks[0].grace, 86400);
});

Deno.test("manual_resume: false resumes a paused check at its next success or failure; true ignores pings", async () => {
  await using t = await testApp();
  const { token, rw } = await keys(t, "mr@example.org");
  const make = async (name: string, manual?: boolean) => {
    const r = await hc(t, "POST", "/api/v3/checks/", rw, {
      name,
      slug: name.toLowerCase(),
      timeout: 3600,
      ...(manual === undefined ? {} : { manual_resume: manual }),
    });
    ok(r, 201);
    ok(await hc(t, "POST", `/api/v3/checks/${r.body.uuid}/pause`, rw, ""));
    return r.body.uuid as string;
  };
  const status = async (uuid: string) =>
    (await hc(t, "GET", `/api/v3/checks/${uuid}`, rw)).body.status;
  const ping = async (path: string) => assert.equal((await t.req("POST", path)).text, "OK");

  // The default, false: a start or a log leaves it paused; a success resumes it, up.
  const auto = await make("Auto");
  t.clock.advance(MINUTE);
  await ping(`/ping/${auto}/start`);
  await ping(`/ping/${auto}/log`);
  assert.equal(await status(auto), "paused");
  await ping(`/ping/${auto}`);
  assert.equal(await status(auto), "up");
  const item = (await t.req("GET", "/api/me/services", { token })).body.items
    .find((s: { uuid: string }) => s.uuid === auto);
  assert.equal(item.paused, false);
  // A failure resumes it too, down; through any of its addresses (here its slug).
  const failing = await make("Failing", false);
  const key = (await t.req("POST", "/api/me/ping-key", { token })).body.ping_key;
  await ping(`/ping/${key}/failing/fail`);
  assert.equal(await status(failing), "down");

  // true: pings are recorded, the check stays paused until resumed.
  const manual = await make("Manual", true);
  await ping(`/ping/${manual}`);
  await ping(`/ping/${manual}/1`);
  assert.equal(await status(manual), "paused");
  const pings = (await hc(t, "GET", `/api/v3/checks/${manual}/pings/`, rw)).body.pings;
  assert.equal(pings.length, 2);
  // Changed to false while paused: the next success resumes it.
  ok(await hc(t, "POST", `/api/v3/checks/${manual}`, rw, { manual_resume: false }));
  t.clock.advance(MINUTE);
  await ping(`/ping/${manual}`);
  assert.equal(await status(manual), "up");

  // A heartbeat made here (no such setting) stays paused, as before.
  const native = (await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Native", check: "webhook:", interval: 60 },
  })).body.item;
  ok(await t.req("PATCH", `/api/me/services/${native.id}`, { token, body: { paused: true } }));
  await ping(`/ping/${native.uuid}`);
  assert.equal(await status(native.uuid), "paused");
  assert.equal((await hc(t, "GET", `/api/v3/checks/${native.uuid}`, rw)).body.manual_resume, true);
});

Deno.test("slug and methods: v3 takes the slug as given, v1 and v2 make it from the name; ?slug=, unique slug", async () => {
  await using t = await testApp();
  const { token, rw } = await keys(t, "slug@example.org");
  const made = await hc(t, "POST", "/api/v3/checks/", rw, {
    name: "Nightly DB",
    slug: "nightly-db",
    methods: "POST",
  });
  ok(made, 201);
  assert.equal(made.body.slug, "nightly-db");
  assert.equal(made.body.methods, "POST");
  const bare = await hc(t, "POST", "/api/v3/checks/", rw, { name: "Bare" });
  assert.equal(bare.body.slug, "", "v3 makes no slug");
  const v1 = await hc(t, "POST", "/api/v1/checks/", rw, { name: "Log Rotate" });
  assert.equal(v1.body.slug, "log-rotate", "v1 makes it from the name");
  const bySlug = await hc(t, "GET", "/api/v3/checks/?slug=nightly-db", rw);
  assert.deepEqual(bySlug.body.checks.map((c: { name: string }) => c.name), ["Nightly DB"]);
  assert.deepEqual((await hc(t, "GET", "/api/v3/checks/?slug=none", rw)).body.checks, []);
  // unique: ["slug"] finds it: updated, 200.
  const again = await hc(t, "POST", "/api/v3/checks/", rw, {
    slug: "nightly-db",
    grace: 120,
    unique: ["slug"],
  });
  ok(again, 200);
  assert.equal(again.body.uuid, made.body.uuid);
  assert.equal(again.body.grace, 120);
  // Its slug address answers under the new slug after an update, and its methods hold.
  const renamed = await hc(t, "POST", `/api/v3/checks/${made.body.uuid}`, rw, {
    slug: "db-nightly",
    methods: "",
  });
  ok(renamed);
  assert.equal(renamed.body.slug, "db-nightly");
  assert.equal(renamed.body.methods, "");
  const key = (await t.req("POST", "/api/me/ping-key", { token })).body.ping_key;
  assert.equal((await t.req("GET", `/ping/${key}/db-nightly`)).text, "OK");
  assert.equal((await t.req("GET", `/ping/${key}/nightly-db`)).status, 404);
  const item = (await t.req("GET", "/api/me/services", { token })).body.items
    .find((s: { uuid: string }) => s.uuid === made.body.uuid);
  assert.deepEqual([item.slug, item.methods], ["db-nightly", ""]);
});
