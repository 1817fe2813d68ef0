import type { Resolver } from "./net.ts";
import { inNetworks, type Network } from "./networks.ts";
import { privateReason, resolveTarget } from "./targets.ts";

/**
 * The rules of every request this server sends on its own (alert channels, the watchdog):
 * the host resolved once and connected to at the address checked here; every address public,
 * or the owner's (`allowPrivate`), or inside the networks the server names
 * (CHANNEL_NETWORKS); plain http only to those networks.
 */
export async function outboundTarget(
  resolver: Resolver,
  url: URL,
  nets: Network[],
  allowPrivate: boolean,
): Promise<{ ok: true; address: string } | { ok: false; error: string; refused: boolean }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const r = await resolveTarget(resolver, host, true);
  if (!r.ok) return r;
  const inside = r.addresses.every((a) => inNetworks(nets, a));
  if (url.protocol === "http:" && !inside) {
    return {
      ok: false,
      error: "http is only for a server on a network this server allows (CHANNEL_NETWORKS); " +
        "use https",
      refused: true,
    };
  }
  if (!allowPrivate && !inside) {
    const why = r.addresses.map(privateReason).find((w) => w !== null);
    if (why) {
      return {
        ok: false,
        error: `the target is a private address (${why}); only the server's owner may send there`,
        refused: true,
      };
    }
  }
  return { ok: true, address: r.address };
}
