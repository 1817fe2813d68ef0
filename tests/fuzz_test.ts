/**
 * Fuzzing every route of /api/openapi.json with hostile params, queries, headers, content
 * types and bodies (fast-check): no answer is 5xx, and every 4xx is a JSON `{error}`.
 * In process, with the fakes of every test (no network, captured mail), a few thousand
 * requests in all.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { foreignAnswers, testApp } from "./_helpers.ts";

/**
 * Runs per operation and credential: more with a credential that passes a guard, since those
 * are the requests that reach the route's own code; fewer with one that fails, since those only
 * prove the guard's answer.
 */
const RUNS = { valid: 10, invalid: 4 };

const ENDS_SESSIONS = /^DELETE \/api\/me(\/token|\/devices.*)?$/;

interface Operation {
  method: string;
  path: string;
  bodyProps: string[];
  query: string[];
  /** Answers in another product's own form (tests/_helpers.ts `foreignAnswers`). */
  foreign: boolean;
}

/** The surrogates' block, which no code point of a well-formed string is in. */
const SURROGATES = { first: 0xd800, count: 0x800 };

/**
 * Any Unicode code point but a surrogate, as fast-check's unit "binary": that one builds a table
 * of every code point in the process on first use, a large share of this file's CPU
 * (CHANGELOG.md, "A quiet suite"); this one reckons them from a number. The unmapper lets
 * fast-check mix its dangerous words ("__proto__", ...) into these strings as it does into its
 * own.
 */
const codePoint = fc.integer({ min: 0, max: 0x10ffff - SURROGATES.count }).map(
  (n) => String.fromCodePoint(n < SURROGATES.first ? n : n + SURROGATES.count),
  (unit) => {
    const cp = typeof unit === "string" ? unit.codePointAt(0) : undefined;
    if (cp === undefined || String.fromCodePoint(cp) !== unit) {
      throw new Error("not one code point");
    }
    if (cp >= SURROGATES.first && cp < SURROGATES.first + SURROGATES.count) {
      throw new Error("a surrogate");
    }
    return cp < SURROGATES.first ? cp : cp - SURROGATES.count;
  },
);

const hostileText = fc.oneof(
  fc.string(),
  fc.string({ unit: codePoint, maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\u202eevil",
    "a\u200Bb",
    "\ud800",
    "../../etc/passwd",
    "%00",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "__proto__",
    "constructor",
    "x".repeat(5000),
    "url:http://127.0.0.1:0080/",
    "tcp:[::1]:+22",
    "webhook:",
    "1e309",
    "NaN",
    "-0",
    "💩".repeat(300),
  ),
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1, 2 ** 53, -(2 ** 63), 1e308, true, false, null),
  fc.array(hostileText, { maxLength: 5 }),
  fc.dictionary(hostileText, hostileText, { maxKeys: 3 }),
  fc.constant(undefined),
);

const param = fc.oneof(
  fc.constantFrom(
    "1",
    "0",
    "-1",
    "01",
    "1.5",
    "1e3",
    "999999999999999",
    "9999999999999999999999",
    "%2e%2e%2f",
    "%00",
    "a",
    "%E2%80%AE",
    "x".repeat(300),
  ),
  fc.nat().map(String),
  fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);

const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/merge-patch+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "image/png",
  "application/octet-stream",
  "",
  "garbage/\u0001",
);

async function operations(t: Awaited<ReturnType<typeof testApp>>): Promise<Operation[]> {
  const doc = (await t.req("GET", "/api/openapi.json")).body;
  const ops: Operation[] = [];
  for (const [path, byMethod] of Object.entries(doc.paths as Record<string, object>)) {
    for (const [method, op] of Object.entries(byMethod as Record<string, Record<string, never>>)) {
      // deno-lint-ignore no-explicit-any
      const o = op as any;
      const schema = o.requestBody?.content?.["application/json"]?.schema;
      const ref = schema?.$ref?.split("/").pop();
      const resolved = ref ? doc.components?.schemas?.[ref] : schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        bodyProps: Object.keys(resolved?.properties ?? {}),
        query: (o.parameters ?? []).filter((p: { in: string }) => p.in === "query")
          .map((p: { name: string }) => p.name),
        foreign: foreignAnswers(o),
      });
    }
  }
  return ops;
}

Deno.test("fuzz: every route answers hostile requests with no 5xx and 4xx as JSON {error}", async () => {
  await using t = await testApp({ config: { teamInbox: "team@inbox.test" } });
  const owner = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
  const plain = await t.account("plain@example.org", { name: "Plain" });
  // Something to find: a heartbeat, a journal entry.
  await t.req("POST", "/api/me/services", {
    token: plain.token,
    body: { name: "Backup", check: "webhook:", interval: 5 },
  });
  await t.req("POST", "/api/me/journal", { token: plain.token, body: { text: "hello" } });
  // The routes that end sessions go last: each of their runs with a valid token makes a spare
  // account, and every route that lists accounts would read all of them.
  const ops = (await operations(t)).sort((a, b) =>
    Number(ENDS_SESSIONS.test(`${a.method} ${a.path}`)) -
    Number(ENDS_SESSIONS.test(`${b.method} ${b.path}`))
  );
  assert.ok(ops.length >= 50, `only ${ops.length} operations in the document`);

  // Every operation is tried with every one of these, so no route misses a kind of credential.
  const credentials: { headers: Record<string, string>; valid: boolean }[] = [
    { headers: { authorization: `Bearer ${owner.token}` }, valid: true },
    { headers: { authorization: `Bearer ${plain.token}` }, valid: true },
    {
      headers: { authorization: "Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      valid: false,
    },
    { headers: { authorization: "Basic dXNlcjpwYXNz" }, valid: false },
    { headers: { "x-service-token": t.deps.config.serviceToken! }, valid: true },
    { headers: { "x-service-token": "wrong" }, valid: false },
    { headers: {}, valid: false },
  ];
  const body = (props: string[]) =>
    fc.oneof(
      // The route's own fields, each with a hostile value.
      fc.record(Object.fromEntries(props.map((p) => [p, hostileValue])), {
        requiredKeys: [],
      }).map((b) => JSON.stringify(b)),
      fc.anything().map((v) => JSON.stringify(v) ?? "null"),
      fc.constantFrom("{", "[1,", '{"a":1}}', "null", "\u0000", '"text"', "{}".repeat(1000)),
      fc.uint8Array({ maxLength: 64 }),
      fc.constant(undefined),
    );

  let requests = 0;
  const statuses = new Map<number, number>();
  for (const op of ops) {
    for (const credential of credentials) {
      const arb = fc.record({
        params: fc.array(param, { minLength: 4, maxLength: 4 }),
        query: fc.array(fc.tuple(fc.constantFrom(...op.query, "q", "x", "status"), hostileText), {
          maxLength: 3,
        }),
        headers: fc.constant(credential.headers),
        type: contentType,
        body: body(op.bodyProps),
        extra: fc.dictionary(
          fc.constantFrom("range", "if-none-match", "if-range", "x-file-name", "x-file-label"),
          fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
          { maxKeys: 2 },
        ),
      });
      await fc.assert(
        fc.asyncProperty(arb, async (r) => {
          let i = 0;
          const path = op.path.replace(/\{[^}]+\}/g, () => r.params[i++]);
          const qs = new URLSearchParams(r.query).toString();
          const headers: Record<string, string> = { ...r.extra, ...r.headers };
          // Routes that end sessions or the account get a throwaway account's token, so the
          // valid tokens keep working for every other route.
          if (ENDS_SESSIONS.test(`${op.method} ${op.path}`) && headers.authorization) {
            const own = headers.authorization.endsWith(owner.token) ||
              headers.authorization.endsWith(plain.token);
            if (own) {
              const spare = await t.account(`spare${requests}@example.org`, { name: "Spare" });
              headers.authorization = `Bearer ${spare.token}`;
            }
          }
          if (r.type) headers["content-type"] = r.type;
          const hasBody = !["GET", "HEAD"].includes(op.method) && r.body !== undefined;
          const res = await t.app.request(
            `${path}${qs ? `?${qs}` : ""}`,
            { method: op.method, headers, body: hasBody ? r.body as BodyInit : undefined },
            { remoteAddr: { hostname: `198.51.100.${requests % 250}` } },
          );
          requests++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const text = await res.text();
          const where = `${op.method} ${path} -> ${res.status}: ${text.slice(0, 200)}`;
          assert.ok(res.status < 500, where);
          // Other products' ping addresses answer in their own form (plain text, `{ok, msg}`).
          if (res.status >= 400 && !op.foreign) {
            assert.match(res.headers.get("content-type") ?? "", /application\/json/, where);
            assert.equal(typeof JSON.parse(text).error, "string", where);
          }
        }),
        { numRuns: credential.valid ? RUNS.valid : RUNS.invalid },
      );
    }
  }
  assert.ok(requests >= 5000, `${requests} requests`);
  assert.ok((statuses.get(401) ?? 0) < requests * 0.6, "valid tokens stayed valid");
  if (Deno.env.get("SHOW_FIGURES")) {
    console.log(`fuzz: ${requests} requests`, JSON.stringify([...statuses].sort()));
  }
  // The fuzz reached past validation too, not only 400s.
  assert.ok([...statuses.keys()].some((s) => s < 300), JSON.stringify([...statuses]));
});
