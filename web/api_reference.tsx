/**
 * The API reference (/api-reference): GET /api/openapi.json rendered by Swagger UI, whose
 * files come from the npm package swagger-ui-dist and are served by the service itself
 * (/static/swagger-ui-bundle.js, /static/swagger-ui.css): no other origin is contacted.
 * The page works without JavaScript too: it links the raw document.
 */
import type { Deps } from "../lib/deps.ts";
import { assetUrl } from "./_static.ts";
import { swaggerAssets } from "./_swagger.ts";
import { webRouter } from "./_web.tsx";

export function apiReferencePages(_deps: Deps) {
  const app = webRouter();
  swaggerAssets(); // the page names the viewer's files by their hash

  app.get("/api-reference", (c) =>
    c.render(
      <>
        <h1>API reference</h1>
        <p>
          The JSON API under <code>/api</code>, described by{" "}
          <a href="/api/openapi.json">its OpenAPI document</a>. Account calls take a bearer token
          (<code>Authorization: Bearer …</code>) from a sign-in link; this site's pages do not use
          it.
        </p>
        <div id="swagger" class="swagger"></div>
        <script src={assetUrl("swagger-ui-bundle.js")} defer></script>
      </>,
      {
        title: "API reference",
        canonical: "/api-reference",
        description: "The service's JSON API, described by its OpenAPI document.",
        styles: [assetUrl("swagger-ui.css")],
        scripts: ["api-reference.js"],
      },
    ));

  return app;
}
