/**
 * Routes in @hono/zod-openapi's `createRoute` shape, validated by Hono's validator and zod as
 * the library does. The library builds the document from the recorded routes, imported on
 * its first request only (http/openapi_doc.ts): on the routes it would cost every process that
 * serves the API memory (docs/performance.md, "Start-up and the request path").
 */
import { type Context, type Env, Hono, type MiddlewareHandler } from "hono";
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
  /** false: the request's parts are described, not validated (the pings read their own). */
  validate?: false;
  /** JSON_BODY_LIMIT unless given; "own": the handler caps its body; "upload": so, and counted. */
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
export const createRoute = <const R extends RouteConfig>(route: R): R => route;

type Req<R extends RouteConfig> = NonNullable<R["request"]>;
type Targets = { params: "param"; query: "query"; headers: "header" };
type Out<R extends RouteConfig> =
  & { [K in keyof Req<R> & keyof Targets as Targets[K]]: z.output<Req<R>[K] & Schema> }
  & (Req<R> extends
    { body: { content: { "application/json": { schema: infer S extends Schema } } } }
    ? { json: z.output<S> }
    : unknown);

/** What a route handler sees: `c.req.valid(target)` typed from the route's schemas. */
type RouteContext<E extends Env, R extends RouteConfig> = Context<
  E,
  string,
  { in: Record<string, never>; out: Out<R> }
>;

type Result = ({ success: true; data: unknown } | { success: false; error: z.ZodError }) & {
  target: string;
};
export type Hook<E extends Env> = (result: Result, c: Context<E>) => Response | void;

export const isJson = (type: string) => /^application\/([a-z-\.]+\+)?json/i.test(type);
const JSON_TYPE = /^application\/([a-z-\.]+\+)?json(;\s*[a-zA-Z0-9\-]+\=([^;]+))*$/i;
const accepts = (type: string, declared: string) =>
  isJson(declared) ? JSON_TYPE.test(type) : declared === "*/*" ||
    type.split(";")[0].trim().toLowerCase() === declared.toLowerCase();
const isZod = (schema: unknown): schema is z.ZodType => schema instanceof z.ZodType;

function check<E extends Env>(target: string, schema: z.ZodType, hook: Hook<E>) {
  return validator(target as "json", async (value, c) => {
    const result = await schema.safeParseAsync(value);
    return hook({ ...result, target }, c as Context<E>) ??
      (result.success ? result.data : c.json({ error: "invalid" }, 400));
  }) as MiddlewareHandler;
}

/** Query, path and headers, then a JSON body, after the route's own middleware. */
function validators<E extends Env>(route: RouteConfig, hook: Hook<E>): MiddlewareHandler[] {
  const req = route.validate === false ? undefined : route.request;
  const parts = [["query", req?.query], ["param", req?.params], ["header", req?.headers]] as const;
  const list = parts.filter(([, s]) => s).map(([t, s]) => check(t, s as z.ZodType, hook));
  const content = req?.body?.content ?? {};
  const json = Object.keys(content).find((t) => isJson(t) && isZod(content[t]?.schema));
  if (!json) return list;
  const body = check("json", content[json].schema as z.ZodType, hook);
  return [...list, async (c, next) => {
    const type = c.req.header("content-type");
    // A body of another type, or one without a type, is refused before it is parsed.
    const sent = async () => c.req.raw.body !== null && (await c.req.arrayBuffer()).byteLength > 0;
    if (type ? !Object.keys(content).some((t) => accepts(type, t)) : await sent()) {
      throw new HTTPException(415, { message: "Unsupported Media Type" });
    }
    if (req?.body?.required || (type && isJson(type))) return await body(c, next);
    c.req.addValidatedData("json", {});
    await next();
  }];
}

const defaultLimit = limitBody(JSON_BODY_LIMIT);
/** First in a route's chain, before its guards; a GET reads no body, so it has none. */
function bodyLimitOf({ bodyLimit: limit, method }: RouteConfig): MiddlewareHandler[] {
  if (limit === "upload") return [(_c, next) => receivingUpload(next)];
  if (limit === undefined) return method === "get" ? [] : [defaultLimit];
  return limit === "own" ? [] : [limitBody(limit)];
}

/** A Hono app whose `openapi(route, handler)` validates and records the route. */
export class OpenApiHono<E extends Env> extends Hono<E> {
  readonly defs: { path: string; route: RouteConfig }[] = [];
  constructor(readonly hook: Hook<E>) {
    super();
  }

  openapi<const R extends RouteConfig>(
    route: R,
    handler: (c: RouteContext<E, R>) => Response | Promise<Response>,
  ): this {
    this.defs.push({ path: route.path, route });
    const chain = [
      ...bodyLimitOf(route),
      ...(route.middleware ?? []),
      ...validators(route, this.hook),
      handler,
    ];
    const path = route.path.replaceAll(/\/{(.+?)}/g, "/:$1");
    (this.on as (...a: unknown[]) => unknown)(route.method.toUpperCase(), path, ...chain);
    return this;
  }

  // deno-lint-ignore no-explicit-any
  override route(path: string, app: Hono<any, any, any>): any {
    const base = path.replaceAll(/:([^/]+)/g, "{$1}");
    const defs = app instanceof OpenApiHono ? app.defs as typeof this.defs : [];
    for (const def of defs) this.defs.push({ ...def, path: mergePath(base, def.path) });
    return super.route(path, app);
  }
}
