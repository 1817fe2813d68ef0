import { after, every } from "./timers.ts";

/** The only source of "now" in the service, so tests can move time explicitly. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Test only (`TEST_CLOCK_FILE`, which lib/config.ts refuses in production): the system clock
 * moved on by the milliseconds written in a file, read at every reading, so an end-to-end test
 * can let minutes or days pass in a running server process (tests/_real_server.ts
 * `testClock`). Write the file whole (a temporary file, then a rename); a missing file or
 * one that holds no whole non-negative number keeps the offset read last (0 at first).
 */
export function fileClock(
  path: string,
  read: (path: string) => string = Deno.readTextFileSync,
): Clock {
  let offset = 0;
  return {
    now() {
      try {
        const text = read(path).trim();
        if (/^\d{1,15}$/.test(text)) offset = Number(text);
      } catch { /* not written yet: the offset stays */ }
      return Date.now() + offset;
    },
  };
}

/**
 * Test only, the same switch as `fileClock`: a test asks for the minutely jobs now by writing a
 * number greater than the last one into `<path>.step`; `run` runs them (after a run in
 * progress), then the number is written into `<path>.done`, so the test knows they finished.
 * Each file is written whole (a temporary file, then a rename). Polled every `everyMs`.
 */
export function fileSteps(
  path: string,
  run: () => Promise<void>,
  everyMs = 20,
): { stop(): void } {
  // A process started again on the same switch answers only what is asked from now on.
  let done = Number(readOr(`${path}.done`)) || 0;
  let busy = false;
  const timer = every(everyMs, async () => {
    if (busy) return;
    const asked = Number(readOr(`${path}.step`)); // nothing asked yet: 0
    if (!(asked > done)) return;
    busy = true;
    try {
      await run();
    } finally {
      done = asked;
      Deno.writeTextFileSync(`${path}.done.new`, String(done));
      Deno.renameSync(`${path}.done.new`, `${path}.done`);
      busy = false;
    }
  });
  return { stop: () => timer.cancel() };
}

/**
 * Calls `fn` once `clock` reads `at` or later. The clock is read again at least every second,
 * so a test clock moved past `at` (`fileClock`) is noticed within a second, as the system
 * clock's time passing is.
 */
export function atTime(clock: Clock, at: number, fn: () => void): void {
  const wait = at - clock.now();
  if (wait <= 0) fn();
  else after(Math.min(wait, 1_000), () => atTime(clock, at, fn));
}

/** A small file's text, trimmed; "" when it cannot be read (not written yet). */
function readOr(path: string): string {
  try {
    return Deno.readTextFileSync(path).trim();
  } catch {
    return "";
  }
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * ISO 8601 UTC with milliseconds, the timestamp form of docs/api.md "Resources, times and text":
 * the same text as `new Date(ms).toISOString()`, computed from the number. A Date's first
 * `toISOString` in a process sets up V8's date and time-zone machinery, memory that a server
 * writing a timestamp into every log line would otherwise hold from its first request, against
 * its idle memory goal (docs/performance.md, "Start-up and the request path").
 */
export function iso(ms: number): string {
  // Many answers and lines of a busy moment share their millisecond: made once for them.
  if (ms === lastIso.ms) return lastIso.text;
  const text = isoOf(ms);
  lastIso.ms = ms;
  lastIso.text = text;
  return text;
}
const lastIso = { ms: NaN, text: "" };

/**
 * A time as a person reads it in a mail or a status line: "2026-11-27 11:31 UTC" (to the
 * minute, no "T", no milliseconds). Pages write times in the reader's zone (web/_me.tsx).
 */
export function readable(ms: number): string {
  return `${iso(ms).slice(0, 16).replace("T", " ")} UTC`;
}

function isoOf(ms: number): string {
  // Outside years 0000-9999 (and for NaN) the Date gives its own form, or its RangeError.
  if (!(ms >= -62167219200000 && ms < 253402300800000) || !Number.isInteger(ms)) {
    return new Date(ms).toISOString();
  }
  const days = Math.floor(ms / DAY);
  let rest = ms - days * DAY;
  // Days since 1970-01-01 to a civil date (H. Hinnant, "chrono-Compatible Low-Level Date
  // Algorithms"), in eras of 400 years that start on 0000-03-01.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) -
      Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / HOUR);
  rest -= hours * HOUR;
  const minutes = Math.floor(rest / MINUTE);
  rest -= minutes * MINUTE;
  const seconds = Math.floor(rest / 1000);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hours, 2)}:${pad(minutes, 2)}:${
    pad(seconds, 2)
  }.${pad(rest - seconds * 1000, 3)}Z`;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** Plain `YYYY-MM-DD` date in UTC. */
export function isoDate(ms: number): string {
  return iso(ms).slice(0, 10);
}

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms == null ? null : iso(ms);
}

/** The months' names, January first. */
export const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;

/** A month "YYYY-MM" as people read it: "November 2026". */
export const monthWords = (month: string) =>
  `${MONTH_NAMES[Number(month.slice(5, 7)) - 1]} ${month.slice(0, 4)}`;
