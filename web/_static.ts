/**
 * Static files of the web pages (web/static/: the stylesheet and small ES modules), served
 * by the service itself: no CDN, no other origin. Each is read once per process; pages link
 * to `/static/<name>?v=<hash>`, which may be cached for a year because a changed file gets a
 * new hash. Files of npm packages (the API reference viewer) are registered with `addAsset`
 * by a function the code that needs them calls by name (web/_swagger.ts `swaggerAssets`).
 */
import { sha256hex } from "../lib/crypto.ts";

const TYPES: Record<string, string> = {
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  txt: "text/plain; charset=utf-8",
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  hash: string;
}

const assets = new Map<string, Asset>();
const sources = new Map<string, () => Uint8Array<ArrayBuffer>>();

const STATIC_DIR = new URL("./static/", import.meta.url);

/** A file found elsewhere (an npm package's dist folder), served under /static/<name>. */
export function addAsset(name: string, read: () => Uint8Array<ArrayBuffer>): void {
  sources.set(name, read);
}

/** The asset, read on first use; null when there is no such file. */
export function asset(name: string): Asset | null {
  const known = assets.get(name);
  if (known) return known;
  if (!/^[a-z0-9][a-z0-9._-]*$/i.test(name) || name.includes("..")) return null;
  const type = TYPES[name.split(".").pop() ?? ""];
  if (!type) return null;
  let body: Uint8Array<ArrayBuffer>;
  try {
    body = sources.get(name)?.() ?? Deno.readFileSync(new URL(name, STATIC_DIR));
  } catch {
    return null;
  }
  const a = { body, type, hash: sha256hex(body).slice(0, 12) };
  assets.set(name, a);
  return a;
}

/** The address pages link to: versioned by content, so it can be cached for good. */
export function assetUrl(name: string): string {
  const a = asset(name);
  if (!a) throw new Error(`missing static file ${name}`);
  return `/static/${name}?v=${a.hash}`;
}
