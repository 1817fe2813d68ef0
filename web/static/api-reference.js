// Renders /api/openapi.json with Swagger UI (its bundle is loaded by the page from this
// service, as a deferred script).
function start() {
  const root = document.getElementById("swagger");
  if (!root || !globalThis.SwaggerUIBundle) return;
  globalThis.SwaggerUIBundle({
    url: "/api/openapi.json",
    domNode: root,
    deepLinking: true,
    // Nothing is sent to a validator elsewhere.
    validatorUrl: null,
  });
}
// Module scripts run before the deferred bundle when they come first in the page: wait.
if (globalThis.SwaggerUIBundle) start();
else addEventListener("load", start, { once: true });
