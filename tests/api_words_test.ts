/**
 * Every route of the OpenAPI document refused with wrong kinds, missing fields and over-long
 * values, in its JSON body, its query and its path: every answer is below 500, and every
 * refusal is `{error}` in plain words (no validator phrase: "Invalid input", "expected",
 * "received", "Too big", ...) with `field` naming a field the request has, as documented.
 */
import assert from "node:assert/strict";
import { foreignAnswers, type Res, testApp } from "./_helpers.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const VALIDATOR = [
  /invalid (input|option|type|string|value|union|element|key)/i,
  /\btoo (big|small)\b/i,
  /\bexpected\b/i,
  /\breceived\b/i,
  /\bunrecognized\b/i,
  /\bNaN\b/,
  /<=|>=/,
  /\b[a-z_]+\.[0-9]+\b/,
  /\b(string|int|undefined|ZodError)\b/,
];

/** A value the schema takes, or near enough that the field sent beside it is the one refused. */
function plausible(schema: Json, doc: Json, depth = 0): unknown {
  const s = resolve(schema, doc);
  if (!s || depth > 5) return null;
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return plausible(alt.find((a: Json) => a.type !== "null") ?? alt[0], doc, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  switch (type) {
    case "string":
      if (s.format === "email") return "ada@example.org";
      if (s.format === "date-time") return "2026-03-07T22:00:00+01:00";
      if (s.format === "uri") return "https://example.org/";
      return "a".repeat(Math.min(Math.max(s.minLength ?? 0, 20), s.maxLength ?? 20));
    case "integer":
    case "number":
      return s.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object": {
      const out: Record<string, unknown> = {};
      for (const name of s.required ?? []) {
        out[name] = plausible(s.properties?.[name], doc, depth + 1);
      }
      return out;
    }
    default:
      return null;
  }
}

function resolve(schema: Json, doc: Json): Json {
  let s = schema;
  for (let i = 0; s?.$ref && i < 5; i++) s = doc.components.schemas[s.$ref.split("/").pop()];
  return s;
}

/** Values of the wrong kind, and over-long ones, for a property's schema. */
function wrongValues(schema: Json, doc: Json): unknown[] {
  const s = resolve(schema, doc) ?? {};
  const types: string[] = [s.type, ...(s.anyOf ?? s.oneOf ?? []).map((a: Json) => a.type)]
    .flat().filter(Boolean);
  const out: unknown[] = [{ nested: true }];
  out.push(types.includes("string") ? 12345 : "twelve");
  if (!types.includes("boolean")) out.push(true);
  if (!types.includes("array")) out.push(["x", 1]);
  else out.push(["x", 1, null, { a: 1 }], Array.from({ length: 600 }, (_, i) => i + 1));
  out.push("ж".repeat(70_000 / 2), 1e300, -1, 1.5);
  return out;
}

function paramValue(p: Json): string {
  const s = p.schema ?? {};
  if (s.example !== undefined) return String(s.example);
  if (s.enum) return String(s.enum[0]);
  if (s.type === "integer" || s.type === "number" || /id$/i.test(p.name)) return "1";
  return "anything";
}

Deno.test("every route of the OpenAPI document refuses bad input in plain words, never 500", async () => {
  await using t = await testApp({
    config: { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" },
  });
  const doc: Json = (await t.req("GET", "/api/openapi.json")).body;
  let calls = 0;
  let n = 0;
  const refusals: string[] = [];
  const fields = new Set<string>();

  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (template === "/api/openapi.json") continue;
      // A fresh owner per operation: an operation that ends the account or its session does
      // not hide the rest of the walk.
      const { token } = await t.account(`walker${++n}@example.org`, {
        name: "Walker",
        roles: ["owner", "reviewer"],
      });
      const params: Json[] = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === "path");
      const queryParams = params.filter((p) => p.in === "query");
      const known = new Set(params.map((p) => p.name));
      const fill = (over: Record<string, string> = {}) =>
        template.replace(
          /{([^}]+)}/g,
          (_, name) =>
            encodeURIComponent(
              over[name] ?? paramValue(pathParams.find((p) => p.name === name)),
            ),
        );
      const goodQuery = () =>
        new URLSearchParams(
          queryParams.filter((p) => p.required).map((p) => [p.name, paramValue(p)]),
        );

      const send = async (
        what: string,
        path: string,
        opts: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
      ) => {
        calls++;
        const r: Res = await t.req(method.toUpperCase(), path, {
          token,
          from: `203.0.113.${calls % 250}`,
          headers: { "x-service-token": "service-token-for-tests-0123456789", ...opts.headers },
          ...opts,
        });
        const where = `${method.toUpperCase()} ${template} (${what}): ${r.status} ${
          r.text.slice(0, 300)
        }`;
        assert.ok(r.status < 500, where);
        if (r.status < 400 || !r.headers.get("content-type")?.includes("json")) return;
        // Uptime Kuma's push answers its own `{ok: false, msg}` (api/compat_docs.ts); HEAD none.
        if (foreignAnswers(op)) {
          if (method !== "head") assert.equal(typeof r.body?.msg, "string", where);
          return;
        }
        assert.equal(typeof r.body?.error, "string", where);
        // Quoted values are the API's own words ("received" is a proposal's status).
        const words = r.body.error.replace(/"[^"]*"/g, '""');
        for (const bad of VALIDATOR) assert.doesNotMatch(words, bad, where);
        refusals.push(r.body.error);
        if (r.body.field !== undefined) {
          assert.equal(typeof r.body.field, "string", where);
          fields.add(r.body.field);
          const bodyProps = bodyProperties(op, doc);
          const allowed = known.has(r.body.field) || bodyProps.has(r.body.field) ||
            ["body", "query", "headers"].includes(r.body.field) ||
            /^X-File-/.test(r.body.field);
          assert.ok(allowed, `${where}: field ${r.body.field} is none of the request's`);
          assert.ok(
            r.body.error.startsWith(`${r.body.field}: `),
            `${where}: the sentence names its field first`,
          );
        }
      };

      // Path parameters of the wrong kind or far too long: 404 (or another plain refusal).
      for (const p of pathParams) {
        for (const bad of ["abc", "9".repeat(40), "ж".repeat(3000), "-1"]) {
          await send(`path ${p.name}=${bad.slice(0, 5)}`, fill({ [p.name]: bad }));
        }
      }
      // Query parameters: missing, of the wrong kind, far too long.
      for (const p of queryParams) {
        for (const bad of [undefined, "abc", "-1", "1.5", "ж".repeat(5000), ""]) {
          const q = goodQuery();
          if (bad === undefined) q.delete(p.name);
          else q.set(p.name, bad);
          await send(`query ${p.name}=${String(bad).slice(0, 5)}`, `${fill()}?${q}`);
        }
      }
      // JSON bodies: the whole body of the wrong kind, each field missing, of the wrong kind
      // and over-long beside plausible others.
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      if (!schema) continue;
      const path = `${fill()}${queryParams.some((p) => p.required) ? `?${goodQuery()}` : ""}`;
      for (const whole of [[], "text", 12, null, true]) {
        await send("whole body", path, { body: whole });
      }
      await send("empty body", path, { raw: "", headers: { "content-type": "application/json" } });
      const base = plausible(schema, doc) as Record<string, unknown>;
      const shape = resolve(schema, doc);
      for (const [name, prop] of Object.entries<Json>(shape?.properties ?? {})) {
        if ((shape.required ?? []).includes(name)) {
          const missing = { ...base };
          delete missing[name];
          await send(`${name} missing`, path, { body: missing });
        }
        for (const bad of wrongValues(prop, doc)) {
          await send(`${name}=${JSON.stringify(bad).slice(0, 20)}`, path, {
            body: { ...base, [name]: bad },
          });
        }
      }
    }
  }
  if (Deno.env.get("SHOW_MESSAGES")) console.log([...new Set(refusals)].sort().join("\n"));
  // The walk met refusals of many fields (it would pass on routes that refuse nothing).
  assert.ok(calls > 1000, `${calls} calls`);
  assert.ok(fields.size > 60, `${fields.size} fields named`);
  for (
    const expected of [
      "grouping: must be true or false",
      "remind: must be a whole number from 1 to 24",
      "services: item 1 must be a whole number of at least 1",
      "email: is required",
    ]
  ) assert.ok(refusals.includes(expected), `no refusal read "${expected}"`);
  assert.ok(refusals.some((m) => /^text: must be at most [0-9]+ characters$/.test(m)));
});

function bodyProperties(op: Json, doc: Json): Set<string> {
  const schema = resolve(op.requestBody?.content?.["application/json"]?.schema, doc);
  return new Set(Object.keys(schema?.properties ?? {}));
}
