import { HTTPException } from "hono/http-exception";
import { bodyLimit } from "hono/body-limit";
import { ConflictError, isLocked } from "./kv/_atomic.ts";
import type { Deps } from "./lib/deps.ts";
import { ApiError } from "./lib/errors.ts";
import { type AppEnv, router } from "./routes/_api.ts";
import type { OpenApiHono } from "./routes/_openapi.ts";
import { accountsRoutes } from "./routes/accounts.ts";
import { catalogueRoutes } from "./routes/catalogue.ts";
import { deviceRoutes } from "./routes/devices.ts";
import { filesRoutes } from "./routes/files.ts";
import { formsRoutes } from "./routes/forms.ts";
import { formsPageRoutes } from "./routes/forms_pages.ts";
import { healthRoutes } from "./routes/health.ts";
import { meRoutes } from "./routes/me.ts";
import { pageRoutes } from "./routes/pages.ts";
import { servicesRoutes } from "./routes/services.ts";
import { signInRoutes } from "./routes/sign_in.ts";

/** JSON bodies larger than this answer 413 (uploads have limits of their own). */
export const JSON_BODY_LIMIT = 1024 * 1024;
/** Routes that take raw bytes and enforce their own size limits. */
const RAW_BODY = [/^\/api\/me\/files$/, /^\/api\/me\/avatar$/];

/** Builds the whole service over the given dependencies; nothing here touches globals. */
export function createApp(deps: Deps): OpenApiHono<AppEnv> {
  const app = router();

  app.use("*", async (c, next) => {
    await next();
    c.header("X-Content-Type-Options", "nosniff");
  });

  const limited = bodyLimit({
    maxSize: JSON_BODY_LIMIT,
    onError: (c) => c.json({ error: `body over ${JSON_BODY_LIMIT} bytes` }, 413),
  });
  app.use("/api/*", async (c, next) => {
    if (RAW_BODY.some((r) => r.test(c.req.path))) return await next();
    return await limited(c, next);
  });

  const api = router();
  api.route("/", healthRoutes(deps));
  api.route("/", signInRoutes(deps));
  api.route("/", deviceRoutes(deps));
  api.route("/", meRoutes(deps));
  api.route("/", accountsRoutes(deps));
  api.route("/", catalogueRoutes(deps));
  api.route("/", servicesRoutes(deps));
  api.route("/", filesRoutes(deps));
  api.route("/", formsRoutes(deps));
  app.route("/api", api);
  app.route("/", pageRoutes(deps));
  app.route("/", formsPageRoutes(deps));

  app.doc("/api/openapi.json", {
    info: {
      title: "Community catalogue service",
      version: "1",
      description: "Catalogue, accounts, watched services, files and public forms. " +
        "Errors are `{error}`; see docs/api.md.",
    },
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", description: "Device token from GET /api/verify" },
      serviceToken: { type: "apiKey", in: "header", name: "X-Service-Token" },
    },
  });

  app.notFound((c) => {
    const allowed = methodsFor(app, c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      c.header("Allow", allowed.join(", "));
      return c.json({ error: `method ${c.req.method} not allowed here` }, 405);
    }
    return c.json({ error: "not found" }, 404);
  });

  app.onError((err, c) => {
    if (err instanceof ApiError) {
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      return c.json({ error: err.message, ...err.extra }, err.status);
    }
    if (err instanceof HTTPException) {
      // Hono's own validators: unreadable JSON, or a body that is not JSON.
      const status = err.status === 415 ? 400 : err.status;
      const message = err.status === 415 || /json/i.test(err.message)
        ? "body must be a JSON object (Content-Type: application/json)"
        : err.message || "bad request";
      return c.json({ error: message }, status);
    }
    if (err instanceof ConflictError) {
      c.header("Retry-After", "1");
      return c.json({ error: err.message }, 503);
    }
    if (err instanceof Deno.errors.BadResource || isLocked(err)) {
      // The KV is closed or stays locked: the database does not answer, as healthz says.
      c.header("Retry-After", "5");
      return c.json({ error: "the database does not answer; try again later" }, 503);
    }
    // A bug: the route pattern only (paths may hold secrets), never bodies or addresses.
    console.error(`error in ${c.req.method} ${c.req.routePath}:`, err);
    return c.json({ error: "internal error" }, 500);
  });

  return app;
}

type Matcher = { method: string; re: RegExp };
const matchers = new WeakMap<object, Matcher[]>();

/** Methods that some route answers for this path, for 405 and its Allow header. */
function methodsFor(app: OpenApiHono<AppEnv>, path: string): string[] {
  let list = matchers.get(app);
  if (!list) {
    list = app.routes
      .filter((r) => r.method !== "ALL" && r.path.startsWith("/"))
      .map((r) => ({
        method: r.method,
        re: new RegExp(
          "^" + r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+")
            .replace(/\\\*|\*/g, ".*") +
            "/?$",
        ),
      }));
    matchers.set(app, list);
  }
  const found = new Set(list.filter((m) => m.re.test(path)).map((m) => m.method));
  if (found.has("GET")) found.add("HEAD");
  return [...found];
}
