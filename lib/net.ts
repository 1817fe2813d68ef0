// node:dns and node:tls are imported on first use: loading Deno's Node layer at start costs
// start-up time and memory that a service without checks never needs (docs/performance.md,
// "Start-up and the request path").

/** Resolves a host name to every address, as the system resolver (with /etc/hosts) does. */
export type Resolver = (host: string) => Promise<string[]>;

/** Opens a TCP connection to an address that was already checked (no second resolution). */
export type Connector = (opts: { hostname: string; port: number }) => Promise<Deno.TcpConn>;

export const systemResolver: Resolver = async (host) => {
  const { lookup } = await import("node:dns/promises");
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

export const systemConnector: Connector = (opts) =>
  Deno.connect({ hostname: opts.hostname, port: opts.port, transport: "tcp" });

interface PeerCertificate {
  validFrom: number;
  validTo: number;
}

interface TlsReport {
  /** Chain and name both verified. */
  authorized: boolean;
  /** Why it is not authorised, in short words. */
  error: string | null;
  cert: PeerCertificate | null;
}

/**
 * TLS towards checked addresses, injected like the connector: tests pass their own (with a
 * test CA) or none, and then every TLS attempt is refused without a packet sent.
 */
export interface TlsConnector {
  /** Upgrades a connection made by the Connector; the certificate must be valid for `name`. */
  upgrade(conn: Deno.TcpConn, name: string): Promise<Deno.Conn>;
  /** Handshakes with a checked address and reports the certificate (tls: checks). */
  probe(
    opts: { hostname: string; port: number; name: string; signal?: AbortSignal },
  ): Promise<TlsReport>;
}

/** Refuses every TLS attempt: the default when no TLS connector is given. */
export const refusingTls: TlsConnector = {
  upgrade: (conn) => {
    conn.close();
    return Promise.reject(new Error("TLS is not available"));
  },
  probe: () => Promise.reject(new Error("TLS is not available")),
};

const isIpLiteral = (name: string) => name.includes(":") || /^[0-9.]+$/.test(name);

/** Real TLS; `caCerts` adds trusted roots (tests use a CA they generate). */
export function systemTls(caCerts?: string[]): TlsConnector {
  return {
    upgrade: (conn, name) => Deno.startTls(conn, { hostname: name, caCerts }),
    probe: async ({ hostname, port, name, signal }) => {
      const { default: tls } = await import("node:tls");
      return await new Promise((resolve, reject) => {
        const socket = tls.connect({
          host: hostname,
          port,
          servername: isIpLiteral(name) ? undefined : name,
          ca: caCerts ? [...tls.rootCertificates, ...caCerts] : undefined,
          rejectUnauthorized: false,
        });
        signal?.addEventListener("abort", () => {
          socket.destroy();
          reject(new Error("timed out"));
        });
        socket.once("error", (err: Error) => {
          socket.destroy();
          reject(err);
        });
        socket.once("secureConnect", () => {
          const pc = socket.getPeerCertificate();
          const cert = pc && pc.valid_to
            ? { validFrom: Date.parse(pc.valid_from), validTo: Date.parse(pc.valid_to) }
            : null;
          let error: string | null = socket.authorized
            ? null
            : String(socket.authorizationError ?? "certificate not trusted");
          if (!error && pc) {
            const mismatch = tls.checkServerIdentity(name, pc);
            if (mismatch) error = "certificate is not valid for this name";
          }
          socket.destroy();
          resolve({ authorized: error === null, error, cert });
        });
      });
    },
  };
}
