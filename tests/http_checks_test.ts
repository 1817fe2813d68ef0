import assert from "node:assert/strict";
import { systemConnector, systemTls } from "../lib/net.ts";
import { fakeResolver, testApp } from "./_helpers.ts";
import { localHttp, makeCerts } from "./_servers.ts";
import { MINUTELY, runJobs } from "../jobs/mod.ts";

/**
 * Address checks with options (lib/checks/http_options.ts, lib/checks/url.ts) against a local
 * target on 127.0.0.1: every assertion passing and failing, with the result's plain words, and
 * the target rules kept for every option.
 */

const target = async (req: Request) => {
  const path = new URL(req.url).pathname;
  if (path === "/ok") return new Response("status: OK, all good");
  if (path === "/error-page") return new Response("<p>ERROR: database down</p>");
  if (path === "/json") return Response.json({ status: "up", count: 3, items: [{ id: 7 }] });
  if (path === "/json-down") return Response.json({ status: "down", count: 0 });
  if (path === "/fail") return new Response("broken", { status: 503 });
  if (path === "/missing") return new Response("nothing here", { status: 404 });
  if (path === "/slow") {
    await new Promise((r) => setTimeout(r, 300));
    return new Response("late OK");
  }
  if (path === "/redirect") {
    return new Response(null, { status: 302, headers: { location: "/ok" } });
  }
  if (path === "/echo") {
    return Response.json({
      method: req.method,
      token: req.headers.get("x-token"),
      agent: req.headers.get("user-agent"),
      body: await req.text(),
    });
  }
  return new Response("no", { status: 404 });
};

async function setUp() {
  const srv = localHttp(target);
  const t = await testApp({ connector: systemConnector });
  const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
  const base = `url:http://127.0.0.1:${srv.port}`;
  const check = async (path: string, http: Record<string, unknown>) => {
    const r = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Probe", check: `${base}${path}`, http },
    });
    assert.equal(r.status, 200, r.text);
    return r.body.item as { id: number; state: string; status: string; http: unknown };
  };
  return {
    t,
    token,
    base,
    check,
    async [Symbol.asyncDispose]() {
      await t[Symbol.asyncDispose]();
      await srv.close();
    },
  };
}

Deno.test("http checks: accepted status codes as Kuma writes them", async () => {
  await using s = await setUp();
  const off = await s.check("/fail", { accepted: ["200-299"] });
  assert.equal(off.state, "off");
  assert.equal(off.status, "status 503, expected 200-299");
  const ok = await s.check("/missing", { accepted: ["200-299", "404"] });
  assert.equal(ok.state, "ok", ok.status);
  assert.match(ok.status, /^HTTP 404 in \d+ ms$/);
  assert.deepEqual(ok.http, { accepted: ["200-299", "404"] });
  // Without accepted codes, the default rule: 4xx warns.
  assert.equal((await s.check("/missing", {})).state, "warn");
});

Deno.test("http checks: a keyword present or absent, case-sensitive or not", async () => {
  await using s = await setUp();
  const ok = await s.check("/ok", { keyword: "OK" });
  assert.equal(ok.state, "ok", ok.status);
  const missing = await s.check("/ok", { keyword: "ok" });
  assert.equal(missing.state, "off");
  assert.equal(missing.status, "the body does not contain 'ok' (HTTP 200)");
  const anyCase = await s.check("/ok", { keyword: "ok", keyword_case: false });
  assert.equal(anyCase.state, "ok", anyCase.status);
  const absent = await s.check("/ok", { keyword: "ERROR", keyword_absent: true });
  assert.equal(absent.state, "ok", absent.status);
  const present = await s.check("/error-page", { keyword: "ERROR", keyword_absent: true });
  assert.equal(present.state, "off");
  assert.equal(present.status, "the body contains 'ERROR' (HTTP 200)");
});

Deno.test("http checks: a JSON query with an expected value (Kuma's json-query)", async () => {
  await using s = await setUp();
  const up = await s.check("/json", { json_query: "status", json_expected: "up" });
  assert.equal(up.state, "ok", up.status);
  const down = await s.check("/json-down", { json_query: "status", json_expected: "up" });
  assert.equal(down.state, "off");
  assert.equal(down.status, "status is 'down', expected 'up' (HTTP 200)");
  const more = await s.check("/json", {
    json_query: "count",
    json_operator: ">",
    json_expected: "2",
  });
  assert.equal(more.state, "ok", more.status);
  const less = await s.check("/json", {
    json_query: "count",
    json_operator: ">",
    json_expected: "5",
  });
  assert.equal(less.status, "count is '3', expected above '5' (HTTP 200)");
  const deep = await s.check("/json", { json_query: "items[0].id", json_expected: "7" });
  assert.equal(deep.state, "ok", deep.status);
  const none = await s.check("/json", { json_query: "nothing.here", json_expected: "x" });
  assert.equal(none.status, "the JSON query found nothing (HTTP 200)");
  const text = await s.check("/ok", { json_query: "status", json_expected: "up" });
  assert.equal(text.status, "the body is not JSON (HTTP 200)");
});

Deno.test("http checks: a response-time limit warns above it", async () => {
  await using s = await setUp();
  const slow = await s.check("/slow", { max_ms: 100 });
  assert.equal(slow.state, "warn");
  assert.match(slow.status, /^HTTP 200 in \d+ ms, slower than the 100 ms limit$/);
  const fast = await s.check("/slow", { max_ms: 5000 });
  assert.equal(fast.state, "ok", fast.status);
});

Deno.test("http checks: redirects followed or not, and their number", async () => {
  await using s = await setUp();
  const followed = await s.check("/redirect", { accepted: ["200-299"] });
  assert.equal(followed.state, "ok", followed.status);
  assert.match(followed.status, /after 1 redirect/);
  const kept = await s.check("/redirect", { follow_redirects: false, accepted: ["200-299"] });
  assert.equal(kept.state, "off");
  assert.equal(kept.status, "status 302, expected 200-299");
  assert.equal((await s.check("/redirect", { follow_redirects: false })).state, "ok");
  const none = await s.check("/redirect", { max_redirects: 0 });
  assert.equal(none.state, "off");
  assert.equal(none.status, "more than 0 redirects");
});

Deno.test("http checks: method, headers and body are sent as set", async () => {
  await using s = await setUp();
  const http = {
    method: "POST",
    headers: { "X-Token": "abc", "User-Agent": "my-monitor/2" },
    body: "hello",
    json_query: 'method & " " & token & " " & agent & " " & body',
    json_expected: "POST abc my-monitor/2 hello",
  };
  const sent = await s.check("/echo", http);
  assert.equal(sent.state, "ok", sent.status);
  const wrong = await s.check("/echo", { ...http, json_expected: "GET abc my-monitor/2 hello" });
  assert.equal(wrong.state, "off");
  // The runner's checks send the same.
  const r = await s.t.req("POST", `/api/me/services/${sent.id}/check`, { token: s.token });
  assert.equal(r.body.item.state, "ok", r.body.item.status);
});

Deno.test("http checks: every target rule holds for every option; refusals name the option", async () => {
  await using s = await setUp();
  const refused = async (
    check: string,
    http: Record<string, unknown>,
    field: string,
    words: RegExp,
  ) => {
    const r = await s.t.req("POST", "/api/me/services", {
      token: s.token,
      body: { name: "Probe", check, http },
    });
    assert.equal(r.status, 400, JSON.stringify(http));
    assert.equal(r.body.field, field, r.text);
    assert.match(r.body.error, words);
  };
  const url = `${s.base}/ok`;
  await refused(
    url,
    { headers: { Host: "internal.lan" } },
    "http.headers",
    /Host is set by the check itself/,
  );
  await refused(
    url,
    { headers: { "x-forwarded-host": "internal" } },
    "http.headers",
    /set by the check/,
  );
  await refused(
    url,
    { headers: { Authorization: "Basic eDp5" } },
    "http.headers",
    /checks keep no credentials/,
  );
  await refused(
    url,
    { headers: { "X-A": "one\r\nHost: evil" } },
    "http.headers",
    /must be one line/,
  );
  await refused(url, { headers: { "Bad Name": "x" } }, "http.headers", /is not a header name/);
  await refused(url, { method: "GET", body: "x" }, "http.body", /a GET request has no body/);
  await refused(url, { accepted: ["2xx"] }, "http.accepted", /not a status code or range/);
  await refused(
    url,
    { keyword: "a", json_query: "b", json_expected: "c" },
    "http.json_query",
    /not both/,
  );
  await refused(
    url,
    { json_query: "status" },
    "http.json_expected",
    /the value the query must give/,
  );
  await refused(
    url,
    { json_query: "((", json_expected: "x" },
    "http.json_query",
    /not a JSONata query/,
  );
  await refused(url, { method: "HEAD", keyword: "OK" }, "http.method", /HEAD answer has no body/);
  await refused("tcp:127.0.0.1:22", { method: "POST" }, "http", /only an address check/);
  const unknown = await s.t.req("POST", "/api/me/services", {
    token: s.token,
    body: { name: "Probe", check: url, http: { proxy: "x" } },
  });
  assert.equal(unknown.status, 400);
  assert.equal((await s.t.req("GET", "/api/me/services", { token: s.token })).body.items.length, 0);
});

Deno.test("http checks: PATCH sets, changes and clears the options", async () => {
  await using s = await setUp();
  const item = await s.check("/ok", { keyword: "OK" });
  const patched = await s.t.req("PATCH", `/api/me/services/${item.id}`, {
    token: s.token,
    body: { http: { keyword: "nope" } },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(patched.body.item.http, { keyword: "nope" });
  const now = await s.t.req("POST", `/api/me/services/${item.id}/check`, { token: s.token });
  assert.equal(now.body.item.status, "the body does not contain 'nope' (HTTP 200)");
  const cleared = await s.t.req("PATCH", `/api/me/services/${item.id}`, {
    token: s.token,
    body: { http: null },
  });
  assert.equal(cleared.body.item.http, null);
  const bad = await s.t.req("PATCH", `/api/me/services/${item.id}`, {
    token: s.token,
    body: { http: { headers: { Cookie: "a=b" } } },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "http.headers");
});

Deno.test("http checks: certificate expiry days warn on an https address", async () => {
  const soon = await makeCerts(["svc.test"], 10);
  const srv = localHttp(() => new Response("fine"), soon);
  try {
    await using t = await testApp({
      connector: systemConnector,
      resolver: fakeResolver({ "svc.test": ["127.0.0.1"] }),
      tls: systemTls([soon.ca]),
    });
    t.clock.set(Date.now());
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const add = async (days: number) =>
      (await t.req("POST", "/api/me/services", {
        token,
        body: {
          name: "Site",
          check: `url:https://svc.test:${srv.port}/`,
          http: { cert_expiry_days: days },
        },
      })).body.item;
    const warn = await add(14);
    assert.equal(warn.state, "warn");
    assert.match(warn.status, /the certificate expires in (9|10) days \(warning at 14\)$/);
    const ok = await add(5);
    assert.equal(ok.state, "ok", ok.status);
  } finally {
    await srv.close();
  }
});

Deno.test("http checks: a Kuma export's keyword and json-query monitors import into working checks", async () => {
  await using s = await setUp();
  const url = s.base.slice("url:".length);
  const monitor = (over: Record<string, unknown>) => ({
    id: 1,
    name: "M",
    type: "http",
    url: `${url}/ok`,
    method: "GET",
    interval: 60,
    maxretries: 0,
    active: true,
    keyword: null,
    invertKeyword: false,
    jsonPath: null,
    jsonPathOperator: "==",
    expectedValue: null,
    accepted_statuscodes: ["200-299"],
    maxredirects: 10,
    timeout: 48,
    headers: null,
    body: null,
    ...over,
  });
  const data = {
    version: "2.0.0",
    notificationList: [],
    monitorList: [
      monitor({ id: 1, name: "Shop", type: "keyword", keyword: "OK" }),
      monitor({ id: 2, name: "Shop gone", type: "keyword", keyword: "Add to cart" }),
      monitor({
        id: 3,
        name: "Errors",
        type: "keyword",
        url: `${url}/error-page`,
        keyword: "ERROR",
        invertKeyword: true,
      }),
      monitor({
        id: 4,
        name: "API",
        type: "json-query",
        url: `${url}/json`,
        jsonPath: "status",
        expectedValue: "up",
      }),
      monitor({
        id: 5,
        name: "API down",
        type: "json-query",
        url: `${url}/json-down`,
        jsonPath: "status",
        expectedValue: "up",
      }),
      monitor({
        id: 6,
        name: "Echo",
        type: "json-query",
        url: `${url}/echo`,
        method: "POST",
        headers: JSON.stringify({ "X-Token": "abc", Authorization: "Bearer s3cret" }),
        body: "hello",
        jsonPath: "method & token & body",
        expectedValue: "POSTabchello",
      }),
    ],
  };
  const plan = await s.t.req("POST", "/api/me/import", {
    token: s.token,
    body: { data, dry_run: true },
  });
  assert.equal(plan.status, 200, plan.text);
  const echo = plan.body.create.find((p: { name: string }) => p.name === "Echo");
  assert.ok(
    echo.notes.some((n: string) => /header Authorization not kept: .*no credentials/.test(n)),
    echo.notes.join(),
  );
  assert.ok(
    plan.body.create[0].notes.includes(
      "period 1 min became 5 min (checks run every 5 minutes at most)",
    ),
  );
  assert.ok(
    plan.body.create[0].notes.includes("timeout 48 s became 10 s (every check's limit here)"),
  );
  const done = await s.t.req("POST", "/api/me/import", { token: s.token, body: { data } });
  assert.equal(done.status, 200, done.text);
  const items = (await s.t.req("GET", "/api/me/services", { token: s.token })).body.items;
  const results: Record<string, [string, string]> = {};
  for (const item of items) {
    const r = await s.t.req("POST", `/api/me/services/${item.id}/check`, { token: s.token });
    results[item.name] = [r.body.item.state, r.body.item.status];
  }
  assert.equal(results["Shop"][0], "ok", results["Shop"][1]);
  assert.deepEqual(results["Shop gone"], [
    "off",
    "the body does not contain 'Add to cart' (HTTP 200)",
  ]);
  assert.deepEqual(results["Errors"], ["off", "the body contains 'ERROR' (HTTP 200)"]);
  assert.equal(results["API"][0], "ok", results["API"][1]);
  assert.deepEqual(results["API down"], ["off", "status is 'down', expected 'up' (HTTP 200)"]);
  assert.equal(results["Echo"][0], "ok", results["Echo"][1]);
  const shop = items.find((i: { name: string }) => i.name === "Shop");
  assert.deepEqual(shop.http, { accepted: ["200-299"], keyword: "OK" });
});

Deno.test("pause and resume for every kind: a paused check is not run, and resumes at the next run", async () => {
  let hits = 0;
  const srv = localHttp(() => {
    hits++;
    return new Response("fine");
  });
  try {
    await using t = await testApp({ connector: systemConnector });
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const made = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Site", check: `url:http://127.0.0.1:${srv.port}/`, interval: 5 },
    });
    assert.equal(made.status, 200, made.text);
    const id = made.body.item.id;
    assert.equal(hits, 1, "the first check at creation");
    const paused = await t.req("PATCH", `/api/me/services/${id}`, {
      token,
      body: { paused: true },
    });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.item.paused, true);
    assert.equal(paused.body.item.state, "wait");
    assert.match(paused.body.item.status, /^paused since /);
    // An hour of runs: not one check.
    for (let i = 0; i < 12; i++) {
      t.clock.advance(5 * 60_000);
      await runJobs(t.deps, MINUTELY);
    }
    assert.equal(hits, 1, "a paused check is not run");
    const now = await t.req("POST", `/api/me/services/${id}/check`, { token });
    assert.equal(now.status, 409);
    assert.equal(now.body.error, "the service is paused: resume it to check it");
    assert.equal(hits, 1);
    // The page's one button.
    const page = await t.req("GET", `/me/services/${id}`, {
      headers: { cookie: `session=${token}` },
    });
    assert.match(page.text, /Resume checks/);
    const resumed = await t.req("PATCH", `/api/me/services/${id}`, {
      token,
      body: { paused: false },
    });
    assert.equal(resumed.body.item.paused, false);
    await runJobs(t.deps, MINUTELY);
    assert.equal(hits, 2, "checked at the next run after the resume");
    const item = (await t.req("GET", "/api/me/services", { token })).body.items[0];
    assert.equal(item.state, "ok", item.status);
    // tcp and tls too.
    const tcp = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Port", check: `tcp:127.0.0.1:${srv.port}` },
    });
    const p2 = await t.req("PATCH", `/api/me/services/${tcp.body.item.id}`, {
      token,
      body: { paused: true },
    });
    assert.equal(p2.status, 200, p2.text);
    assert.equal(p2.body.item.paused, true);
  } finally {
    await srv.close();
  }
});

Deno.test("http checks: the service form's fieldset sets the options; a refusal stands beside its field", async () => {
  await using s = await setUp();
  const cookie = `session=${s.token}`;
  const post = (path: string, fields: Record<string, string>) =>
    s.t.req("POST", path, {
      raw: new URLSearchParams(fields).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "http://localhost",
        cookie,
      },
    });
  const url = s.base.slice("url:".length);
  const base = {
    kind: "url",
    name: "Shop",
    check: `${url}/ok`,
    group: "Public",
    interval: "5",
    threshold: "1",
  };
  const page = await s.t.req("GET", "/me/services/new?kind=url", { headers: { cookie } });
  assert.match(page.text, /Request and answer \(optional\)/);
  assert.match(page.text, /Accepted status codes/);
  const bad = await post("/me/services", {
    ...base,
    "http.headers": "Host: internal.lan",
    "http.keyword": "OK",
  });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /id="f-http-headers-error">Host is set by the check itself/);
  assert.match(bad.text, /value="OK"/, "what was typed is kept");
  const made = await post("/me/services", {
    ...base,
    "http.accepted": "200-299, 404",
    "http.keyword": "OK",
    "http.headers": "Accept: text/plain",
  });
  assert.equal(made.status, 303, made.text);
  const item = (await s.t.req("GET", "/api/me/services", { token: s.token })).body.items[0];
  assert.deepEqual(item.http, {
    headers: { Accept: "text/plain" },
    accepted: ["200-299", "404"],
    keyword: "OK",
  });
  assert.equal(item.state, "ok", item.status);
  const edit = await s.t.req("GET", `/me/services/${item.id}`, { headers: { cookie } });
  assert.match(edit.text, /value="200-299, 404"/);
});
