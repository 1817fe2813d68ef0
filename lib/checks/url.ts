import { parseUrlTarget, resolveTarget, TargetError } from "../targets.ts";
import { DAY } from "../clock.ts";
import { refusingTls } from "../net.ts";
import { httpRequest } from "./_http.ts";
import { bySpeed, type Checker } from "./_probe.ts";
import {
  acceptedText,
  accepts,
  BODY_READ,
  bodyProblem,
  type HttpOptions,
  readsBody,
} from "./http_options.ts";

const MAX_REDIRECTS = 5;

/**
 * url: a request (GET unless its options say otherwise), following up to 5 redirects (fewer,
 * or none, if its options say so), each hop validated like the first. Without accepted status
 * codes 2xx and 3xx are ok (warn when slow), 4xx warns, 5xx is off; with them, any other status
 * is off. Then the options' assertions (lib/checks/http_options.ts): the keyword or the JSON
 * query (off when they fail), the response-time limit and the certificate's days (warn).
 */
export const urlCheck: Checker = async (p) => {
  const o: HttpOptions = p.http ?? {};
  const t0 = p.now();
  let url = p.target.url!;
  let address = p.address;
  const follow = o.follow_redirects ?? true;
  const maxHops = follow ? Math.min(o.max_redirects ?? MAX_REDIRECTS, MAX_REDIRECTS) : 0;
  let method = o.method ?? "GET";
  let body = o.body;
  for (let hops = 0;; hops++) {
    const ans = await httpRequest(p.deps, {
      address,
      url,
      method,
      headers: o.headers,
      body,
      bodyLimit: readsBody(o) ? BODY_READ : 0,
    }, p.track);
    const location = ans.headers.get("location");
    if (follow && ans.status >= 300 && ans.status < 400 && location) {
      if (hops >= maxHops) {
        return { state: "off", status: `more than ${maxHops} redirects` };
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
      // 307 and 308 repeat the request; the others are followed with GET, as browsers do.
      if (ans.status !== 307 && ans.status !== 308 && method !== "HEAD") {
        method = "GET";
        body = undefined;
      }
      continue;
    }
    const ms = Math.round(p.now() - t0);
    const via = hops > 0 ? ` after ${hops} redirect${hops > 1 ? "s" : ""}` : "";
    const text = `HTTP ${ans.status}${via} in ${ms} ms`;
    if (o.accepted?.length) {
      if (!accepts(o.accepted, ans.status)) {
        return {
          state: "off",
          status: `status ${ans.status}, expected ${acceptedText(o.accepted)}`,
        };
      }
    } else {
      if (ans.status >= 500) return { state: "off", status: text };
      if (ans.status >= 400) return { state: "warn", status: text };
    }
    const failed = await bodyProblem(o, ans.body);
    if (failed) return { state: "off", status: `${failed} (HTTP ${ans.status})` };
    if (o.max_ms !== undefined && ms > o.max_ms) {
      return { state: "warn", status: `${text}, slower than the ${o.max_ms} ms limit` };
    }
    if (o.cert_expiry_days !== undefined && url.protocol === "https:") {
      const expiry = await certificateDays(p, address, url, o.cert_expiry_days);
      if (expiry) return { state: "warn", status: `${text}; ${expiry}` };
    }
    return bySpeed(ms, text);
  }
};

/** The certificate's days left when within the warning days, in words; else null. */
async function certificateDays(
  p: Parameters<Checker>[0],
  address: string,
  url: URL,
  warnDays: number,
): Promise<string | null> {
  const report = await (p.deps.tls ?? refusingTls).probe({
    hostname: address,
    port: url.port ? Number(url.port) : 443,
    name: url.hostname,
    signal: p.signal,
  });
  const cert = report.cert;
  if (!cert) return null;
  const days = Math.floor((cert.validTo - p.deps.clock.now()) / DAY);
  return days <= warnDays
    ? `the certificate expires in ${days} days (warning at ${warnDays})`
    : null;
}
