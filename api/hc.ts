import { z } from "zod";
import type { MiddlewareHandler } from "hono";
import { getAccount } from "../kv/accounts/accounts.ts";
import { countMigrations } from "../kv/store/migrations.ts";
import { API_KEY_LENGTH, findApiKey, spendApiCall } from "../kv/service/api_keys.ts";
import {
  checkOf,
  createCheck,
  deleteCheck,
  findCheck,
  type HcCaller,
  type HcVersion,
  listBadges,
  listChecks,
  listFlips,
  listHcChannels,
  listPings,
  pauseCheck,
  pingBody,
  resumeCheck,
  updateCheck,
} from "../kv/service/hc_checks.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { FlipsQuery, HcSpecBody, specError } from "../http/hc_inputs.ts";
import { type AppEnv, createRoute, type Ctx, jsonResponse, keyed, router } from "../http/router.ts";

/**
 * Healthchecks' Management API, v1, v2 and v3 (`/api/v<n>/...`), as its documentation and
 * tests describe it: its paths, fields, statuses, error texts and CORS. Each route reads its
 * key, then calls one function of kv/service/hc_checks.ts, the mapping over the same services as the
 * native API. docs/api.md lists where it differs, and why.
 */

const HcError = z.object({ error: z.string() }).meta({ id: "HealthchecksError" });
const answers = (codes: number[]) =>
  Object.fromEntries(codes.map((code) => [code, {
    description: ({
      400: "The request is not well-formed, violates schema, or uses invalid field values",
      401: "The API key is either missing or invalid (`missing api key`, `wrong api key`)",
      403: "The account has hit its check limit",
      404: "The specified check does not exist (or is another account's)",
      405: "Another method",
      409: "The specified check is currently not in a paused state",
      429: "More than 100 calls a minute",
    } as Record<number, string>)[code],
    content: { "application/json": { schema: HcError } },
  }]));

const Check = z.record(z.string(), z.unknown()).meta({
  id: "HealthchecksCheck",
  description: "A check as Healthchecks' to_dict answers it: name, slug, tags, desc, grace, " +
    "n_pings, status (new, started (v1), up, grace, down, paused), started, last_ping, " +
    "next_ping, manual_resume, methods, keyword fields, badge_url, last_duration (when " +
    "known), timeout or schedule and tz; with a read-write key uuid, ping_url, update_url, " +
    "pause_url, resume_url and channels; with a read-only key unique_key instead",
});
const Ping = z.record(z.string(), z.unknown()).meta({ id: "HealthchecksPing" });
const { $schema: _dialect, ...specDoc } = z.toJSONSchema(HcSpecBody, {
  io: "input",
  unrepresentable: "any",
});
const postBody = {
  // A JSON Schema, not zod: described only, since the handler reads the body itself.
  body: { required: false, content: { "application/json": { schema: specDoc as object } } },
};
/** The API version of the path: v1, v2 and v3 answer alike but for what each version changed. */
const version = z.enum(["v1", "v2", "v3"]).meta({ description: "API version: v1, v2 or v3" });
const ver = z.object({ version });
const code = z.object({ version, code: z.string() });
const versionOf = (c: Ctx) => Number(c.req.param("version")!.slice(1)) as HcVersion;

/** Access-Control-Allow-Methods of each path, as Healthchecks' `cors` decorator gives them. */
const CORS: [RegExp, string[]][] = [
  [/^\/checks\/?$/, ["GET", "POST"]],
  [/^\/checks\/[^/]+$/, ["POST", "DELETE", "GET"]],
  [/^\/checks\/[^/]+\/(pause|resume)$/, ["POST"]],
  [/^\/checks\/[^/]+\/pings\/?$/, ["GET"]],
  [/^\/checks\/[^/]+\/pings\/[^/]+\/body$/, ["GET"]],
  [/^\/checks\/[^/]+\/flips\/?$/, ["GET"]],
  [/^\/(channels|badges)\/?$/, ["GET"]],
];

/**
 * CORS on every answer of the checks, pings, flips, channels and badges paths (any origin,
 * the `X-Api-Key` header, ten minutes), OPTIONS answered 204, another method 405.
 */
const cors: MiddlewareHandler<AppEnv> = async (c, next) => {
  const rest = c.req.path.replace(/^\/api\/v[123]/, "");
  const methods = CORS.find(([re]) => re.test(rest))?.[1];
  if (!methods) return await next();
  const headers = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Headers": "X-Api-Key",
    "Access-Control-Allow-Methods": [...methods, "OPTIONS"].join(", "),
    "Access-Control-Max-Age": "600",
  };
  if (c.req.method === "OPTIONS") return c.body(null, 204, headers);
  if (!methods.includes(c.req.method)) {
    return c.json({ error: `method ${c.req.method} not allowed here` }, 405, {
      ...headers,
      Allow: [...methods, "OPTIONS"].join(", "),
    });
  }
  await next();
  for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
};

/** The key of a read (X-Api-Key only), or of a write (also `api_key` in a POST's JSON body). */
async function authorize(
  deps: Deps,
  c: Ctx,
  v: HcVersion,
  mode: "read" | "write",
): Promise<{ caller: HcCaller; body: Record<string, unknown> }> {
  let body: Record<string, unknown> = {};
  if (mode === "write" && c.req.method === "POST") {
    const text = await c.req.text();
    if (text !== "") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        fail(400, "could not parse request body");
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        fail(400, "json validation error: value is not an object");
      }
      body = parsed as Record<string, unknown>;
    }
  }
  const header = c.req.header("x-api-key");
  // Only a string is a key: Healthchecks reads `str(api_key)`, so an array or a number is
  // never 32 characters there ("missing api key"), while JavaScript's String(["k"]) is "k".
  const key = header ?? (typeof body.api_key === "string" ? body.api_key : "");
  if (key.length !== API_KEY_LENGTH) fail(401, "missing api key");
  const holder = await findApiKey(deps.kv, key);
  if (!holder || (mode === "write" && holder.readonly)) fail(401, "wrong api key");
  const account = (await getAccount(deps.kv, holder.account)).value;
  if (!account) fail(401, "wrong api key");
  await spendApiCall(deps.kv, account.id, deps.clock.now());
  return { caller: { account, readonly: holder.readonly, v }, body };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SHA1 = /^[A-Za-z0-9]{40}$/;

/** The check a path names: a uuid, or (reads) a unique_key; else 404. */
function checkId(raw: string, mode: "read" | "write") {
  if (UUID.test(raw)) return { uuid: raw };
  if (mode === "read" && SHA1.test(raw)) return { uniqueKey: raw };
  return fail(404, "not found");
}

/** The spec of a create or update, or 400 in Healthchecks' words. */
function specOf(body: Record<string, unknown>) {
  const { api_key: _key, ...rest } = body;
  const parsed = HcSpecBody.safeParse(rest);
  if (!parsed.success) fail(400, specError(parsed.error));
  return parsed.data;
}

function checkRoutes(app: ReturnType<typeof router>, deps: Deps) {
  const p = (path: string) => `/{version}${path}`;
  const tags = ["healthchecks"];
  const read = (c: Ctx) => authorize(deps, c, versionOf(c), "read");
  const write = (c: Ctx) => authorize(deps, c, versionOf(c), "write");
  /** The key's caller and the check the path names (404 for none of the caller's). */
  const target = async (c: Ctx, mode: "read" | "write") => {
    const { caller, body } = await authorize(deps, c, versionOf(c), mode);
    const s = await findCheck(deps, caller.account.id, checkId(c.req.param("code")!, mode));
    return { caller, body, s };
  };

  for (const path of ["/checks/"]) {
    app.openapi(
      keyed({
        method: "get",
        path: p(path),
        tags,
        summary: "Healthchecks: list checks (?tag= repeated, ?slug=)",
        request: { params: ver },
        responses: {
          200: jsonResponse(z.object({ checks: z.array(Check) })),
          ...answers([401, 429]),
        },
      }),
      async (c) => {
        const { caller } = await read(c);
        const checks = await listChecks(deps, caller, {
          tags: c.req.queries("tag") ?? [],
          slug: versionOf(c) === 3 ? c.req.query("slug") : undefined,
        });
        return c.json({ checks }, 200);
      },
    );
    app.openapi(
      keyed({
        method: "post",
        path: p(path),
        tags,
        summary: "Healthchecks: create a check (201), or update the one unique finds (200)",
        request: { params: ver, ...postBody },
        responses: {
          201: jsonResponse(Check, "Created"),
          200: jsonResponse(Check, "An existing check was found and updated"),
          ...answers([400, 401, 403, 429]),
        },
      }),
      async (c) => {
        const { caller, body } = await write(c);
        const made = await createCheck(deps, caller, specOf(body));
        return c.json(made.check, made.created ? 201 : 200);
      },
    );
  }

  app.openapi(
    keyed({
      method: "get",
      path: p("/checks/{code}"),
      tags,
      summary: "Healthchecks: one check, by uuid or unique_key",
      request: { params: code },
      responses: { 200: jsonResponse(Check), ...answers([401, 404, 429]) },
    }),
    async (c) => {
      const { caller, s } = await target(c, "read");
      return c.json(await checkOf(deps, caller, s), 200);
    },
  );

  app.openapi(
    keyed({
      method: "post",
      path: p("/checks/{code}"),
      tags,
      summary: "Healthchecks: update a check (only the fields sent change)",
      request: { params: code, ...postBody },
      responses: { 200: jsonResponse(Check), ...answers([400, 401, 404, 405, 429]) },
    }),
    async (c) => {
      if (SHA1.test(c.req.valid("param").code)) fail(405, "method POST not allowed here");
      const { caller, body, s } = await target(c, "write");
      return c.json(await updateCheck(deps, caller, s, specOf(body)), 200);
    },
  );

  app.openapi(
    keyed({
      method: "delete",
      path: p("/checks/{code}"),
      tags,
      summary: "Healthchecks: delete a check; answers it as it was",
      request: { params: code },
      responses: { 200: jsonResponse(Check), ...answers([401, 404, 429]) },
    }),
    async (c) => {
      const { caller, s } = await target(c, "write");
      return c.json(await deleteCheck(deps, caller, s), 200);
    },
  );

  app.openapi(
    keyed({
      method: "post",
      path: p("/checks/{code}/pause"),
      tags,
      summary: "Healthchecks: pause a check",
      request: { params: code },
      responses: { 200: jsonResponse(Check), ...answers([401, 404, 429]) },
    }),
    async (c) => {
      const { caller, s } = await target(c, "write");
      return c.json(await pauseCheck(deps, caller, s), 200);
    },
  );

  app.openapi(
    keyed({
      method: "post",
      path: p("/checks/{code}/resume"),
      tags,
      summary: "Healthchecks: resume a paused check (409 when it is not paused)",
      request: { params: code },
      responses: { 200: jsonResponse(Check), ...answers([401, 404, 409, 429]) },
    }),
    async (c) => {
      const { caller, s } = await target(c, "write");
      const resumed = await resumeCheck(deps, caller, s);
      if (!resumed) fail(409, "check is not paused");
      return c.json(resumed, 200);
    },
  );

  for (const path of ["/checks/{code}/pings/"]) {
    app.openapi(
      keyed({
        method: "get",
        path: p(path),
        tags,
        summary: "Healthchecks: the check's kept pings, newest first",
        request: { params: code },
        responses: {
          200: jsonResponse(z.object({ pings: z.array(Ping) })),
          ...answers([401, 404, 429]),
        },
      }),
      async (c) => {
        const { caller, s } = await target(c, "write");
        return c.json({ pings: await listPings(deps, caller, s) }, 200);
      },
    );
  }

  app.openapi(
    keyed({
      method: "get",
      path: p("/checks/{code}/pings/{n}/body"),
      tags,
      summary: "Healthchecks: a ping's body, as text",
      request: { params: z.object({ version, code: z.string(), n: z.string() }) },
      responses: {
        200: { description: "The body", content: { "text/plain": { schema: { type: "string" } } } },
        ...answers([401, 404, 429]),
      },
    }),
    async (c) => {
      const { s } = await target(c, "write");
      const { n } = c.req.valid("param");
      if (!/^[0-9]{1,9}$/.test(n)) fail(404, "not found");
      const text = await pingBody(deps, s, Number(n));
      return c.text(text, 200, { "Content-Type": "text/plain" });
    },
  );

  for (const path of ["/checks/{code}/flips/"]) {
    app.openapi(
      keyed({
        method: "get",
        path: p(path),
        tags,
        summary: "Healthchecks: the check's status changes (?seconds=, ?start=, ?end=)",
        request: { params: code },
        responses: {
          200: jsonResponse(
            z.object({ flips: z.array(z.object({ timestamp: z.string(), up: z.number() })) }),
          ),
          ...answers([400, 401, 404, 429]),
        },
      }),
      async (c) => {
        const { s } = await target(c, "read");
        const filter = FlipsQuery.safeParse(c.req.query());
        if (!filter.success) fail(400, "invalid query parameters");
        return c.json({ flips: await listFlips(deps, s, filter.data) }, 200);
      },
    );
  }

  for (const path of ["/channels/"]) {
    app.openapi(
      keyed({
        method: "get",
        path: p(path),
        tags,
        summary: "Healthchecks: the account's integrations (webhook channels)",
        request: { params: ver },
        responses: {
          200: jsonResponse(z.object({
            channels: z.array(z.object({ id: z.string(), name: z.string(), kind: z.string() })),
          })),
          ...answers([401, 429]),
        },
      }),
      async (c) => {
        const { caller } = await write(c);
        return c.json({ channels: await listHcChannels(deps, caller.account.id) }, 200);
      },
    );
  }

  for (const path of ["/badges/"]) {
    app.openapi(
      keyed({
        method: "get",
        path: p(path),
        tags,
        summary: "Healthchecks: the project's badges, for `*` and every tag of its checks",
        description: "Each tag's svg, json and shields addresses (two states: up or down), and " +
          "svg3, json3 and shields3 (three: late too), as Healthchecks lists them; under " +
          "/api/badges/<badge key>/<signature>[/<tag>].<format>",
        request: { params: ver },
        responses: {
          200: jsonResponse(z.object({
            badges: z.record(
              z.string(),
              z.object({
                svg: z.string(),
                svg3: z.string(),
                json: z.string(),
                json3: z.string(),
                shields: z.string(),
                shields3: z.string(),
              }),
            ),
          })),
          ...answers([401, 429]),
        },
      }),
      async (c) => {
        const { caller } = await read(c);
        return c.json({ badges: await listBadges(deps, caller.account.id) }, 200);
      },
    );
  }

  for (const path of ["/status/"]) {
    app.openapi(
      createRoute({
        method: "get",
        path: p(path),
        tags,
        summary: "Healthchecks: database connectivity; answers OK",
        request: { params: ver },
        responses: {
          200: { description: "OK", content: { "text/plain": { schema: { type: "string" } } } },
        },
      }),
      async (c) => {
        // As Healthchecks' SELECT 1: the database answers.
        await countMigrations(deps.kv);
        return c.text("OK", 200);
      },
    );
  }
}

export function hcRoutes(deps: Deps) {
  const app = router();
  for (const v of [1, 2, 3] as const) app.use(`/v${v}/*`, cors);
  checkRoutes(app, deps);
  return app;
}
