import { httpRequest } from "../lib/checks/_http.ts";
import { describeError } from "../lib/checks/_probe.ts";
import type { Deps } from "../lib/deps.ts";
import { log } from "../lib/log.ts";
import { count } from "../lib/metrics.ts";
import { outboundTarget } from "../lib/outbound.ts";
import { pulse } from "./pulse.ts";

/**
 * What the minutely run does around its jobs so that this monitor's own downtime is known:
 * inside, its pulse (kv/service/monitor.ts: a pulse long after the last one stores the stretch no
 * process ran as a gap, "no data (monitor down)"); outside, the owner's dead-man check
 * (WATCHDOG_URL, for example a Healthchecks check): `<url>/start` when the run begins, `<url>`
 * when its jobs all succeeded, `<url>/fail` when one failed, as Healthchecks reads them, so
 * someone hears when this monitor stops. The watchdog is sent to with the rules of every
 * request this server sends (lib/outbound.ts): a public address, or one inside
 * CHANNEL_NETWORKS, where plain http is allowed too.
 */

const PING_LIMIT_MS = 10_000;

type WatchdogSignal = "start" | "success" | "fail";

/** The address of a signal: Healthchecks' `/start` and `/fail` after the ping URL. */
export function watchdogAddress(base: string, signal: WatchdogSignal): string {
  return signal === "success" ? base : `${base}/${signal}`;
}

/** One ping of the watchdog within 10 s; never throws (a refusal or failure is logged). */
export async function pingWatchdog(deps: Deps, signal: WatchdogSignal): Promise<boolean> {
  const base = deps.config.watchdogUrl;
  if (!base) return false;
  const url = new URL(watchdogAddress(base, signal));
  const conns = new Set<Deno.Conn>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closeAll = () => {
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  };
  try {
    const target = await outboundTarget(deps.resolver, url, deps.config.channelNetworks, false);
    if (!target.ok) {
      log("warn", "watchdog refused", { signal, reason: target.error });
      count("catalogue_watchdog_pings_total", `signal="${signal}",outcome="refused"`);
      return false;
    }
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        closeAll();
        reject(new Error("timed out"));
      }, PING_LIMIT_MS);
    });
    const work = httpRequest(deps, {
      address: target.address,
      url,
      method: "GET",
      bodyLimit: 1024,
    }, (c) => conns.add(c));
    work.catch(() => {});
    const answer = await Promise.race([work, late]);
    const ok = answer.status >= 200 && answer.status < 300;
    count(
      "catalogue_watchdog_pings_total",
      `signal="${signal}",outcome="${ok ? "sent" : "failed"}"`,
    );
    if (!ok) log("warn", "watchdog ping answered", { signal, status: answer.status });
    return ok;
  } catch (err) {
    count("catalogue_watchdog_pings_total", `signal="${signal}",outcome="failed"`);
    log("warn", "watchdog ping failed", { signal, error: describeError(err) });
    return false;
  } finally {
    clearTimeout(timer);
    closeAll();
  }
}

/**
 * The minutely run watched, beside its jobs (which have started): its pulse and `/start`, then
 * the outcome once the jobs are done. A heartbeat the jobs judge before the pulse lands still
 * finds the stretch its deadline fell in (kv/service/monitor.ts `gapAt` reads the last pulse too).
 */
export async function watchedRun(deps: Deps, jobs: Promise<boolean>): Promise<void> {
  const [, , ok] = await Promise.all([pulse(deps), pingWatchdog(deps, "start"), jobs]);
  await pingWatchdog(deps, ok ? "success" : "fail");
}
