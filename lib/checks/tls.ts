import { DAY } from "../clock.ts";
import { refusingTls } from "../net.ts";
import { type Checker, EXPIRY_WARN_MS } from "./_probe.ts";

/** tls: handshake, then the certificate: trusted chain, valid for the name, days left. */
export const tlsCheck: Checker = async (p) => {
  const report = await (p.deps.tls ?? refusingTls).probe({
    hostname: p.address,
    port: p.target.port,
    name: p.target.host,
    signal: p.signal,
  });
  // The service's clock judges the dates, so expiry is tested by moving it.
  const now = p.deps.clock.now();
  const cert = report.cert;
  if (cert && cert.validTo <= now) return { state: "off", status: "certificate expired" };
  if (cert && cert.validFrom > now) return { state: "off", status: "certificate not yet valid" };
  if (!report.authorized) {
    const why = /name|altname|identity/i.test(report.error ?? "")
      ? "certificate is not valid for this name"
      : "certificate not trusted";
    return { state: "off", status: why };
  }
  if (!cert) return { state: "off", status: "no certificate" };
  const days = Math.floor((cert.validTo - now) / DAY);
  const expires = cert.validTo;
  if (cert.validTo - now <= EXPIRY_WARN_MS) {
    return { state: "warn", status: `certificate expires in ${days} days`, expires };
  }
  return { state: "ok", status: `certificate valid, expires in ${days} days`, expires };
};
