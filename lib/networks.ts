/**
 * Networks a server owner names (CHANNEL_NETWORKS: "192.168.1.0/24, fd00:1234::/48") where
 * self-hosted alert receivers (ntfy, Gotify, Matrix, ...) may live although the addresses are
 * private. Everything else stays behind the private-address refusal of lib/targets.ts.
 */
import { parseIPv4, parseIPv6 } from "./targets.ts";

export interface Network {
  /** 4 or 16 bytes. */
  bytes: Uint8Array;
  prefix: number;
  text: string;
}

function bytesOf(addr: string): Uint8Array | null {
  if (addr.includes(":")) return parseIPv6(addr);
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(addr)) return null;
  const v = parseIPv4(addr);
  return v === null ? null : new Uint8Array([v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255]);
}

/** The networks of a comma-separated list, or the first entry that is not one. */
export function parseNetworks(text: string): Network[] | { bad: string } {
  const out: Network[] = [];
  for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
    const m = part.match(/^([^/]+)\/(\d{1,3})$/);
    const bytes = m ? bytesOf(m[1]) : null;
    const prefix = m ? Number(m[2]) : -1;
    if (!bytes || prefix < 0 || prefix > bytes.length * 8) return { bad: part };
    out.push({ bytes, prefix, text: part });
  }
  return out;
}

/** Whether the address lies in one of the networks (an IPv4-mapped IPv6 address as IPv4). */
export function inNetworks(nets: Network[], addr: string): boolean {
  let b = bytesOf(addr);
  if (
    b && b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 255 &&
    b[11] === 255
  ) b = b.subarray(12);
  if (!b) return false;
  return nets.some((n) => {
    if (n.bytes.length !== b!.length) return false;
    for (let bit = 0; bit < n.prefix; bit++) {
      const i = bit >> 3;
      const mask = 0x80 >> (bit & 7);
      if ((n.bytes[i] & mask) !== (b![i] & mask)) return false;
    }
    return true;
  });
}
