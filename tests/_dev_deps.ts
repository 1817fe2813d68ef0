/**
 * The packages only tests and benchmarks use. They are not in deno.json's imports: `deno task`
 * installs every package of deno.json and deno.lock before running any task, so listing them
 * there made the first `deno task start` on a server download them too. They are pinned in
 * deno.dev.lock instead, which the test, check and bench tasks use (`--lock=deno.dev.lock`);
 * deno.lock holds only what the server runs (tests/deps_test.ts keeps it so).
 */
export { SMTPServer, type SMTPServerOptions } from "npm:smtp-server@^3.14.0";
/**
 * The benchmarks' load generator and the engine of `@redocly/cli lint` (tests/openapi_lint_test.ts),
 * loaded when asked for: every test worker imports this module, and the two cost about half a
 * second of CPU to load in each (docs/performance.md, "The test suite").
 */
// deno-lint-ignore no-import-prefix
export const loadAutocannon = async () => (await import("npm:autocannon@^8.0.0")).default;
// deno-lint-ignore no-import-prefix
export const loadRedocly = () => import("npm:@redocly/openapi-core@^2.64.0");
// Browser tests (tests/_browser.ts): Chromium inside its npm package, the driver, axe-core.
export { default as chromium } from "npm:@sparticuz/chromium@^153.0.0";
export {
  type Browser,
  type BrowserContext,
  type CDPSession,
  default as puppeteer,
  type ElementHandle,
  type Page,
} from "npm:puppeteer-core@^25.16.0";
// The minified build: its `source` is what each checked page receives, and half the size.
export { default as axe } from "npm:axe-core@^4.14.1/axe.min.js";
/**
 * A real OpenID provider for the provider sign-in tests (tests/_providers.ts), loaded when asked
 * for. The tests run it in its development mode on purpose (in-memory store, its own keys and
 * login pages), and the package says so on standard error, as it says on import that Deno is not
 * Node.js: advice for its operators, lines that would alarm a reader of a green run. From the
 * load on, console lines that begin with "oidc-provider " are dropped; any other passes.
 */
export async function loadOidcProvider() {
  for (const level of ["warn", "info"] as const) {
    const write = console[level];
    if (write.name === "withoutOidcAdvice") continue; // a second load
    console[level] = function withoutOidcAdvice(...args: unknown[]) {
      if (!String(args[0]).startsWith("oidc-provider ")) write(...args);
    };
  }
  // Inline like the exports above: test packages stay out of deno.json (see the top).
  // deno-lint-ignore no-import-prefix
  return (await import("npm:oidc-provider@^9.5.0")).default;
}
// JSON-LD expansion (the AMB records) and a W3C DOM parser for XML (Atom feeds, OAI-PMH).
export { default as jsonld } from "npm:jsonld@^9.0.0";
export { DOMParser } from "npm:@xmldom/xmldom@^0.9.12";
