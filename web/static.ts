/** The static files' area: web/static/ and the npm packages' files registered in web/_static.ts. */
import { HTTPException } from "hono/http-exception";
import type { Deps } from "../lib/deps.ts";
import { asset } from "./_static.ts";
import { webRouter } from "./_web.tsx";

/** GET /static/:name: the stylesheet, the ES modules, a viewer's files. */
export function staticRoutes(_deps: Deps) {
  const app = webRouter();
  app.get("/static/:name", async (c) => {
    const name = c.req.param("name");
    if (name.startsWith("swagger-ui")) (await import("./_swagger.ts")).swaggerAssets();
    const a = asset(name);
    if (!a) throw new HTTPException(404);
    const versioned = c.req.query("v") === a.hash;
    c.header("Content-Type", a.type);
    c.header("ETag", `"${a.hash}"`);
    c.header(
      "Cache-Control",
      versioned ? "public, max-age=31536000, immutable" : "public, max-age=300",
    );
    if (c.req.header("if-none-match") === `"${a.hash}"`) return c.body(null, 304);
    return c.body(a.body);
  });
  return app;
}
