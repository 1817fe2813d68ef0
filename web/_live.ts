/**
 * The live pages' version (web/static/live.js polls it every few seconds while the page is
 * visible and reloads the page's live parts when it changes): `{version}` as JSON, read from the
 * page's own keys (an account's services, a status page's), no key every request reads.
 *
 * A poll rather than a held stream (Server-Sent Events): over HTTP/1.1 a browser keeps at most six
 * connections to a host, and every open tab's stream holds one, so a person with six tabs of the
 * dashboard open could load nothing else from the site (the browser tests hit exactly that). A
 * poll of a few bytes holds nothing, passes every proxy and costs the same reads.
 */
import type { WebCtx } from "./_web.tsx";

/** The answer to a poll; `shared`: a public page's, which shared caches may keep a moment. */
export async function liveAnswer(
  c: WebCtx,
  version: () => Promise<string | null>,
  shared = false,
): Promise<Response> {
  const v = await version();
  c.header("Cache-Control", shared ? "public, max-age=0, s-maxage=5" : "no-store");
  if (v === null) return c.json({ error: "There is no such page." }, 404);
  return c.json({ version: v });
}
