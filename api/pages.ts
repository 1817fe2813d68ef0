import { Hono } from "hono";
import type { Deps } from "../lib/deps.ts";
import type { AppEnv } from "./_api.ts";

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<meta name="referrer" content="no-referrer"><title>${title}</title>` +
  `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}` +
  `code,pre{background:#f4f4f4;padding:.2rem .4rem;overflow-wrap:anywhere;white-space:pre-wrap}` +
  `</style></head><body>${body}</body></html>`;

/** The landing pages mailed links point at; the API behind them is /api. */
export function pageRoutes(_deps: Deps) {
  const app = new Hono<AppEnv>();

  app.get("/", (c) =>
    c.html(page(
      "Community catalogue",
      `<h1>Community catalogue</h1><p>The API is described at ` +
        `<a href="/api/openapi.json">/api/openapi.json</a>.</p>`,
    )));

  // The sign-in link lands here; the page completes it with GET /api/verify.
  app.get("/me", (c) => {
    c.header("Cache-Control", "no-store");
    c.header(
      "Content-Security-Policy",
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
    );
    return c.html(page(
      "Sign in",
      `<h1>Sign in</h1><p id="m">Completing your link…</p><pre id="t" hidden></pre><script>
const p = new URLSearchParams(location.search), t = p.get("verify"), m = document.getElementById("m");
history.replaceState(null, "", "/me");
if (!t) { m.textContent = "Open the link from your mail to sign in."; } else {
  fetch("/api/verify?token=" + encodeURIComponent(t)).then(r => r.json().then(j => [r.ok, j]))
    .then(([ok, j]) => {
      if (!ok) { m.textContent = j.error || "This link does not work."; return; }
      m.textContent = "Signed in" + (j.confirmed ? " (" + j.confirmed + " proposal(s) confirmed)" : "") +
        ". Your device token, valid until " + j.expires + ":";
      const pre = document.getElementById("t"); pre.hidden = false; pre.textContent = j.token;
      try { localStorage.setItem("token", j.token); } catch {}
    }).catch(() => { m.textContent = "The service did not answer; try again."; });
}
</script>`,
    ));
  });

  return app;
}
