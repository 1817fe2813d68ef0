import { Hono } from "hono";
import { getProposal, keyMatches, publicStatusView } from "../kv/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import type { AppEnv } from "./_api.ts";

const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">` +
  `<title>${esc(title)}</title>` +
  `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}` +
  `td,th{text-align:left;padding:.2rem .6rem .2rem 0;vertical-align:top}</style></head>` +
  `<body>${body}</body></html>`;

/**
 * The status page a proposal's `status_url` opens. Rendered on the server from the same
 * data as GET /api/contributions/<id>/status: without the mailed secret (`key`) it shows
 * the state and dates only, never the submitter's address, name or text.
 */
export function formsPageRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.get("/contribute/status", async (c) => {
    c.header("Cache-Control", "no-store");
    c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    const raw = c.req.query("id") ?? "";
    const id = /^[1-9][0-9]{0,14}$/.test(raw) ? Number(raw) : null;
    const p = id === null ? null : (await getProposal(deps.kv, id)).value;
    if (!p) {
      return c.html(
        page(
          "Proposal not found",
          `<h1>Proposal not found</h1><p>No proposal ` +
            `has this number. Unconfirmed proposals are deleted after seven days.</p>`,
        ),
        404,
      );
    }
    const v = publicStatusView(p, await keyMatches(p, c.req.query("key")));
    const rows = v.history.map((h) =>
      `<tr><td>${esc(h.at)}</td><td>${esc(h.status)}</td>` +
      (h.reason !== undefined ? `<td>${esc(h.reason ?? "")}</td>` : "") + `</tr>`
    ).join("");
    const detail = v.title !== undefined
      ? `<p><strong>${esc(v.title)}</strong> (${esc(v.area ?? "")}), under the name ` +
        `${esc(v.name ?? "")}.</p>` +
        (v.module_url
          ? `<p>Published: <a href="${esc(v.module_url)}">${esc(v.module_url)}</a></p>`
          : "")
      : `<p>Open the link from your mail to see the details.</p>`;
    return c.html(page(
      `Proposal ${v.id}`,
      `<h1>Proposal ${v.id}: ${esc(v.status)}</h1>${detail}` +
        `<p>Sent ${esc(v.created)}, last change ${esc(v.updated)}.</p>` +
        `<table><tr><th>When</th><th>Status</th>${
          v.history[0]?.reason !== undefined ? "<th>Reason</th>" : ""
        }</tr>${rows}</table>`,
    ));
  });

  return app;
}
