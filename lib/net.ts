import { lookup } from "node:dns/promises";

/** Resolves a host name to every address, as the system resolver (with /etc/hosts) does. */
export type Resolver = (host: string) => Promise<string[]>;

/** Opens a TCP connection to an address that was already checked (no second resolution). */
export type Connector = (opts: { hostname: string; port: number }) => Promise<Deno.TcpConn>;

export const systemResolver: Resolver = async (host) => {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

export const systemConnector: Connector = (opts) =>
  Deno.connect({ hostname: opts.hostname, port: opts.port, transport: "tcp" });
