import { z } from "zod";
import type { Context } from "hono";
import type { Account } from "../kv/accounts/accounts.ts";
import type { Session } from "../kv/accounts/sessions.ts";
import { fail } from "./errors.ts";
import { refusal, speakPlainly } from "./words.ts";
import { createRoute, type Hook, OpenApiHono, type RouteConfig } from "./openapi.ts";

export { createRoute, type RouteConfig };

/** What guards put on the request context. */
export type AppEnv = {
  Variables: {
    /** Set by requireToken / optionalToken / requireTeam (bearer) / requireOwner. */
    account: Account;
    session: Session & { hash: string };
    /** Set by requireTeam: who acts for the team. */
    team: { via: "service" } | { via: "account"; account: Account };
  };
};

export type Ctx = Context<AppEnv>;

/** What a request part is called when the whole of it is at fault. */
const WHOLE: Record<string, string> = { json: "body", query: "query", header: "headers" };

/**
 * Turns a failed validation into 400 `{error, field}` in plain words (http/words.ts), or 404
 * for a malformed path id.
 */
const validationHook: Hook<AppEnv> = (result, c) => {
  if (result.success) return;
  if (result.target === "param") return c.json({ error: "not found" }, 404);
  return c.json(refusal(result.error, WHOLE[result.target] ?? result.target), 400);
};

/** A sub-app whose routes are validated by zod and described in the OpenAPI document. */
export function router(): OpenApiHono<AppEnv> {
  // Every schema an area validates with refuses in plain words.
  speakPlainly();
  return new OpenApiHono<AppEnv>(validationHook);
}

const ErrorSchema = z.object({ error: z.string() }).meta({ id: "Error" });

const described: Record<number, string> = {
  400: "Invalid input; `error` names the field",
  401: "No valid bearer token",
  403: "Not allowed for this account",
  404: "Not found",
  409: "Conflict with the current state",
  410: "Link used, expired or unknown",
  411: "Content-Length required",
  413: "Too large",
  415: "Unsupported type",
  416: "Range not satisfiable",
  405: "Method not allowed here; see Allow",
  429: "Rate limit reached; see Retry-After",
  503: "Database unavailable",
};

/** OpenAPI entries for error answers. */
export function errors(...codes: (keyof typeof described)[]) {
  return Object.fromEntries(codes.map((code) => [code, {
    description: described[code],
    content: { "application/json": { schema: ErrorSchema } },
  }]));
}

/** A JSON response entry for createRoute. */
export function jsonResponse<T extends z.ZodType>(schema: T, description = "OK") {
  return { description, content: { "application/json": { schema } } };
}

/** A required JSON request body for createRoute. */
export function body<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { "application/json": { schema } } } };
}

/** Path parameter for integer ids: anything else answers 404. */
export const idParam = z.string().regex(/^[1-9][0-9]{0,14}$/).transform(Number).meta({
  example: "1",
});

/** Who may call a route, as the document says it (http/guards.ts `secured` applies the guard). */
export const SECURITY: Record<"bearer" | "team" | "hcApiKey", Record<string, string[]>[]> = {
  bearer: [{ bearer: [] }],
  team: [{ bearer: [] }, { serviceToken: [] }],
  hcApiKey: [{ hcApiKey: [] }],
};

/**
 * A route of Healthchecks' Management API (api/hc.ts): the document says it takes an
 * `X-Api-Key`; its handler checks the key for a read or a write, since a write's key may also
 * come in its JSON body, which only the handler reads.
 */
export function keyed<const R extends RouteConfig>(route: R) {
  return createRoute({ ...route, security: SECURITY.hcApiKey });
}

/** Query flag `?all=1`. */
export const flag = z.enum(["1", "0", "true", "false"]).optional()
  .transform((v) => v === "1" || v === "true");

export const notJson = () => fail(400, "body must be JSON");
