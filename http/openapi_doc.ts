/**
 * The OpenAPI 3.1 document of the recorded routes (http/openapi.ts), built by @hono/zod-openapi
 * on the first request for it. Only app.ts imports this module, then: the library loads its
 * OpenAPI builder on import.
 */
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { Hono } from "hono";
import { mergePath } from "hono/utils/url";
import { isJson, OpenApiHono, type RouteConfig } from "./openapi.ts";

type Info = { title: string; version: string; description?: string };
export type DocConfig = {
  info: Info;
  servers?: { url: string; description?: string }[];
  /** Error answers every operation can give, by the route's parts (see `impliedErrors`). */
  errorResponse?: (code: number) => RouteConfig["responses"][number];
  securitySchemes?: Record<string, Record<string, unknown>>;
};

/** Counts builds, so tests can prove the document is made once. */
export const docStats = { builds: 0 };

type Scheme = Parameters<OpenAPIHono["openAPIRegistry"]["registerComponent"]>[2];

/**
 * Every route's operation, each app's under its mount path: its own answers and those the app
 * gives for its parts, in order.
 */
export function buildDocument(
  // deno-lint-ignore no-explicit-any
  apps: [string, Hono<any>][],
  config: DocConfig,
): Record<string, unknown> {
  docStats.builds++;
  const doc = new OpenAPIHono();
  for (const [name, scheme] of Object.entries(config.securitySchemes ?? {})) {
    doc.openAPIRegistry.registerComponent("securitySchemes", name, scheme as Scheme);
  }
  const defs = apps.flatMap(([base, app]) =>
    app instanceof OpenApiHono ? app.defs.map((d) => [base, d] as const) : []
  );
  for (const [base, { path: own, route }] of defs) {
    const path = mergePath(base, own);
    const responses: RouteConfig["responses"] = { ...route.responses };
    if (config.errorResponse) {
      for (const code of impliedErrors(route)) responses[code] ??= config.errorResponse(code);
    }
    const sorted = Object.fromEntries(
      Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
    );
    const operation = {
      method: route.method,
      path,
      tags: route.tags,
      summary: route.summary,
      description: route.description,
      operationId: operationId(route.method, path),
      // A public operation says so: no security requirement at all, not "unspecified".
      security: route.security ?? [],
      request: route.request,
      responses: sorted,
    };
    doc.openapi(createRoute(operation as Parameters<typeof createRoute>[0]), (c) => c.body(null));
  }
  return doc.getOpenAPI31Document({
    openapi: "3.1.0",
    info: config.info,
    ...(config.servers ? { servers: config.servers } : {}),
  }) as unknown as Record<string, unknown>;
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
