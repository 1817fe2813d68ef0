import assert from "node:assert/strict";
import { type AreaName, builtAreas, mountEveryArea, prefixRoute, ROUTE_AREAS } from "../areas.ts";
import { JSON_BODY_LIMIT } from "../http/body.ts";
import { Hono } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import { dumpKv, expectLog, foreignAnswers, type TestApp, testApp } from "./_helpers.ts";

const JSON_CT = { "content-type": "application/json" };
const post = (t: TestApp, raw: BodyInit, headers: Record<string, string> = JSON_CT) =>
  t.req("POST", "/api/verify/request", { raw, headers, from: "192.0.2.200" });

// deno-lint-ignore no-explicit-any
function isError(r: { status: number; body: any }, status: number, what: string) {
  assert.equal(r.status, status, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
  assert.equal(typeof r.body?.error, "string", what);
  assert.ok(r.body.error.length > 0, what);
}

Deno.test("app: unknown paths under /api answer 404 {error}", async () => {
  await using t = await testApp();
  for (
    const p of [
      "/api/nope",
      "/api/me/nope",
      "/api/",
      "/api",
      "/api/healthz/x",
      "/api/%ff",
      "/api/..%2f..%2fetc",
    ]
  ) {
    isError(await t.req("GET", p), 404, p);
  }
  isError(await t.req("DELETE", "/api/no/such/thing"), 404, "DELETE");
  // Outside /api the answer is a page (web/_web.tsx).
  const page = await t.req("GET", "/nothing-here");
  assert.equal(page.status, 404);
  assert.match(page.headers.get("content-type") ?? "", /text\/html/);
});

Deno.test("app: a wrong method answers 405 with Allow", async () => {
  await using t = await testApp();
  const cases: [string, string, string[]][] = [
    ["POST", "/api/me", ["GET"]],
    ["PUT", "/api/healthz", ["GET", "HEAD"]],
    ["GET", "/api/verify/request", ["POST"]],
    ["PUT", "/api/me/devices/3", ["DELETE"]],
    ["POST", "/api/me/devices", ["GET", "DELETE"]],
    ["PATCH", "/api/audit/verify", ["GET"]],
    ["DELETE", "/api/openapi.json", ["GET"]],
  ];
  for (const [m, p, allowed] of cases) {
    const r = await t.req(m, p);
    isError(r, 405, `${m} ${p}`);
    const allow = (r.headers.get("allow") ?? "").split(/,\s*/);
    for (const a of allowed) assert.ok(allow.includes(a), `${m} ${p}: Allow ${allow}`);
    assert.ok(!allow.includes(m));
  }
});

Deno.test("app: malformed JSON answers 400 and stores nothing", async () => {
  await using t = await testApp();
  const before = await dumpKv(t.kv);
  const bad = [
    "{",
    "",
    " ",
    "{'email':'a@b.org'}",
    '{"email":"a@b.org",}',
    '{"email":"a@b.org"} trailing',
    '{"email":"a@b.org"}{}',
    "undefined",
    "NaN",
    '{"email": "a@b.org", "age_ok": tru}',
    '{"email":"\\x41@b.org"}',
    '{"email":"a@b.org\u0001"',
  ];
  for (const raw of bad) isError(await post(t, raw), 400, JSON.stringify(raw));
  isError(await post(t, new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), 400, "invalid UTF-8");
  isError(await post(t, new Uint8Array([0xff, 0xfe, 0x7b, 0, 0x7d, 0])), 400, "UTF-16");
  assert.equal(await dumpKv(t.kv), before);
  assert.equal(t.mail.sent.length, 0);
});

Deno.test("app: JSON with a wrong or missing content type answers 400", async () => {
  await using t = await testApp();
  const body = JSON.stringify({ email: "a@b.org", purpose: "address" });
  for (
    const ct of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/xml",
      "text/json",
      "application/jsonx",
    ]
  ) {
    isError(await post(t, body, { "content-type": ct }), 400, ct);
  }
  isError(await post(t, body, {}), 400, "no content type");
  assert.equal(t.mail.sent.length, 0);
  // The right type works, with or without a charset.
  assert.equal(
    (await post(t, body, { "content-type": "application/json; charset=utf-8" })).status,
    202,
  );
});

Deno.test("app: JSON that is not an object answers 400 naming the body", async () => {
  await using t = await testApp();
  for (const raw of ["[]", '[{"email":"a@b.org"}]', "null", "true", "42", '"a@b.org"', "{}"]) {
    const r = await post(t, raw);
    isError(r, 400, raw);
    assert.equal(typeof r.body.field, "string", raw);
  }
  // Wrong types of every field name the field.
  for (
    const [body, field] of [
      [{ email: ["a@b.org"], age_ok: true }, "email"],
      [{ email: { "$ne": "" }, age_ok: true }, "email"],
      [{ email: "a@b.org", purpose: ["login"], age_ok: true }, "purpose"],
      [{ email: "a@b.org", age_ok: true, name: { first: "Ada" } }, "name"],
      [{ email: "a@b.org", age_ok: "true" }, "age_ok"],
    ] as const
  ) {
    const r = await post(t, JSON.stringify(body));
    isError(r, 400, JSON.stringify(body));
    assert.equal(r.body.field, field);
    assert.match(r.body.error, new RegExp(`^${field}\\b`));
  }
  assert.equal(t.mail.sent.length, 0);
});

Deno.test("app: __proto__ and constructor keys neither pollute nor pass for fields", async () => {
  await using t = await testApp();
  // age_ok hidden in a prototype is not an age_ok.
  const r = await post(t, '{"__proto__":{"age_ok":true},"email":"p@b.org"}');
  isError(r, 400, "proto");
  assert.equal(r.body.field, "age_ok");
  const ok = await post(
    t,
    '{"email":"q@b.org","age_ok":true,"__proto__":{"admin":true,"roles":["owner"]},' +
      '"constructor":{"prototype":{"polluted":1}},"roles":["owner"]}',
  );
  assert.equal(ok.status, 202);
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken("q@b.org")}`);
  assert.deepEqual(v.body.actor.roles, []);
  assert.equal(v.body.actor.standing, "collector");
  // deno-lint-ignore no-explicit-any
  const probe: any = {};
  assert.equal(probe.admin, undefined);
  assert.equal(probe.polluted, undefined);
  assert.equal(probe.age_ok, undefined);
  assert.doesNotMatch(await dumpKv(t.kv), /polluted|"admin"/);
});

Deno.test("app: deeply nested bodies answer 400", async () => {
  await using t = await testApp();
  const n = 100_000;
  for (
    const raw of [
      "[".repeat(n) + "]".repeat(n),
      '{"a":'.repeat(n) + "1" + "}".repeat(n),
      '{"email":' + "[".repeat(n) + "]".repeat(n) + "}",
      '{"email":"a@b.org","age_ok":true,"name":' + '{"x":'.repeat(n) + "1" + "}".repeat(n) + "}",
      "[".repeat(n), // unterminated
    ]
  ) {
    isError(await post(t, raw), 400, raw.slice(0, 12));
  }
  assert.equal(t.mail.sent.length, 0);
});

Deno.test("app: bodies over the limit answer 413, with or without Content-Length", async () => {
  await using t = await testApp();
  const pad = "x".repeat(JSON_BODY_LIMIT);
  const big = JSON.stringify({ email: "a@b.org", age_ok: true, pad });
  isError(await post(t, big), 413, "string body");
  isError(
    await post(t, big, {
      ...JSON_CT,
      "content-length": String(new TextEncoder().encode(big).length),
    }),
    413,
    "announced",
  );
  const chunk = new TextEncoder().encode(" ".repeat(256 * 1024));
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent++ < 8) c.enqueue(chunk);
      else c.close();
    },
  });
  isError(await post(t, stream), 413, "streamed");
  // Just under the limit is read (and refused on its merits, not its size).
  const under = JSON.stringify({
    email: "a@b.org",
    age_ok: true,
    pad: "x".repeat(JSON_BODY_LIMIT - 100),
  });
  assert.equal((await post(t, under)).status, 202);
  assert.equal(t.mail.sent.length, 1);
});

Deno.test("app: unicode edge cases never answer 500", async () => {
  await using t = await testApp();
  const names = [
    "Zoë Ångström",
    "李小龍",
    "👩🏽‍💻 Dev",
    "e\u0301e\u0301",
    "\ufeffBOM",
    "ﷺﷺ",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  ];
  // A bidi override would show the name reversed on pages: refused, naming the field.
  const spoof = await t.req("POST", "/api/verify/request", {
    body: { email: "spoof@b.org", age_ok: true, name: "\u202eevil" },
    from: "198.18.1.1",
  });
  assert.equal(spoof.status, 400);
  assert.equal(spoof.body.field, "name");
  let i = 0;
  for (const name of names) {
    const email = `u${i++}@b.org`;
    const r = await t.req("POST", "/api/verify/request", {
      body: { email, age_ok: true, name },
      from: `198.18.0.${i}`,
    });
    assert.equal(r.status, 202, name);
    const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken(email)}`);
    assert.equal(v.status, 200, name);
    assert.equal(v.body.actor.name, name.trim());
    const me = await t.req("GET", "/api/me", { token: v.body.token });
    assert.match(me.body.slug, /^[a-z0-9-]+$/);
  }
  for (
    const raw of [
      '{"email":"\\ud800@b.org"}',
      '{"email":"a@b.org","age_ok":true,"name":"\\udfff\\ud800"}',
    ]
  ) {
    isError(await post(t, raw), 400, raw);
  }
  isError(
    await t.req(
      "GET",
      "/api/verify?token=%F0%9F%92%A9%F0%9F%92%A9%F0%9F%92%A9%F0%9F%92%A9%F0%9F%92%A9%F0%9F%92%A9",
    ),
    410,
    "emoji token",
  );
  const badQ = await t.req("GET", "/api/verify?token=%ff%fe" + "a".repeat(30));
  assert.ok(badQ.status >= 400 && badQ.status < 500, String(badQ.status));
  const auth = await t.req("GET", "/api/me", {
    headers: { authorization: "Bearer \u00ff\u00fe" + "a".repeat(30) },
  });
  isError(auth, 401, "latin-1 bearer");
});

Deno.test("app: a database that does not answer gives 503 {error}, not 500", async () => {
  await using t = await testApp();
  const s = await t.account("a@b.org");
  t.kv.close();
  isError(await t.req("GET", "/api/me", { token: s.token }), 503, "me");
  isError(await t.req("GET", "/api/audit/verify"), 503, "verify");
  isError(await post(t, JSON.stringify({ email: "a@b.org", purpose: "address" })), 503, "link");
});

// deno-lint-ignore no-explicit-any
type Doc = any;

function resolveRefs(doc: Doc, node: unknown, seen: string[] = []): void {
  if (Array.isArray(node)) return node.forEach((n) => resolveRefs(doc, n, seen));
  if (!node || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node)) {
    if (k === "$ref") {
      assert.equal(typeof v, "string");
      assert.match(v as string, /^#\//, `only local refs: ${v}`);
      let target = doc;
      for (const part of (v as string).slice(2).split("/")) target = target?.[part];
      assert.ok(target !== undefined, `$ref ${v} resolves`);
    } else resolveRefs(doc, v, seen);
  }
}

Deno.test("app: /api/openapi.json is an OpenAPI 3.1 document listing every route", async () => {
  await using t = await testApp();
  const r = await t.req("GET", "/api/openapi.json");
  assert.equal(r.status, 200);
  const doc: Doc = r.body;
  assert.equal(doc.openapi, "3.1.0");
  assert.equal(typeof doc.info.title, "string");
  assert.equal(typeof doc.info.version, "string");
  assert.ok(doc.paths && typeof doc.paths === "object");
  resolveRefs(doc, doc);
  const schemes = Object.keys(doc.components?.securitySchemes ?? {});
  const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
  const operationIds = new Set<string>();
  for (const [path, item] of Object.entries<Doc>(doc.paths)) {
    assert.match(path, /^\/(api|ping)\//, path);
    const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries<Doc>(item)) {
      assert.ok(methods.includes(method), `${path}: ${method}`);
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(op.responses && Object.keys(op.responses).length > 0, `${where} has responses`);
      for (const [code, res] of Object.entries<Doc>(op.responses)) {
        assert.match(code, /^([1-5]\d\d|[1-5]XX|default)$/, where);
        assert.equal(typeof res.description, "string", `${where} ${code} description`);
      }
      for (const p of params) {
        const declared = (op.parameters ?? []).find((x: Doc) => x.in === "path" && x.name === p);
        assert.ok(declared?.required === true, `${where}: path parameter ${p} declared`);
      }
      for (const req of op.security ?? []) {
        for (const name of Object.keys(req)) assert.ok(schemes.includes(name), `${where}: ${name}`);
      }
      if (op.operationId) {
        assert.ok(!operationIds.has(op.operationId), `operationId ${op.operationId} unique`);
        operationIds.add(op.operationId);
      }
    }
  }
  // Every route the app answers under /api is in the document, with its method.
  const listed = new Set(
    Object.entries<Doc>(doc.paths).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)
    ),
  );
  await mountEveryArea(t.app);
  const routes = new Set(
    t.app.routes
      .filter((x) =>
        x.method !== "ALL" && x.path.startsWith("/api/") && x.path !== "/api/openapi.json" &&
        // Uptime Kuma's push addresses: another product's API, not this one's.
        !x.path.startsWith("/api/push/")
      )
      .map((x) => `${x.method} ${x.path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, "{$1}")}`),
  );
  assert.ok(routes.size >= 8);
  for (const route of routes) assert.ok(listed.has(route), `${route} is in /api/openapi.json`);
  // Other products' ping addresses are answered by their own area, one route a method for all.
  const wide = new Set(t.app.routes.map((x) => `${x.method} ${x.path}`));
  for (const op of listed) {
    const [method, path] = op.split(" ");
    if (path.startsWith("/ping/")) assert.ok(wide.has(`${method} /ping/*`), op);
    else if (path.startsWith("/api/push/")) assert.ok(wide.has(`${method} /api/push/*`), op);
    else assert.ok(routes.has(op), `${op} is a real route`);
  }
});

/** Sample values for a path parameter, good and bad. */
const PARAMS = ["1", "0", "999999", "abc", "-1", "%00", "a".repeat(300), "%F0%9F%92%A9", ".."];
const BODIES: (string | undefined)[] = [
  undefined,
  "{",
  "[]",
  "null",
  "{}",
  '{"__proto__":{"x":1}}',
  JSON.stringify({ email: "a@b.org\r\n", name: "\ud800", text: "x".repeat(70_000), id: -1 }),
  '{"a":' + "[".repeat(5000) + "]".repeat(5000) + "}",
  "\u0000",
];

Deno.test("app: hostile input on every documented route never answers 500", async () => {
  await using t = await testApp();
  const doc: Doc = (await t.req("GET", "/api/openapi.json")).body;
  const member = await t.account("m@b.org", { name: "Member" });
  const owner = await t.account("o@b.org", { name: "Owner", roles: ["owner"] });
  const failures: string[] = [];
  for (const [path, item] of Object.entries<Doc>(doc.paths)) {
    for (const [method, op] of Object.entries<Doc>(item)) {
      const foreign = foreignAnswers(op);
      const paths = path.includes("{")
        ? PARAMS.map((p) => path.replace(/\{[^}]+\}/g, p))
        : [path, `${path}?all=%ff&full=2&q=${"x".repeat(3000)}&token=`];
      // Every path form without a body, then every body on the first form: the suite stays
      // fast however many routes the areas add.
      const cases = [
        ...paths.map((p) => [p, undefined] as const),
        ...(method === "get" || method === "head" ? [] : BODIES.map((b) => [paths[0], b] as const)),
      ];
      for (const [p, raw] of cases) {
        // ".." in two path parameters climbs out of /api (to a web page): not an API answer.
        if (!/^\/(api|ping)\//.test(new URL(p, "http://x").pathname)) continue;
        for (const token of [undefined, member.token, owner.token]) {
          const r = await t.req(method.toUpperCase(), p, {
            raw,
            token,
            headers: raw === undefined ? {} : JSON_CT,
            from: "192.0.2.201",
          });
          if (r.status >= 500) {
            failures.push(`${method} ${p} ${raw?.slice(0, 20)}: ${r.status} ${r.text}`);
          } else if (r.status >= 400 && !foreign && typeof r.body?.error !== "string") {
            failures.push(`${method} ${p}: ${r.status} without {error}`);
          }
        }
      }
    }
  }
  assert.deepEqual(failures, []);
});

/** Every route of every area of areas.ts ROUTE_AREAS, in the table's order: [area, method, path]. */
async function allRoutes(): Promise<[AreaName, string, string][]> {
  await using t = await testApp();
  const out: [AreaName, string, string][] = [];
  for (const name of Object.keys(ROUTE_AREAS) as AreaName[]) {
    const area = ROUTE_AREAS[name];
    const app = new Hono().route(area.mount, (await area.load())(t.deps));
    for (const r of app.routes) out.push([name, r.method, r.path]);
  }
  return out;
}

/**
 * Which areas a request with this method to this path mounts: those with a prefix over it for
 * that method or every method, in the table's order.
 */
function areasOver(method: string, path: string): AreaName[] {
  const table = new TrieRouter<AreaName>();
  for (const name of Object.keys(ROUTE_AREAS) as AreaName[]) {
    for (const prefix of ROUTE_AREAS[name].prefixes) table.add(...prefixRoute(prefix), name);
  }
  return table.match(method, path)[0].map(([name]) => name);
}

Deno.test("app: every route of an area lies under one of its prefixes", async () => {
  const routes = await allRoutes();
  // GET /api/healthz is answered by the app itself; its area only describes it.
  // Middleware (method ALL) is no route: it runs for the requests that reach the area.
  const outside = routes.filter(([, method, path]) => path !== "/api/healthz" && method !== "ALL")
    .filter(([name, method, path]) => !areasOver(method, path.replace(/\/\*$/, "")).includes(name))
    .map(([name, method, path]) => `${name}: ${method} ${path}`);
  assert.deepEqual(
    outside,
    [],
    "give the area a prefix over these routes in areas.ts ROUTE_AREAS",
  );
  // Two areas answering one method and path are mounted in the table's order by every request
  // that mounts the later one (the first hands over with next()).
  const order = Object.keys(ROUTE_AREAS);
  for (const [name, method, path] of routes) {
    const earlier = routes.filter(([o, m, p]) =>
      order.indexOf(o) < order.indexOf(name) && m === method && p === path
    );
    for (const [other] of earlier) {
      for (const prefix of ROUTE_AREAS[name].prefixes) {
        const [, over] = prefixRoute(prefix);
        assert.ok(
          areasOver(method, over.replace(/\/\*$/, "")).includes(other),
          `${name} ${prefix}`,
        );
      }
    }
  }
  assert.ok(
    routes.some(([area, method, path]) => area === "me" && method === "GET" && path === "/api/me"),
  );
});

Deno.test("app: an area is built on the first request it answers, and only then", async () => {
  await using t = await testApp();
  assert.deepEqual(builtAreas(t.app), []);
  // healthz is answered by the app itself: no area, no route layer.
  assert.equal((await t.req("GET", "/api/healthz")).status, 200);
  assert.deepEqual(builtAreas(t.app), []);
  assert.equal((await t.req("GET", "/api/audit/verify")).status, 200);
  assert.deepEqual(builtAreas(t.app), ["health"]);
  const a = await t.account("a@example.org");
  assert.equal((await t.req("GET", "/api/me", { token: a.token })).status, 200);
  // The areas with a prefix over the path for its method: GET /api/me is the me area's alone;
  // the areas that change (PATCH) and erase (DELETE) the account come with their requests.
  assert.deepEqual(builtAreas(t.app), ["health", "me"]);
  // Asked again, the path is settled for GET (every area over it mounted), not for PATCH.
  assert.equal((await t.req("GET", "/api/me", { token: a.token })).status, 200);
  assert.equal((await t.req("PATCH", "/api/me", { token: a.token, body: {} })).status, 200);
  const me = ["health", "me", "profile"];
  assert.deepEqual(builtAreas(t.app), me);
  // Unknown paths are answered without building anything; a wrong method builds the areas of
  // its path, which say the methods it has.
  isError(await t.req("GET", "/api/nope"), 404, "unknown");
  assert.deepEqual(builtAreas(t.app), me);
  isError(await t.req("POST", "/api/me/files"), 405, "method");
  assert.deepEqual(builtAreas(t.app), [...me, "files"]);
  // A method no area answers mounts every area over the path, so Allow names all its methods.
  const put = await t.req("PUT", "/api/me");
  isError(put, 405, "method");
  assert.equal(put.headers.get("allow"), "GET, PATCH, DELETE, HEAD");
  assert.deepEqual(builtAreas(t.app), [...me, "files", "export"]);
  // HEAD is answered by the area's GET route, without a body.
  const head = await t.app.request("/api/healthz", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
  // Errors inside an area answer as everywhere: malformed JSON is a 400 {error}.
  isError(await post(t, "{"), 400, "malformed JSON");
  assert.deepEqual(builtAreas(t.app), [...me, "files", "export", "sign_in"]);
  // The OpenAPI document describes every area's routes (it does not build them for serving).
  const doc = (await t.req("GET", "/api/openapi.json")).body;
  // Middleware (method ALL: the Healthchecks paths' CORS) is no operation of its own.
  // Uptime Kuma's push addresses are another product's API, not this one's.
  const routes = (await allRoutes()).filter(([area, m, p]) =>
    p.startsWith("/api/") && m !== "ALL" && area !== "compat_pings"
  );
  for (const [, method, path] of routes) {
    const openApiPath = path.replace(/:(\w+)/g, "{$1}");
    assert.ok(doc.paths[openApiPath]?.[method.toLowerCase()], `${method} ${openApiPath}`);
  }
});

Deno.test("app: an area whose import fails answers 503 {error}, and the next request retries", () =>
  expectLog([/"msg":"route area failed to load"/], async () => {
    await using t = await testApp();
    const area = ROUTE_AREAS.search as { load: () => Promise<unknown> };
    const load = area.load;
    let calls = 0;
    area.load = () => {
      calls++;
      return Promise.reject(new TypeError("error loading dynamically imported module"));
    };
    try {
      const [first, second] = await Promise.all([
        t.req("GET", "/api/search?q=xy"),
        t.req("GET", "/api/search?q=xy"),
      ]);
      isError(first, 503, "failed import");
      isError(second, 503, "failed import, concurrent");
      assert.ok(first.headers.get("retry-after"));
      // Concurrent first requests share one import.
      assert.equal(calls, 1);
      assert.deepEqual(builtAreas(t.app), []);
    } finally {
      area.load = load;
    }
    assert.equal((await t.req("GET", "/api/search?q=xy")).status, 200);
    assert.deepEqual(builtAreas(t.app), ["search"]);
  }));

Deno.test("app: /api/openapi.json answers 503 {error} while an area fails to import, then the document", () =>
  expectLog([/"msg":"route area failed to load"/], async () => {
    await using t = await testApp();
    const area = ROUTE_AREAS.search as { load: () => Promise<unknown> };
    const load = area.load;
    area.load = () => Promise.reject(new TypeError("error loading dynamically imported module"));
    try {
      isError(await t.req("GET", "/api/openapi.json"), 503, "failed import");
    } finally {
      area.load = load;
    }
    const doc = await t.req("GET", "/api/openapi.json");
    assert.equal(doc.status, 200);
    assert.ok(doc.body.paths["/api/search"]?.get);
  }));
