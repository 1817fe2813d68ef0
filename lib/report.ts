import { type Change, type HistState, MIN_MEASURED_MS } from "./history.ts";

/**
 * An uptime report's figures of one service over [from, to), as a pure function of its state
 * changes and the stretches that explain them. Every moment is counted once, in this order:
 * in a maintenance window (`quiet`): maintenance; while this monitor was down (`gaps`): no
 * data (monitor down); off while a service it depends on was off (`parentOff`): unreachable
 * through a dependency; else up (ok, warn), down (off), or no data (waiting, paused, not
 * watched yet). Uptime is up over up and down: maintenance, unreachable and no data are not in
 * it (REPORT_RULE says so on every report).
 */

export const REPORT_RULE = "Uptime is the time up divided by the time up plus the time down. " +
  "Time in a maintenance window is left out; time unreachable because a service it depends on " +
  "was down is shown apart and not counted as its own failure; time without data (not watched " +
  "yet, paused, or this monitor itself down) is not counted. Less than 15 minutes measured " +
  "gives no figure.";

export type Span = [number, number];

interface ReportInput {
  from: number;
  to: number;
  changes: Change[];
  before: HistState | null;
  quiet?: Span[];
  gaps?: Span[];
  parentOff?: Span[];
}

/** One outage: an off stretch of the service within the range, and what explains it. */
export interface Outage {
  from: number;
  /** null: still off at the report's end. */
  to: number | null;
  /** Seconds of it counted as the service's own downtime. */
  down_s: number;
  /** Seconds of it within the range, all told. */
  duration_s: number;
  /** What explains it when nothing of it counts as down. */
  explained: "dependency" | "maintenance" | "monitor down" | null;
}

export interface ServiceFigures {
  uptime: number | null;
  up_s: number;
  down_s: number;
  unreachable_s: number;
  maintenance_s: number;
  monitor_down_s: number;
  no_data_s: number;
  outages: Outage[];
  /** The longest outage counted as its own (down), in seconds; 0 without one. */
  longest_outage_s: number;
}

const inside = (spans: Span[], t: number) => spans.some(([a, b]) => a <= t && t < b);

/** The figures of a service over [from, to). */
export function serviceFigures(input: ReportInput): ServiceFigures {
  const { from, to } = input;
  const quiet = input.quiet ?? [];
  const gaps = input.gaps ?? [];
  const parentOff = input.parentOff ?? [];
  // Elementary stretches: every boundary of a change or a span within the range.
  const cuts = new Set<number>([from, to]);
  for (const c of input.changes) if (c.at > from && c.at < to) cuts.add(c.at);
  for (const [a, b] of [...quiet, ...gaps, ...parentOff]) {
    if (a > from && a < to) cuts.add(a);
    if (b > from && b < to) cuts.add(b);
  }
  const times = [...cuts].sort((a, b) => a - b);
  let state = input.before;
  let ci = 0;
  const changes = input.changes;
  while (ci < changes.length && changes[ci].at <= from) state = changes[ci++].state;
  const sums = { up: 0, down: 0, unreachable: 0, maintenance: 0, monitor: 0, none: 0 };
  type Kind = keyof typeof sums;
  const pieces: { a: number; b: number; kind: Kind; off: boolean }[] = [];
  for (let i = 0; i + 1 < times.length; i++) {
    const a = times[i];
    const b = times[i + 1];
    while (ci < changes.length && changes[ci].at <= a) state = changes[ci++].state;
    const off = state === "off";
    const kind: Kind = inside(quiet, a)
      ? "maintenance"
      : inside(gaps, a)
      ? "monitor"
      : off && inside(parentOff, a)
      ? "unreachable"
      : off
      ? "down"
      : state === "ok" || state === "warn"
      ? "up"
      : "none";
    sums[kind] += b - a;
    pieces.push({ a, b, kind, off });
  }
  // Outages: runs of pieces while the state is off.
  const outages: Outage[] = [];
  let open: { from: number; to: number; down: number; kinds: Set<Kind> } | null = null;
  for (const p of pieces) {
    if (p.off) {
      open ??= { from: p.a, to: p.b, down: 0, kinds: new Set() };
      open.to = p.b;
      if (p.kind === "down") open.down += p.b - p.a;
      open.kinds.add(p.kind);
    } else if (open) {
      outages.push(outageOf(open, false));
      open = null;
    }
  }
  if (open) outages.push(outageOf(open, state === "off"));
  const known = sums.up + sums.down;
  const s = (ms: number) => Math.round(ms / 1000);
  return {
    uptime: known < MIN_MEASURED_MS ? null : sums.up / known,
    up_s: s(sums.up),
    down_s: s(sums.down),
    unreachable_s: s(sums.unreachable),
    maintenance_s: s(sums.maintenance),
    monitor_down_s: s(sums.monitor),
    no_data_s: s(sums.none),
    outages,
    longest_outage_s: Math.max(0, ...outages.map((o) => o.down_s)),
  };
}

function outageOf(
  o: { from: number; to: number; down: number; kinds: Set<string> },
  ongoing: boolean,
): Outage {
  const explained = o.down > 0
    ? null
    : o.kinds.has("unreachable")
    ? "dependency"
    : o.kinds.has("maintenance")
    ? "maintenance"
    : "monitor down";
  return {
    from: o.from,
    to: ongoing ? null : o.to,
    down_s: Math.round(o.down / 1000),
    duration_s: Math.round((o.to - o.from) / 1000),
    explained,
  };
}

/** The stretches of [from, to) in which the state was off, from changes (sorted by time). */
export function offSpans(
  changes: Change[],
  before: HistState | null,
  from: number,
  to: number,
): Span[] {
  const out: Span[] = [];
  let open: number | null = before === "off" ? from : null;
  for (const c of changes) {
    if (c.at >= to) break;
    const at = Math.max(from, c.at);
    if (c.state === "off") open ??= at;
    else if (open !== null) {
      if (at > open) out.push([open, at]);
      open = null;
    }
  }
  if (open !== null && to > open) out.push([open, to]);
  return out;
}

/** A month "YYYY-MM" as [its first instant, the next month's] in UTC; null when not one. */
export function monthRange(month: string): Span | null {
  const m = month.match(/^(\d{4})-(0[1-9]|1[0-2])$/);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]) - 1;
  return [Date.UTC(y, mo, 1), Date.UTC(y, mo + 1, 1)];
}

/** A day "YYYY-MM-DD" as its first instant (UTC); null when not a real day. */
export function dayAt(day: string): number | null {
  const m = day.match(/^(\d{4})-(\d{2})-(\d{2})$/);
  if (!m) return null;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(t).toISOString().slice(0, 10) === day ? t : null;
}

/** The month before the one holding `now`, as "YYYY-MM". */
export function previousMonth(now: number): string {
  const d = new Date(now);
  const t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
  return new Date(t).toISOString().slice(0, 7);
}

/** A duration as people read it: "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function durationText(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** An uptime fraction as a percent with up to three decimals, never rounded up to 100. */
export function uptimeText(uptime: number | null): string {
  if (uptime === null) return "not measured";
  const p = Math.floor(uptime * 100_000) / 1000;
  return `${p.toFixed(3).replace(/\.?0+$/, "")} %`;
}
