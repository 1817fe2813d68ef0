import { parseUrlTarget, resolveTarget, TargetError } from "../targets.ts";
import { httpRequest } from "./_http.ts";
import { bySpeed, type Checker } from "./_probe.ts";

export const MAX_REDIRECTS = 5;

/**
 * url: GET, following up to 5 redirects, each hop validated like the first. 2xx and 3xx
 * are ok (warn when slow), 4xx warns, 5xx is off.
 */
export const urlCheck: Checker = async (p) => {
  const t0 = p.now();
  let url = p.target.url!;
  let address = p.address;
  for (let hops = 0;; hops++) {
    const ans = await httpRequest(p.deps, { address, url, method: "GET", bodyLimit: 0 }, p.track);
    const location = ans.headers.get("location");
    if (ans.status >= 300 && ans.status < 400 && location) {
      if (hops >= MAX_REDIRECTS) {
        return { state: "off", status: `more than ${MAX_REDIRECTS} redirects` };
      }
      let next;
      try {
        next = parseUrlTarget("url", new URL(location, url).href, ["http:", "https:"]);
      } catch (err) {
        if (err instanceof TargetError || err instanceof TypeError) {
          return { state: "off", status: "redirect to an invalid address" };
        }
        throw err;
      }
      const hop = await resolveTarget(p.deps.resolver, next.host, p.allowPrivate);
      if (!hop.ok) {
        return {
          state: "off",
          status: hop.refused ? "redirect to a refused address" : `redirect: ${hop.error}`,
        };
      }
      url = next.url!;
      address = hop.address;
      continue;
    }
    const ms = Math.round(p.now() - t0);
    const via = hops > 0 ? ` after ${hops} redirect${hops > 1 ? "s" : ""}` : "";
    const text = `HTTP ${ans.status}${via} in ${ms} ms`;
    if (ans.status >= 500) return { state: "off", status: text };
    if (ans.status >= 400) return { state: "warn", status: text };
    return bySpeed(ms, text);
  }
};
