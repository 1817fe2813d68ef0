/**
 * Routes declared with zod schemas that both validate requests and describe the OpenAPI 3.1
 * document, in the shape of @hono/zod-openapi's `createRoute`. This small layer validates and
 * records them; the document is built from the records by @hono/zod-openapi itself
 * (http/openapi_doc.ts), imported on the first request for it only: imported with the routes,
 * its OpenAPI builder would cost every process that serves the API 7.5 MiB (docs/performance.md).
 */
import { Hono } from "hono";
import type { Context, Env, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { validator } from "hono/validator";
import { mergePath } from "hono/utils/url";
import { z } from "zod";
import { JSON_BODY_LIMIT, limitBody } from "./body.ts";
import { receivingUpload } from "../lib/metrics.ts";

type Schema = z.ZodType;
type Content = Record<string, { schema?: unknown }>;

export type RouteConfig = {
  method: "get" | "post" | "put" | "patch" | "delete" | "head" | "options";
  path: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  /** Defaults to the method and path in camelCase (getMeFilesById). */
  operationId?: string;
  hide?: boolean;
  /**
   * false: the request's parts are described, not validated; the handler reads them itself (the
   * pings, for their cost).
   */
  validate?: false;
  /**
   * The largest body the route takes (JSON_BODY_LIMIT unless given); "own": it reads and caps
   * its own body; "upload": so, and counted as an upload while received (GET /metrics).
   */
  bodyLimit?: number | "own" | "upload";
  // deno-lint-ignore no-explicit-any
  middleware?: MiddlewareHandler<any, any, any>[];
  request?: {
    params?: Schema;
    query?: Schema;
    headers?: Schema;
    body?: { required?: boolean; description?: string; content: Content };
  };
  responses: Record<string | number, { description: string; content?: Content }>;
};

/** Keeps the route's literal types, so handlers see what its schemas validate. */
export function createRoute<const R extends RouteConfig>(route: R): R {
  return route;
}

type Req<R extends RouteConfig> = NonNullable<R["request"]>;
type Part<R extends RouteConfig, K extends string, T extends string> = Req<R> extends
  { [k in K]: infer S extends Schema } ? { [t in T]: z.output<S> }
  : Record<never, never>;
type JsonPart<R extends RouteConfig> = Req<R> extends
  { body: { content: { "application/json": { schema: infer S extends Schema } } } }
  ? { json: z.output<S> }
  : Record<never, never>;
type Out<R extends RouteConfig> =
  & Part<R, "params", "param">
  & Part<R, "query", "query">
  & Part<R, "headers", "header">
  & JsonPart<R>;

/** What a route handler sees: `c.req.valid(target)` typed from the route's schemas. */
type RouteContext<E extends Env, R extends RouteConfig> = Context<
  E,
  string,
  { in: Record<string, never>; out: Out<R> }
>;

type HookResult =
  | { success: true; data: unknown; target: string }
  | { success: false; error: z.ZodError; target: string };
export type Hook<E extends Env> = (
  result: HookResult,
  c: Context<E>,
) => Response | undefined | void;

const isJson = (type: string) => /^application\/([a-z-\.]+\+)?json/i.test(type);
const jsonRequest = /^application\/([a-z-\.]+\+)?json(;\s*[a-zA-Z0-9\-]+\=([^;]+))*$/i;

function matchesMediaType(contentType: string, mediaType: string): boolean {
  if (mediaType === "*/*") return true;
  if (isJson(mediaType)) return jsonRequest.test(contentType);
  const essence = contentType.split(";")[0].trim().toLowerCase();
  if (mediaType.endsWith("/*")) return essence.startsWith(mediaType.slice(0, -1).toLowerCase());
  return essence === mediaType.toLowerCase();
}

async function hasRequestBody(c: Context): Promise<boolean> {
  const raw = c.req.raw;
  if (raw.body === null) return false;
  if (raw.bodyUsed) return (await c.req.arrayBuffer()).byteLength > 0;
  const body = raw.clone().body;
  if (body === null) return false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.byteLength > 0) return true;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

type Target = "param" | "query" | "header" | "json";

function check<E extends Env>(target: Target, schema: Schema, hook: Hook<E>): MiddlewareHandler {
  return validator(target, async (value, c) => {
    let input: unknown = value;
    if (target === "header" && schema instanceof z.ZodObject) {
      // Header names arrive lower-cased; the schema may spell them otherwise.
      const keys = Object.fromEntries(Object.keys(schema.shape).map((k) => [k.toLowerCase(), k]));
      input = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [keys[k] ?? k, v]),
      );
    }
    const result = await schema.safeParseAsync(input);
    const answer = hook({ ...result, target } as HookResult, c as unknown as Context<E>);
    if (answer instanceof Response) return answer;
    if (!result.success) return c.json({ error: "invalid" }, 400);
    return result.data;
  });
}

/** Validators in the order the former library ran them, after the route's own middleware. */
function validators<E extends Env>(route: RouteConfig, hook: Hook<E>): MiddlewareHandler[] {
  const list: MiddlewareHandler[] = [];
  if (route.validate === false) return list;
  const req = route.request;
  if (req?.query) list.push(check("query", req.query, hook));
  if (req?.params) list.push(check("param", req.params, hook));
  if (req?.headers) list.push(check("header", req.headers, hook));
  const content = req?.body?.content;
  if (!content) return list;
  const types = Object.keys(content);
  const jsonType = types.find((t) => isJson(t) && content[t].schema instanceof z.ZodType);
  if (!jsonType) return list;
  // A body of another type, or one without a type, is refused before it is parsed.
  list.push(async (c, next) => {
    const type = c.req.header("content-type");
    if (type ? !types.some((t) => matchesMediaType(type, t)) : await hasRequestBody(c)) {
      throw new HTTPException(415, { message: "Unsupported Media Type" });
    }
    await next();
  });
  const json = check("json", content[jsonType].schema as Schema, hook);
  if (req?.body?.required) list.push(json);
  else {
    list.push(async (c, next) => {
      const type = c.req.header("content-type");
      if (type && isJson(type)) return await json(c, next);
      c.req.addValidatedData("json", {});
      await next();
    });
  }
  return list;
}

/** The default limit, made once: most routes take it. */
let defaultLimit: MiddlewareHandler | null = null;

/** A route that reads its own body: an upload, counted while it is received (GET /metrics). */
const upload: MiddlewareHandler = (_c, next) => receivingUpload(next);

/**
 * The route's body limit, first in its chain: before its guards, as before any reading. A GET
 * route reads no body (a body sent with one is never read), so it has none.
 */
function bodyLimitOf(route: RouteConfig): MiddlewareHandler[] {
  if (route.bodyLimit === "upload") return [upload];
  if (route.bodyLimit === "own") return [];
  if (route.method === "get" && route.bodyLimit === undefined) return [];
  if (route.bodyLimit === undefined) return [defaultLimit ??= limitBody(JSON_BODY_LIMIT)];
  return [limitBody(route.bodyLimit)];
}

type Info = { title: string; version: string; description?: string };
export type DocConfig = {
  info: Info;
  servers?: { url: string; description?: string }[];
  /** Error answers every operation can give, by the route's parts (see `impliedErrors`). */
  errorResponse?: (code: number) => { description: string; content?: Content };
  securitySchemes?: Record<string, Record<string, unknown>>;
};

/** A Hono app whose `openapi(route, handler)` validates and records the route. */
export class OpenApiHono<E extends Env> extends Hono<E> {
  readonly defs: { path: string; route: RouteConfig }[] = [];
  readonly #hook: Hook<E>;

  constructor(hook: Hook<E>) {
    super();
    this.#hook = hook;
  }

  openapi<const R extends RouteConfig>(
    route: R,
    handler: (c: RouteContext<E, R>) => Response | Promise<Response>,
  ): this {
    if (!route.hide) this.defs.push({ path: route.path, route });
    const path = route.path.replaceAll(/\/{(.+?)}/g, "/:$1");
    const chain = [
      ...bodyLimitOf(route),
      ...(route.middleware ?? []),
      ...validators(route, this.#hook),
      handler,
    ];
    (this.on as (method: string, path: string, ...h: unknown[]) => unknown)(
      route.method.toUpperCase(),
      path,
      ...chain,
    );
    return this;
  }

  // deno-lint-ignore no-explicit-any
  override route(path: string, app: Hono<any, any, any>): any {
    if (app instanceof OpenApiHono) {
      const base = path.replaceAll(/:([^/]+)/g, "{$1}");
      for (const def of app.defs) this.defs.push({ ...def, path: mergePath(base, def.path) });
    }
    return super.route(path, app);
  }
}

/** `getMeFilesById` from GET /api/me/files/{id}: unique per method and path. */
export function operationId(method: string, path: string): string {
  const rest = path === "/api" || path.startsWith("/api/") ? path.slice(4) : path;
  const words = rest.split("/").filter(Boolean).map((part) => {
    const param = part.match(/^{(.+)}$/);
    const word = (param ? `by_${param[1]}` : part).replace(
      /[^A-Za-z0-9]+(.)?/g,
      (_, c) => c ? c.toUpperCase() : "",
    );
    return word.charAt(0).toUpperCase() + word.slice(1);
  });
  return method.toLowerCase() + (words.join("") || "Root");
}

/**
 * Error answers the app gives for a route whatever its handler does: 400 for a query, header
 * or JSON body that does not validate (or a JSON body that is not JSON), 413 for a JSON body over
 * the app's limit, 401 for a route that needs a token.
 */
export function impliedErrors(route: RouteConfig): number[] {
  const codes: number[] = [];
  const req = route.request;
  const jsonBody = Object.keys(req?.body?.content ?? {}).some(isJson);
  if (req?.query || req?.headers || jsonBody) codes.push(400);
  if (jsonBody) codes.push(413);
  if (route.security?.length) codes.push(401);
  return codes;
}

/** Counts builds, so tests can prove the document is made once. */
export const docStats = { builds: 0 };
