import { bySpeed, type Checker } from "./_probe.ts";

/** tcp: the port accepts a connection. */
export const tcpCheck: Checker = async (p) => {
  const t0 = p.now();
  const conn = await p.deps.connector({ hostname: p.address, port: p.target.port });
  p.track(conn);
  conn.close();
  const ms = Math.round(p.now() - t0);
  return bySpeed(ms, `port open, connected in ${ms} ms`);
};
