import { DAY } from "../clock.ts";
import type { Deps } from "../deps.ts";
import type { Target } from "../targets.ts";
import type { HttpOptions } from "./http_options.ts";

/**
 * What every checker shares: the states, the probe it gets and its answer (lib/checks/mod.ts
 * runs the checkers; each checker imports only this module, so there is no import cycle).
 */

export type CheckState = "ok" | "warn" | "off";
export interface CheckResult {
  state: CheckState;
  /** Short human text; never the address. */
  status: string;
  ms: number;
  /** tls checks: when the certificate seen expires (ms), for the expiry alerts. */
  expires?: number;
}

export const CHECK_LIMIT_MS = 10_000;
export const SLOW_MS = 5_000;
export const EXPIRY_WARN_MS = 14 * DAY;

/** What a checker gets: the validated address and a way to bound its connections. */
export interface Probe {
  deps: Deps;
  target: Target;
  address: string;
  allowPrivate: boolean;
  /** Registers a connection to close when the time limit strikes. */
  track(c: { close(): void }): void;
  signal: AbortSignal;
  /** Wall-clock ms for the check's own time (the service clock may be faked). */
  now(): number;
  /** url: the request's options and the answer's assertions (absent: a plain GET). */
  http?: HttpOptions;
}

export type Checker = (
  p: Probe,
) => Promise<{ state: CheckState; status: string; expires?: number }>;

/** ok, or warn when slow. */
export const bySpeed = (ms: number, text: string) => ({
  state: ms > SLOW_MS ? "warn" as const : "ok" as const,
  status: ms > SLOW_MS ? `${text} (slow)` : text,
});

/**
 * A network error in a few words, without addresses: a check's, an alert post's, a watchdog
 * ping's. Here, beside what every checker shares, so a sender need not load the checkers.
 */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return "check failed";
  const name = err.name;
  const msg = err.message;
  if (name === "ConnectionRefused" || /refused/i.test(msg)) return "connection refused";
  if (name === "TimedOut" || /timed? ?out/i.test(msg)) return "connection timed out";
  if (/certificate|UnknownIssuer|NotValidForName|CertExpired|invalid peer/i.test(msg)) {
    return "TLS certificate not valid";
  }
  if (/TLS|handshake|InvalidData/i.test(name + msg)) return "TLS handshake failed";
  if (name === "HttpError") return msg;
  if (name === "ConnectionReset" || /reset/i.test(msg)) return "connection reset";
  if (/unreachable/i.test(msg)) return "network unreachable";
  return "connection failed";
}
