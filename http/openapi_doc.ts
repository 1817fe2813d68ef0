/**
 * The OpenAPI 3.1 document of the recorded routes (http/openapi.ts), built by @hono/zod-openapi
 * on the first request for it. Only app.ts imports this module, then: the library loads its
 * OpenAPI builder on import.
 */
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import {
  type DocConfig,
  docStats,
  impliedErrors,
  operationId,
  type RouteConfig,
} from "./openapi.ts";

type Def = { path: string; route: RouteConfig };
type Scheme = Parameters<OpenAPIHono["openAPIRegistry"]["registerComponent"]>[2];

/** Every route's operation: its own answers and those the app gives for its parts, in order. */
export function buildDocument(defs: Def[], config: DocConfig): Record<string, unknown> {
  docStats.builds++;
  const doc = new OpenAPIHono();
  for (const [name, scheme] of Object.entries(config.securitySchemes ?? {})) {
    doc.openAPIRegistry.registerComponent("securitySchemes", name, scheme as Scheme);
  }
  for (const { path, route } of defs) {
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
      operationId: route.operationId ?? operationId(route.method, path),
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
