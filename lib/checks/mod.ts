import type { Deps } from "../deps.ts";
import { cutChars } from "../text.ts";
import { parseCheck, resolveTarget, type Target } from "../targets.ts";
import { mcpCheck } from "./mcp.ts";
import { tcpCheck } from "./tcp.ts";
import { tlsCheck } from "./tls.ts";
import { urlCheck } from "./url.ts";
import type { HttpOptions } from "./http_options.ts";
import {
  CHECK_LIMIT_MS,
  type Checker,
  type CheckResult,
  type CheckState,
  describeError,
} from "./_probe.ts";

/**
 * One check of a watched service, with the 10 s limit of docs/api.md "Limits". Each run
 * validates the target again (a name may now point elsewhere) and connects only to the
 * address it validated. Results map to states as docs/api.md says:
 *   ok   - answered as expected within SLOW_MS
 *   warn - answered, but slowly, with a 4xx, or a certificate expiring within 14 days
 *   off  - refused target, no answer, timeout, 5xx, invalid certificate or MCP answer
 */

export type { Checker, CheckResult, CheckState, Probe } from "./_probe.ts";
export { bySpeed, CHECK_LIMIT_MS, EXPIRY_WARN_MS, SLOW_MS } from "./_probe.ts";

const CHECKERS: Record<string, Checker> = {
  url: urlCheck,
  mcp: mcpCheck,
  tcp: tcpCheck,
  tls: tlsCheck,
};

class TimeoutError extends Error {}

/** A check's own time: wall-clock ms and its limit (tests shrink both, never sleep 10 s). */
export interface CheckTiming {
  now(): number;
  limitMs: number;
}

const REAL_TIME: CheckTiming = { now: () => performance.now(), limitMs: CHECK_LIMIT_MS };

/** Runs the check of a stored check string; never throws. */
export async function runCheck(
  deps: Deps,
  check: string,
  allowPrivate: boolean,
  timing: CheckTiming = REAL_TIME,
  http?: HttpOptions,
): Promise<CheckResult> {
  const { now, limitMs } = timing;
  const start = now();
  const done = (state: CheckState, status: string, expires?: number): CheckResult => ({
    state,
    // Texts from the target (an MCP server's name) may hold anything; keep one plain line.
    status: cutChars(status.replace(/\p{Cc}+/gu, " "), 120),
    ms: Math.round(now() - start),
    ...(expires === undefined ? {} : { expires }),
  });
  let target: Target;
  try {
    target = parseCheck(check);
  } catch {
    return done("off", "the target is no longer valid");
  }
  const checker = CHECKERS[target.kind];
  if (!checker) return done("off", "not a checked kind");

  const conns = new Set<{ close(): void }>();
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new TimeoutError());
    }, limitMs);
  });
  const closeAll = () => {
    for (const c of conns) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
    conns.clear();
  };
  try {
    const work = (async () => {
      const resolved = await resolveTarget(deps.resolver, target.host, allowPrivate);
      if (!resolved.ok) {
        return {
          state: "off" as const,
          status: resolved.refused ? "target refused: private address" : resolved.error,
        };
      }
      return await checker({
        deps,
        target,
        address: resolved.address,
        allowPrivate,
        track: (c) => {
          if (abort.signal.aborted) c.close();
          else conns.add(c);
        },
        signal: abort.signal,
        now,
        http,
      });
    })();
    work.catch(() => {});
    const r: { state: CheckState; status: string; expires?: number } = await Promise.race([
      work,
      limit,
    ]);
    return done(r.state, r.status, r.expires);
  } catch (err) {
    if (err instanceof TimeoutError) {
      return done("off", `no answer within ${limitMs / 1000} s`);
    }
    return done("off", describeError(err));
  } finally {
    clearTimeout(timer);
    abort.abort();
    closeAll();
  }
}
