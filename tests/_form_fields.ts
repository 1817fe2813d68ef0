/** Forms as a browser sees them: the fields a page's form sends, read from its HTML. */
import { ROUTE_AREAS } from "../areas.ts";
import type { Deps } from "../lib/deps.ts";

const decode = (s: string) =>
  s.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");
const attr = (tag: string, name: string) =>
  tag.match(new RegExp(`\\s${name}="([^"]*)"`))?.[1] ?? (
    new RegExp(`\\s${name}(\\s|>|/)`).test(tag) ? "" : undefined
  );

/** The fields a browser would send for the form of `action` on this page, as it shows them. */
export function formFields(html: string, action: string): [string, string][] {
  const forms = [...html.matchAll(/<form\b[^>]*>[^]*?<\/form>/g)].map((m) => m[0]);
  const form = forms.find((f) => attr(f.match(/^<form\b[^>]*>/)![0], "action") === action);
  if (!form) throw new Error(`no form for ${action}`);
  const out: [string, string][] = [];
  for (const m of form.matchAll(/<(input|textarea|select)\b([^>]*)>([^]*?<\/\1>)?/g)) {
    const [, tag, attrs, inner] = m;
    const name = attr(` ${attrs}`, "name");
    if (name === undefined || attr(` ${attrs}`, "disabled") !== undefined) continue;
    if (tag === "input") {
      const type = attr(` ${attrs}`, "type") ?? "text";
      if (type === "file" || type === "submit") continue;
      if ((type === "checkbox" || type === "radio") && attr(` ${attrs}`, "checked") === undefined) {
        continue;
      }
      out.push([name, decode(attr(` ${attrs}`, "value") ?? (type === "checkbox" ? "on" : ""))]);
    } else if (tag === "textarea") {
      out.push([name, decode((inner ?? "").replace(/<\/textarea>$/, ""))]);
    } else {
      const options = [...(inner ?? "").matchAll(/<option\b([^>]*)>/g)].map((o) => o[1]);
      const chosen = options.find((o) => attr(` ${o}`, "selected") !== undefined) ?? options[0];
      out.push([name, decode(attr(` ${chosen ?? ""}`, "value") ?? "")]);
    }
  }
  return out;
}

/** Every form of a page that posts: its action and the types of its fields by name. */
export function formsOf(html: string): { action: string; types: Record<string, string> }[] {
  const out: { action: string; types: Record<string, string> }[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([^]*?)<\/form>/g)) {
    const head = ` ${m[1]}`;
    if (attr(head, "method") !== "post") continue;
    const types: Record<string, string> = {};
    for (const f of m[2].matchAll(/<(input|textarea|select)\b([^>]*)>/g)) {
      const a = ` ${f[2]}`;
      const name = attr(a, "name");
      // A field no person sees or reaches (the forms' trap for bots) is not walked.
      if (name === undefined || attr(a, "tabindex") === "-1") continue;
      types[name] = f[1] === "input" ? attr(a, "type") ?? "text" : f[1];
    }
    out.push({ action: decode(attr(head, "action") ?? ""), types });
  }
  return out;
}

/** The path of every POST route of the pages, as their areas register them (areas.ts). */
export async function pagePosts(deps: Deps): Promise<string[]> {
  const out = new Set<string>();
  for (const area of Object.values(ROUTE_AREAS)) {
    if (area.mount !== "/") continue;
    const app = (await area.load())(deps);
    // Not pages: other products' ping addresses (api/compat_pings.ts) and the OAI-PMH
    // address harvesters post to (api/oai.ts) hang at the root too.
    for (const r of app.routes) {
      if (r.method === "POST" && !/^\/(api|ping)\/|^\/oai$/.test(r.path)) out.add(r.path);
    }
  }
  return [...out];
}
