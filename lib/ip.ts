/** The eight groups of an IPv6 address (compressed "::" forms included), or null. */
function expandIpv6(addr: string): string[] | null {
  const a = addr.replace(/^\[|\]$/g, "").replace(/%.*$/, "").toLowerCase();
  if (!a.includes(":") || !/^[0-9a-f:]+$/.test(a)) return null;
  const halves = a.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array(missing).fill("0"), ...tail];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => g.replace(/^0+(?=.)/, ""));
}

/**
 * The subject a per-origin limit counts: an IPv6 client is counted by its /64, since one
 * host commonly holds a whole /64 and could otherwise step around the limit.
 */
export function originSubject(addr: string): string {
  if (!addr.includes(":")) return addr; // not IPv6 (every heartbeat passes here)
  const v6 = expandIpv6(addr);
  if (!v6 || /^::ffff:/i.test(addr)) return addr;
  return `${v6.slice(0, 4).join(":")}::/64`;
}

/** Coarse origin for the sign-in notice: the network, not the exact address. */
export function roughOrigin(addr: string): string {
  const v4 = addr.match(/^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.\d+$/i);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.x`;
  const v6 = expandIpv6(addr);
  if (v6) return `${v6.slice(0, 3).join(":")}::/48`;
  return "an unknown network";
}
