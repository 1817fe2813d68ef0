/**
 * The browser part of `@simplewebauthn/browser` (its built UMD file, which sets
 * `globalThis.SimpleWebAuthnBrowser`) served from this origin as /static/simplewebauthn.js, for
 * web/static/passkeys.js. Registered by the pages that use it (`passkeyAssets`), read once.
 */
import type {} from "@simplewebauthn/browser";
import { addAsset } from "./_static.ts";

/** The scripts a page with passkey buttons lists, in order. */
const PASSKEY_SCRIPTS = ["simplewebauthn.js", "passkeys.js"];

export function passkeyAssets(): string[] {
  addAsset("simplewebauthn.js", () =>
    Deno.readFileSync(
      new URL("../dist/bundle/index.umd.min.js", import.meta.resolve("@simplewebauthn/browser")),
    ));
  return PASSKEY_SCRIPTS;
}
