import type { Resolver } from "./net.ts";
import { after, type Timer } from "./timers.ts";

/**
 * The `check` string of a watched service and its address rules (docs/api.md, "Watched services"):
 * strict parsing, canonical IP forms, and refusal of every private range.
 * A target is validated when the service is created and again before every check, and a
 * check connects to exactly the address validated here (no second resolution).
 */

export const TARGET_KINDS = ["url", "mcp", "tcp", "tls", "webhook"] as const;
export type Kind = typeof TARGET_KINDS[number];

export interface Target {
  kind: Kind;
  /** Canonical check string, as stored (e.g. `url:https://example.org/x`). */
  check: string;
  /** Host name or canonical IP literal (IPv6 without brackets); "" for webhook. */
  host: string;
  port: number;
  /** url and mcp: the canonical URL. */
  url?: URL;
  /** The origin only, never the full address; null for webhook. */
  hint: string | null;
}

export class TargetError extends Error {}
const bad = (msg: string): never => {
  throw new TargetError(msg);
};

const MAX_CHECK = 2000;

/** Parses a check string or throws a TargetError in plain words. */
export function parseCheck(input: string): Target {
  const s = input.trim();
  if (s.length > MAX_CHECK) bad(`at most ${MAX_CHECK} characters`);
  const colon = s.indexOf(":");
  const kind = (colon < 0 ? s : s.slice(0, colon)).toLowerCase();
  const rest = colon < 0 ? "" : s.slice(colon + 1);
  switch (kind) {
    case "webhook":
      if (rest.trim() !== "") bad("webhook: takes no target");
      return { kind: "webhook", check: "webhook:", host: "", port: 0, hint: null };
    case "url":
      return parseUrlTarget("url", rest, ["http:", "https:"]);
    case "mcp":
      return parseUrlTarget("mcp", rest, ["https:"]);
    case "tcp": {
      const { host, port } = parseHostPort(rest, null);
      const h = host.includes(":") ? `[${host}]` : host;
      return { kind: "tcp", check: `tcp:${h}:${port}`, host, port, hint: `${h}:${port}` };
    }
    case "tls": {
      const { host, port } = parseHostPort(rest, 443);
      const h = host.includes(":") ? `[${host}]` : host;
      return { kind: "tls", check: `tls:${h}:${port}`, host, port, hint: `${h}:${port}` };
    }
    default:
      return bad("must start with url:, mcp:, tcp:, tls: or webhook:");
  }
}

/** Checks one address of a URL (creation, and every redirect hop). */
export function parseUrlTarget(kind: "url" | "mcp", raw: string, schemes: string[]): Target {
  if (!URL.canParse(raw)) bad(`${kind}: not a valid address`);
  // The URL parser reads "0080" as port 80 (and drops it as the default): the written port
  // must be plain digits without a leading zero, as for tcp: and tls:.
  const written = raw.match(
    /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:]*)(:[^/?#]*)?/i,
  );
  if (written?.[1] !== undefined && !/^:[1-9][0-9]{0,4}$/.test(written[1])) {
    bad(`${kind}: port must be 1 to 65535, written without leading zeros or signs`);
  }
  const u = new URL(raw);
  if (!schemes.includes(u.protocol)) {
    bad(`${kind}: the address must start with ${schemes.map((x) => x + "//").join(" or ")}`);
  }
  if (u.username || u.password) bad(`${kind}: no credentials inside the address`);
  if (!u.hostname) bad(`${kind}: the address has no host`);
  if (u.port === "0") bad(`${kind}: port must be 1 to 65535`);
  u.hash = "";
  const host = canonicalHost(u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname);
  const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
  return { kind, check: `${kind}:${u.href}`, host, port, url: u, hint: u.origin };
}

function parseHostPort(rest: string, defaultPort: number | null): { host: string; port: number } {
  let host: string;
  let portText: string | undefined;
  const v6 = rest.match(/^\[([^\]]+)\](?::(.*))?$/);
  if (v6) {
    host = v6[1];
    portText = v6[2];
  } else {
    const parts = rest.split(":");
    if (parts.length > 2) bad("an IPv6 address goes in brackets, as [2001:db8::1]:443");
    host = parts[0];
    portText = parts[1];
  }
  if (!host) bad("a host is needed");
  let port: number;
  if (portText === undefined) {
    if (defaultPort === null) bad("a port is needed, as host:port");
    port = defaultPort!;
  } else {
    // Digits only, without a leading zero or a sign: "0080" or "+80" would name port 80 under
    // another spelling (and slip past a comparison of the text).
    if (!/^[1-9][0-9]{0,4}$/.test(portText)) bad("port must be 1 to 65535");
    port = Number(portText);
  }
  if (port < 1 || port > 65535) bad("port must be 1 to 65535");
  if (v6) {
    const bytes = parseIPv6(host);
    if (!bytes) bad("not a valid IPv6 address");
    return { host: formatIPv6(bytes!), port };
  }
  return { host: canonicalHost(host), port };
}

/**
 * A host name in lower case, or an IP literal in canonical form. IPv4 is read the way
 * inet_aton and browsers read it (decimal, octal, hex, one to four parts), so `0x7f.1`
 * and `2130706433` are both 127.0.0.1 and cannot slip past the range checks.
 */
export function canonicalHost(raw: string): string {
  let h = raw.toLowerCase().replace(/\.$/, "");
  // International names go to their punycode form, as URLs carry them.
  if (/[^\p{ASCII}]/u.test(h) && URL.canParse(`http://${h}/`)) h = new URL(`http://${h}/`).hostname;
  if (h.includes(":")) {
    const b = parseIPv6(h);
    if (!b) bad("not a valid IPv6 address");
    return formatIPv6(b!);
  }
  const last = h.split(".").pop() ?? "";
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(last)) {
    const v4 = parseIPv4(h);
    if (v4 === null) bad("not a valid IPv4 address");
    return formatIPv4(v4!);
  }
  if (
    h.length > 253 ||
    !/^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(h)
  ) {
    bad("not a valid host name");
  }
  return h;
}

/** inet_aton: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x). */
export function parseIPv4(s: string): number | null {
  const parts = s.split(".");
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return null;
    if (!Number.isFinite(n) || n > 0xffffffff) return null;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255)) return null;
  if (last >= 2 ** (8 * (4 - nums.length))) return null;
  let v = 0;
  for (const n of nums) v = v * 256 + n;
  return v * 2 ** (8 * (4 - nums.length)) + last;
}

const formatIPv4 = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join(".");

/** 16 bytes, or null; accepts `::`, embedded IPv4 tails, drops a zone index. */
export function parseIPv6(input: string): Uint8Array | null {
  const s = input.replace(/%.*$/, "");
  if (!/^[0-9a-f:.]+$/i.test(s)) return null;
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (i === items.length - 1 && it.includes(".")) {
        if (!/^[0-9]{1,3}(\.[0-9]{1,3}){3}$/.test(it)) return null;
        const o = it.split(".").map(Number);
        if (o.some((x) => x > 255)) return null;
        out.push(o[0] * 256 + o[1], o[2] * 256 + o[3]);
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(it)) return null;
        out.push(parseInt(it, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  let all: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - tail.length;
    if (fill < 1) return null;
    all = [...head, ...new Array(fill).fill(0), ...tail];
  } else {
    if (head.length !== 8) return null;
    all = head;
  }
  const b = new Uint8Array(16);
  all.forEach((g, i) => {
    b[2 * i] = g >> 8;
    b[2 * i + 1] = g & 255;
  });
  return b;
}

/** RFC 5952 text: lower case, longest zero run shortened. */
function formatIPv6(b: Uint8Array): string {
  const g = Array.from({ length: 8 }, (_, i) => (b[2 * i] << 8) | b[2 * i + 1]);
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hexes = g.map((x) => x.toString(16));
  if (best < 0) return hexes.join(":");
  return `${hexes.slice(0, best).join(":")}::${hexes.slice(best + bestLen).join(":")}`;
}

type Cidr4 = [number, number, string];
const cidr4 = (a: string, bits: number, why: string): Cidr4 => [parseIPv4(a)!, bits, why];

/** Every IPv4 range that is not a public unicast address. */
const PRIVATE_V4: Cidr4[] = [
  cidr4("0.0.0.0", 8, "unspecified"),
  cidr4("10.0.0.0", 8, "private"),
  cidr4("100.64.0.0", 10, "shared (CGNAT)"),
  cidr4("127.0.0.0", 8, "loopback"),
  cidr4("169.254.0.0", 16, "link-local"),
  cidr4("172.16.0.0", 12, "private"),
  cidr4("192.0.0.0", 24, "reserved"),
  cidr4("192.0.2.0", 24, "reserved"),
  cidr4("192.88.99.0", 24, "reserved"),
  cidr4("192.168.0.0", 16, "private"),
  cidr4("198.18.0.0", 15, "reserved"),
  cidr4("198.51.100.0", 24, "reserved"),
  cidr4("203.0.113.0", 24, "reserved"),
  cidr4("224.0.0.0", 4, "multicast"),
  cidr4("240.0.0.0", 4, "reserved"),
];

function v4Reason(v: number): string | null {
  for (const [base, bits, why] of PRIVATE_V4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((v & mask) >>> 0) === base) return why;
  }
  return null;
}

const v4At = (b: Uint8Array, i: number) =>
  ((b[i] << 24) >>> 0) + (b[i + 1] << 16) + (b[i + 2] << 8) + b[i + 3];
const zeroUntil = (b: Uint8Array, n: number) => b.subarray(0, n).every((x) => x === 0);

/**
 * Why an address is not public, or null when it is. IPv6 is public only inside 2000::/3
 * and outside its special blocks; forms that carry an IPv4 address (mapped, NAT64, 6to4)
 * are judged by that address.
 */
export function privateReason(address: string): string | null {
  if (!address.includes(":")) {
    const v = parseIPv4(address);
    return v === null ? "not an address" : v4Reason(v);
  }
  const b = parseIPv6(address);
  if (!b) return "not an address";
  if (zeroUntil(b, 10) && b[10] === 0xff && b[11] === 0xff) {
    return v4Reason(v4At(b, 12)) ?? null;
  }
  if (zeroUntil(b, 16)) return "unspecified";
  if (zeroUntil(b, 15) && b[15] === 1) return "loopback";
  if (zeroUntil(b, 12)) return "reserved (IPv4-compatible)";
  const w0 = (b[0] << 8) | b[1];
  const w1 = (b[2] << 8) | b[3];
  if (w0 === 0x64 && w1 === 0xff9b) {
    if (b.subarray(4, 12).every((x) => x === 0)) return v4Reason(v4At(b, 12));
    return "reserved (local NAT64)";
  }
  if (b[0] === 0xff) return "multicast";
  if ((b[0] & 0xfe) === 0xfc) return "private (unique local)";
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return "link-local";
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return "reserved (site-local)";
  if ((b[0] & 0xe0) !== 0x20) return "reserved";
  if (w0 === 0x2002) return v4Reason(v4At(b, 2));
  if (w0 === 0x2001 && w1 < 0x200) return "reserved (protocol assignments, Teredo)";
  if (w0 === 0x2001 && w1 === 0x0db8) return "reserved (documentation)";
  if (w0 === 0x3fff && (w1 & 0xf000) === 0) return "reserved (documentation)";
  return null;
}

const isIp = (host: string) =>
  host.includes(":") || /^[0-9]+(\.[0-9]+){3}$/.test(host) && parseIPv4(host) !== null;

/** The canonical form of an address the resolver answered. */
function canonicalAddress(a: string): string | null {
  if (a.includes(":")) {
    const b = parseIPv6(a);
    return b ? formatIPv6(b) : null;
  }
  const v = /^[0-9]+(\.[0-9]+){3}$/.test(a) ? parseIPv4(a) : null;
  return v === null ? null : formatIPv4(v);
}

/** How long a name may take to resolve before the target counts as not resolving. */
const RESOLVE_TIMEOUT = 5_000;

export type Resolved =
  | { ok: true; address: string; addresses: string[] }
  | { ok: false; error: string; refused: boolean };

/**
 * Resolves a host (an IP literal stands for itself) and checks every address; when any is
 * private and `allowPrivate` is false the target is refused. The first address is the one
 * to connect to.
 */
export async function resolveTarget(
  resolver: Resolver,
  host: string,
  allowPrivate: boolean,
  timeoutMs = RESOLVE_TIMEOUT,
): Promise<Resolved> {
  let addresses: string[];
  if (isIp(host)) addresses = [host];
  else {
    let timer: Timer | undefined;
    try {
      // A slow resolver must not hold a request (or a check) past its own time limit.
      const late = new Promise<never>((_, reject) => {
        timer = after(timeoutMs, () => reject(new Error("resolver timeout")));
      });
      const found = await Promise.race([resolver(host), late]);
      addresses = found.map(canonicalAddress).filter((a): a is string => a !== null);
    } catch {
      return { ok: false, error: "the host name does not resolve", refused: false };
    } finally {
      timer?.cancel();
    }
    if (addresses.length === 0) {
      return { ok: false, error: "the host name does not resolve", refused: false };
    }
  }
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = privateReason(a);
      if (why) {
        return {
          ok: false,
          error: `the target is a private address (${why}); only the server's owner may watch ` +
            "those (the person running the server becomes the owner through the link it prints " +
            "at start, or with deno task roles grant <address> owner)",
          refused: true,
        };
      }
    }
  }
  return { ok: true, address: addresses[0], addresses };
}
