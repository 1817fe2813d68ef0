/** The only source of "now" in the service, so tests can move time explicitly. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** ISO 8601 UTC with milliseconds, the timestamp form of SPEC.md. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Plain `YYYY-MM-DD` date in UTC. */
export function isoDate(ms: number): string {
  return iso(ms).slice(0, 10);
}

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms == null ? null : iso(ms);
}
