/**
 * Routes declared and typed as @hono/zod-openapi's, validated as it does by Hono's validator and
 * zod. The library builds the document from the recorded routes, imported on the first request
 * for it only (http/openapi_doc.ts): on the routes it costs memory (docs/performance.md, its
 * "Figures that earn a choice").
 */
import { type Context, type Env, Hono, type MiddlewareHandler, type ValidationTargets } from "hono";
import type { Hook as Checked, RouteConfig as Declared, RouteHandler } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { validator } from "hono/validator";
import { z } from "zod";
import { JSON_BODY_LIMIT, limitBody } from "./body.ts";
import { receivingUpload } from "../lib/metrics.ts";

export type RouteConfig = Declared & {
  /** false: the request's parts are described, not validated (the pings read their own). */
  validate?: false;
  /** JSON_BODY_LIMIT unless given; "own": the handler caps its body; "upload": so, and counted. */
  bodyLimit?: number | "own" | "upload";
};
/** Keeps the route's literal types, so that handlers see what its schemas validate. */
export const createRoute = <const R extends RouteConfig>(route: R): R => route;
export type Hook<E extends Env> = Checked<unknown, E, string, Response | void>;
const JSON_TYPE = /^application\/([a-z-\.]+\+)?json(;\s*[a-zA-Z0-9\-]+\=([^;]+))*$/i;
export const isJson = (type: string) => JSON_TYPE.test(type);
const UNSUPPORTED = { message: "Unsupported Media Type" };

/** Query, path and headers, then a JSON body, after the route's own middleware. */
function validators<E extends Env>(route: RouteConfig, hook: Hook<E>): MiddlewareHandler[] {
  const check = (target: keyof ValidationTargets, schema: z.ZodType) =>
    validator(target as "json", async (value, c) => {
      const result = await schema.safeParseAsync(value);
      return hook({ ...result, target }, c as Context<E>) ??
        (result.success ? result.data : c.json({ error: "invalid" }, 400));
    }) as MiddlewareHandler;
  const req = route.validate === false ? undefined : route.request;
  const parts = [["query", req?.query], ["param", req?.params], ["header", req?.headers]] as const;
  const list = parts.filter(([, s]) => s).map(([t, s]) => check(t, s as z.ZodType));
  const media = Object.entries(req?.body?.content ?? {}).find(([type]) => isJson(type))?.[1];
  const schema = media && "schema" in media ? media.schema : undefined;
  if (!(schema instanceof z.ZodType)) return list;
  const body = check("json", schema);
  return [...list, async (c, next) => {
    const type = c.req.header("content-type");
    // A route with a JSON body takes JSON only: any other body, or one without a type, is 415.
    const sent = async () => c.req.raw.body !== null && (await c.req.arrayBuffer()).byteLength > 0;
    if (type ? !isJson(type) : await sent()) throw new HTTPException(415, UNSUPPORTED);
    if (type || req?.body?.required) return await body(c, next);
    c.req.addValidatedData("json", {});
    await next();
  }];
}

/** First in a route's chain, before its guards; a GET reads no body, so it has none. */
function bodyLimitOf({ bodyLimit, method }: RouteConfig): MiddlewareHandler[] {
  if (bodyLimit === "upload") return [(_c, next) => receivingUpload(next)];
  const max = bodyLimit ?? (method === "get" ? "own" : JSON_BODY_LIMIT);
  return max === "own" ? [] : [limitBody(max)];
}

/** A Hono app whose `openapi(route, handler)` validates and records the route. */
export class OpenApiHono<E extends Env> extends Hono<E> {
  readonly defs: { path: string; route: RouteConfig }[] = [];
  constructor(readonly hook: Hook<E>) {
    super();
  }

  openapi<const R extends RouteConfig>(
    route: R,
    handler: (c: Parameters<RouteHandler<R, E>>[0]) => Response | Promise<Response>,
  ): this {
    this.defs.push({ path: route.path, route });
    const own = [route.middleware ?? []].flat();
    const chain = [...bodyLimitOf(route), ...own, ...validators(route, this.hook), handler];
    const path = route.path.replaceAll(/\/{(.+?)}/g, "/:$1");
    (this.on as (...a: unknown[]) => unknown)(route.method.toUpperCase(), path, ...chain);
    return this;
  }
}
