import assert from "node:assert/strict";
import { z } from "zod";
import { mountEveryArea } from "../areas.ts";
import { docStats } from "../http/openapi_doc.ts";
import { testApp } from "./_helpers.ts";

// deno-lint-ignore no-explicit-any
type Doc = any;

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

Deno.test("openapi: built on the first request only, then served as is", async () => {
  await using t = await testApp();
  const before = docStats.builds;
  const first = await t.req("GET", "/api/openapi.json");
  const second = await t.req("GET", "/api/openapi.json");
  assert.equal(first.status, 200);
  assert.equal(docStats.builds, before + 1);
  assert.equal(second.text, first.text);
});

Deno.test("openapi: every route with its method, named components, refs that resolve", async () => {
  await using t = await testApp();
  const doc: Doc = (await t.req("GET", "/api/openapi.json")).body;
  const listed = new Set(
    Object.entries<Doc>(doc.paths).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)
    ),
  );
  await mountEveryArea(t.app);
  const routes = t.app.routes
    .filter((x) => x.method !== "ALL" && x.path.startsWith("/api/"))
    .filter((x) => x.path !== "/api/openapi.json")
    // Uptime Kuma's push addresses: another product's API, not this one's.
    .filter((x) => !x.path.startsWith("/api/push/"))
    .map((x) => `${x.method} ${x.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
  assert.ok(routes.length > 50);
  for (const r of routes) assert.ok(listed.has(r), r);
  // The ping addresses of other products, answered before any route: described all the same.
  for (
    const path of [
      "/ping/{uuid}",
      "/ping/{uuid_or_ping_key}/{signal_or_slug}",
      "/ping/{ping_key}/{slug}/{signal}",
      "/api/push/{token}",
    ]
  ) {
    for (const m of ["HEAD", "GET", "POST"]) assert.ok(listed.has(`${m} ${path}`), `${m} ${path}`);
  }
  const bySlug = doc.paths["/ping/{ping_key}/{slug}/{signal}"].get;
  assert.deepEqual(Object.keys(bySlug.responses).sort(), [
    "200",
    "201",
    "400",
    "404",
    "405",
    "409",
    "429",
  ]);
  assert.equal(bySlug.responses["200"].content["text/plain"].schema.type, "string");

  const schemas = doc.components.schemas;
  for (const name of ["Error", "Device", "Module", "File", "Proposal"]) {
    assert.equal(typeof schemas[name], "object", `component ${name}`);
  }
  assert.deepEqual(doc.components.securitySchemes, {
    bearer: { type: "http", scheme: "bearer", description: "Device token from GET /api/verify" },
    serviceToken: { type: "apiKey", in: "header", name: "X-Service-Token" },
    hcApiKey: {
      type: "apiKey",
      in: "header",
      name: "X-Api-Key",
      description: "A key of the Healthchecks-compatible API (POST /api/me/api-keys)",
    },
  });
  const all = refs(doc);
  assert.ok(all.length > 20);
  for (const ref of all) {
    assert.match(ref, /^#\/components\/schemas\/[A-Za-z]+$/, ref);
    assert.ok(schemas[ref.split("/").pop()!], `${ref} resolves`);
  }
  assert.ok(!JSON.stringify(doc).includes("$defs"));
  assert.ok(!JSON.stringify(doc).includes('"$schema"'));

  // The error answer refers to the shared component.
  const devices = doc.paths["/api/me/devices/{id}"].delete;
  assert.deepEqual(devices.responses["404"].content["application/json"].schema, {
    $ref: "#/components/schemas/Error",
  });
  assert.deepEqual(devices.security, [{ bearer: [] }]);
  assert.deepEqual(devices.parameters.map((p: Doc) => [p.name, p.in, p.required]), [
    ["id", "path", true],
  ]);
  const verify = doc.paths["/api/verify"].get;
  assert.deepEqual(verify.parameters.map((p: Doc) => [p.name, p.in, p.required]), [
    ["token", "query", true],
  ]);
});

Deno.test("openapi: POST routes that read JSON describe their body", async () => {
  await using t = await testApp();
  const doc: Doc = (await t.req("GET", "/api/openapi.json")).body;
  let seen = 0;
  for (const [path, item] of Object.entries<Doc>(doc.paths)) {
    const body = item.post?.requestBody;
    if (!body?.content?.["application/json"]) continue;
    seen++;
    const schema = body.content["application/json"].schema;
    assert.ok(schema.$ref || schema.type === "object", `${path}: ${JSON.stringify(schema)}`);
  }
  assert.ok(seen >= 8, `${seen} POST routes with a JSON body`);
  const request = doc.paths["/api/verify/request"].post.requestBody;
  assert.equal(request.required, true);
  const shape = request.content["application/json"].schema;
  const resolved = shape.$ref ? doc.components.schemas[shape.$ref.split("/").pop()] : shape;
  assert.ok(resolved.properties.email, JSON.stringify(resolved));
  assert.ok(z.toJSONSchema); // the document comes from zod's own converter
});

Deno.test("openapi: guards answer before validation; bodies of another type answer 400", async () => {
  await using t = await testApp();
  const noAuth = await t.req("POST", "/api/me/journal", { raw: "{", headers: JSON_CT });
  assert.equal(noAuth.status, 401, noAuth.text);
  const { token } = await t.account("j@b.org", { name: "J" });
  const bad = await t.req("POST", "/api/me/journal", { token, raw: "{", headers: JSON_CT });
  assert.equal(bad.status, 400, bad.text);
  const text = await t.req("POST", "/api/me/journal", {
    token,
    raw: "hello",
    headers: { "content-type": "text/plain" },
  });
  assert.equal(text.status, 400, text.text);
  assert.match(text.body.error, /JSON/);
  const field = await t.req("POST", "/api/me/journal", { token, body: { nope: 1 } });
  assert.equal(field.status, 400, field.text);
  assert.equal(typeof field.body.field, "string");
  const badId = await t.req("DELETE", "/api/me/devices/abc", { token });
  assert.deepEqual([badId.status, badId.body], [404, { error: "not found" }]);
});

const JSON_CT = { "content-type": "application/json" };
