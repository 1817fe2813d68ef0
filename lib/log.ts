/**
 * Operator logs: one JSON object per line on standard output, e.g.
 *   {"t":"2026-11-23T20:00:00.000Z","level":"info","msg":"request","method":"GET",
 *    "route":"/api/me","status":200,"ms":1.4}
 * Callers pass only what is safe to print: route patterns (never raw paths, which can hold a
 * hook key or a token), counts, states, error codes. Never an address, a name, a token, a
 * key, a file name or any text a person wrote.
 *
 * Lines are buffered and written together a few milliseconds later, so a request pays for one
 * string, not one write; warnings and errors are written at once. A process that never calls
 * `configureLog` (tests driving the app in-process, owner commands) prints warnings and errors
 * only.
 */

import { iso } from "./clock.ts";
import { after, type Timer } from "./timers.ts";

export const LOG_LEVELS = ["debug", "info", "warn", "error", "off"] as const;
export type Level = (typeof LOG_LEVELS)[number];
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

type Fields = Record<string, string | number | boolean | null | undefined>;

let threshold = RANK.warn;
let pending: string[] = [];
let timer: Timer | undefined;
const enc = new TextEncoder();
let sink: (text: string) => void = (text) => {
  const bytes = enc.encode(text);
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
};

/** Sets the level (main.ts, from LOG_LEVEL). */
export function configureLog(level: Level): void {
  threshold = RANK[level];
}

/** Whether a line of this level would be written (to skip building costly fields). */
export function enabled(level: Exclude<Level, "off">): boolean {
  return RANK[level] >= threshold;
}

/** Sends lines elsewhere (tests); answers the previous sink's restorer. */
export function captureLog(to: (line: string) => void): () => void {
  const before = sink;
  const beforeLevel = threshold;
  flushLog();
  sink = (text) => text.split("\n").filter(Boolean).forEach(to);
  threshold = RANK.debug;
  return () => {
    flushLog();
    sink = before;
    threshold = beforeLevel;
  };
}

export function log(level: Exclude<Level, "off">, msg: string, fields: Fields = {}): void {
  if (RANK[level] < threshold) return;
  push(level, JSON.stringify({ t: now(), level, msg, ...fields }));
}

/** The time as ISO text (`iso` makes it once per millisecond: many requests share one). */
const now = () => iso(Date.now());

const quoted = new Map<string, string>();
/**
 * The request line, built as text: it is written for every request, and this costs a fraction
 * of building an object and stringifying it. Same fields and order as `log` would give.
 */
export function logRequest(method: string, route: string, status: number, ms: number): void {
  if (RANK.info < threshold) return;
  let r = quoted.get(route);
  if (r === undefined) {
    r = JSON.stringify(route);
    if (quoted.size < 1000) quoted.set(route, r);
  }
  const m = method.length <= 10 && /^[A-Z]+$/.test(method) ? method : "OTHER";
  push(
    "info",
    `{"t":"${now()}","level":"info","msg":"request","method":"${m}","route":${r},"status":${status},"ms":${ms}}`,
  );
}

function push(level: Exclude<Level, "off">, line: string): void {
  pending.push(line);
  if (RANK[level] >= RANK.warn || pending.length >= 256) flushLog();
  else if (timer === undefined) {
    timer = after(20, flushLog);
  }
}

/** Writes what is buffered (also called before the process exits). */
export function flushLog(): void {
  timer?.cancel();
  timer = undefined;
  if (pending.length === 0) return;
  const text = pending.join("\n") + "\n";
  pending = [];
  try {
    sink(text);
  } catch { /* standard output closed: nothing else to tell */ }
}

/** The kind of an error, fit for a log line: a code or a class name, never its message. */
export function errorKind(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { code?: unknown; responseCode?: unknown; name?: unknown };
    if (typeof e.code === "string" && /^[A-Z0-9_]{2,40}$/.test(e.code)) return e.code;
    if (typeof e.name === "string" && /^[A-Za-z]{1,40}$/.test(e.name)) return e.name;
  }
  return "error";
}

/** Where an error was thrown: the stack's frames (code locations) without its message. */
export function stackFrames(err: unknown): string {
  if (!(err instanceof Error) || !err.stack) return "";
  return err.stack.split("\n").filter((l) => /^\s+at /.test(l)).slice(0, 8)
    .map((l) => l.trim().slice(3)).join(" < ");
}
