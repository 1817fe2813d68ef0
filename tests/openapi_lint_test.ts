/**
 * The API description through Redocly's linter (@redocly/openapi-core, the engine of
 * `@redocly/cli lint`) with its recommended rules: no error. The warnings left are listed and
 * explained; any other one fails the test.
 */
import assert from "node:assert/strict";
import { loadRedocly } from "./_dev_deps.ts";
import { testApp } from "./_helpers.ts";

/** Operations that answer no 4xx at all: public reads without parameters. */
const NO_CLIENT_ERROR = [
  "/api/healthz",
  "/api/{version}/status/",
  "/api/points",
  "/api/modules/meta",
  "/api/catalogue",
];
const ALLOWED: Record<string, (pointer: string) => boolean> = {
  // The owner has not chosen a licence for the API description.
  "info-license": (p) => p === "#/info",
  "operation-4xx-response": (p) =>
    NO_CLIENT_ERROR.some((path) => p === `#/paths/${path.replaceAll("/", "~1")}/get/responses`),
  // Healthchecks' documented paths end with a slash (/api/v3/checks/); clients use them as is.
  "no-path-trailing-slash": (p) => p.startsWith("#/paths/~1api~1{version}~1"),
  // /api/{version}/... (v1, v2, v3) beside /api/hooks/{key}/{signal} and /api/me/channels/{id}:
  // the version is one of three literal words, so a request names one route only.
  "no-ambiguous-paths": (p) => p.startsWith("#/paths/~1api~1{version}~1"),
  // A field whose zod schema has no JSON Schema form (the record chain) is "any value".
  "no-illogical-composition-keywords": (p) => p.includes("/chain/"),
};

Deno.test("openapi lint: Redocly's recommended rules report no error", async () => {
  await using t = await testApp();
  const source = (await t.req("GET", "/api/openapi.json")).text;
  const { createConfig, lintFromString } = await loadRedocly();
  const config = await createConfig({
    extends: ["recommended"],
    // Reported as warnings so that ALLOWED can name the Healthchecks paths, and only them.
    rules: { "no-path-trailing-slash": "warn" },
  });
  const problems = await lintFromString({ source, absoluteRef: "openapi.json", config });
  const shown = problems.map((p) =>
    `${p.severity} ${p.ruleId} ${p.location?.[0]?.pointer}: ${p.message}`
  );
  const errors = problems.filter((p) => p.severity === "error");
  assert.deepEqual(errors.length, 0, shown.join("\n"));
  const unexpected = problems.filter((p) => !ALLOWED[p.ruleId]?.(p.location?.[0]?.pointer ?? ""));
  assert.deepEqual(unexpected.map((p) => shown[problems.indexOf(p)]), []);

  const doc = JSON.parse(source);
  assert.deepEqual(doc.servers, [{ url: "http://test.local", description: "this service" }]);
  const ids = new Set<string>();
  for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      assert.equal(typeof op.operationId, "string", `${method} ${path}`);
      assert.ok(!ids.has(op.operationId as string), `operationId ${op.operationId} twice`);
      ids.add(op.operationId as string);
      assert.ok(Array.isArray(op.security), `${method} ${path} has security ([] when public)`);
    }
  }
  assert.equal(doc.paths["/api/healthz"].get.operationId, "getHealthz");
  assert.deepEqual(doc.paths["/api/healthz"].get.security, []);
  assert.equal(doc.paths["/api/me/files/{id}"].delete.operationId, "deleteMeFilesById");
  // A route with a JSON body also answers 400 and 413; one behind a token 401.
  const patch = doc.paths["/api/me"].patch.responses;
  for (const code of ["400", "401", "413"]) assert.ok(patch[code], `PATCH /api/me ${code}`);
});
