/**
 * Small SVG pictures drawn on the server (no chart library in the browser): a service's 90
 * daily uptime bars, its beat bar and sparkline, its response-time chart and a status badge. Pure functions of their
 * figures; every text is escaped.
 */
import type { Bucket } from "./history.ts";

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export const COLORS = {
  ok: "#2e9e5b",
  warn: "#d9a300",
  off: "#d64541",
  none: "#c9ced6",
  maintenance: "#2c6fbb",
} as const;

/** Percent with up to two decimals, never rounded up to 100 unless it is 100. */
export function percentText(uptime: number): string {
  const p = Math.floor(uptime * 10000) / 100;
  return `${p % 1 === 0 ? p.toFixed(0) : p.toFixed(2).replace(/0$/, "")} %`;
}

/** A day as its bar shows it. */
interface BarDay {
  date: string;
  uptime: number | null;
  down_s?: number;
  maintenance_s?: number;
  /** Seconds this monitor itself was down: no data (kv/service/monitor.ts). */
  monitor_down_s?: number;
}

/** Minutes and hours as people read them: "12 min", "3 h 5 min". */
export function minutesText(seconds: number): string {
  const m = Math.max(1, Math.round(seconds / 60));
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
}

/**
 * A day's tone, by how long it was down (the legend's words): green when never down, yellow
 * when down for less than an hour, red for an hour or more; blue when maintenance covered it
 * all, grey without data.
 */
function dayTone(d: BarDay): "ok" | "warn" | "off" | "none" | "maintenance" {
  const down = d.down_s ?? (d.uptime === null ? 0 : d.uptime < 1 ? 3600 : 0);
  if (d.uptime === null) return (d.maintenance_s ?? 0) > 0 ? "maintenance" : "none";
  // Down for less than the half second its rounding keeps is down all the same: never green.
  if (down <= 0 && d.uptime >= 1) return "ok";
  return down < 3600 ? "warn" : "off";
}

/** A bar's color for a day (dayTone). */
export function barColor(d: BarDay): string {
  return COLORS[dayTone(d)];
}

/** What a day's bar says on hover: its date, how long it was down, maintenance. */
function dayText(d: BarDay): string {
  const down = d.down_s ?? 0;
  const up = d.uptime === null
    ? "no data"
    : down > 0 || d.uptime < 1
    ? `down ${down < 60 ? "under a minute" : minutesText(down)} (${percentText(d.uptime)} up)`
    : `up all day (${percentText(d.uptime)})`;
  const m = d.maintenance_s ?? 0;
  const gone = d.monitor_down_s ?? 0;
  const said = m > 0 ? `${up}, ${Math.round(m / 360) / 10} h maintenance` : up;
  return gone > 0 ? `${said}, no data (monitor down) ${minutesText(gone)}` : said;
}

/** One bar per day (oldest left), each with a title for its date and what it was. */
export function uptimeBars(
  days: BarDay[],
  opts: { height?: number; bar?: number; gap?: number } = {},
): string {
  const h = opts.height ?? 28;
  const bw = opts.bar ?? 4;
  const gap = opts.gap ?? 2;
  const w = Math.max(1, days.length * (bw + gap) - gap);
  const bars = days.map((d, i) => {
    const m = d.maintenance_s ?? 0;
    const tone = dayTone(d);
    // A day with maintenance carries a blue cap: those hours are not in the uptime.
    const cap = m > 0 && tone !== "maintenance"
      ? `<rect x="${
        i * (bw + gap)
      }" y="0" width="${bw}" height="4" class="t-maintenance" fill="${COLORS.maintenance}"/>`
      : "";
    return `<rect x="${
      i * (bw + gap)
    }" y="0" width="${bw}" height="${h}" rx="1" class="t-${tone}" fill="${COLORS[tone]}"><title>${
      esc(d.date)
    }: ${esc(dayText(d))}</title></rect>${cap}`;
  });
  // Scales to the width it is given (a phone's included); the bars keep their height.
  return `<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="${h}" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" role="img" aria-label="Daily uptime, ${days.length} days">${
    bars.join("")
  }</svg>`;
}

/** One result of a beat bar: when, how it went, its text (time and result in words). */
export interface BeatBar {
  at: number;
  tone: "ok" | "warn" | "off";
  label: string;
}

/**
 * The last results as bars, oldest left, empty slots on the left until there are `slots`.
 * Failures stand full height, successes lower (a shape, not only a colour). Each bar is
 * focusable in turn (one tab stop: web/static/live.js moves along them with the arrow keys)
 * and names its time and result.
 */
export function beatBar(beats: BeatBar[], opts: { slots?: number; label: string }): string {
  const slots = opts.slots ?? 50;
  const shown = beats.slice(-slots);
  const bw = 6;
  const gap = 2;
  const h = 24;
  const w = slots * (bw + gap) - gap;
  const pad = slots - shown.length;
  const empty = Array.from(
    { length: pad },
    (_, i) =>
      `<rect x="${i * (bw + gap)}" y="${
        h - 4
      }" width="${bw}" height="4" class="t-none" fill="${COLORS.none}"/>`,
  );
  const bars = shown.map((b, i) => {
    const x = (pad + i) * (bw + gap);
    const bh = b.tone === "ok" ? 16 : h;
    const focus = i === shown.length - 1 ? "0" : "-1";
    return `<rect x="${x}" y="${
      h - bh
    }" width="${bw}" height="${bh}" rx="1" class="t-${b.tone}" fill="${
      COLORS[b.tone]
    }" tabindex="${focus}" role="img" aria-label="${esc(b.label)}" data-at="${b.at}"><title>${
      esc(b.label)
    }</title></rect>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" class="beats" width="100%" height="${h}" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" role="group" aria-label="${
    esc(opts.label)
  }">${empty.join("")}${bars.join("")}</svg>`;
}

/** Response times as a small line, newest right; null when there are fewer than two. */
export function sparkline(ms: number[], label: string): string | null {
  if (ms.length < 2) return null;
  const w = 100;
  const h = 24;
  const max = Math.max(1, ...ms);
  const pts = ms.map((v, i) =>
    `${((i * w) / (ms.length - 1)).toFixed(1)},${(h - 2 - (v / max) * (h - 4)).toFixed(1)}`
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" class="spark" width="100" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${
    esc(label)
  }"><polyline points="${
    pts.join(" ")
  }" fill="none" class="s-line" stroke="${COLORS.maintenance}" stroke-width="1.5"/></svg>`;
}

/** A shields-style badge: a label and the state in its color. */
export function badge(
  label: string,
  state: "ok" | "warn" | "off" | "wait" | "maintenance" | "paused",
): string {
  const words = {
    ok: "up",
    warn: "late",
    off: "down",
    wait: "new",
    maintenance: "maintenance",
    paused: "paused",
  };
  const colors = {
    ok: COLORS.ok,
    warn: COLORS.warn,
    off: COLORS.off,
    wait: COLORS.none,
    maintenance: COLORS.maintenance,
    paused: COLORS.none,
  };
  const text = words[state];
  // About 6.5 px per character at 11 px Verdana, as the usual badges estimate.
  const lw = Math.round(label.length * 6.5) + 12;
  const rw = Math.round(text.length * 6.5) + 12;
  const w = lw + rw;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${
    esc(label)
  }: ${text}"><title>${
    esc(label)
  }: ${text}</title><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${rw}" height="20" fill="${
    colors[state]
  }"/><g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle"><text x="${
    lw / 2
  }" y="14">${esc(label)}</text><text x="${lw + rw / 2}" y="14">${text}</text></g></svg>`;
}

/** A round scale top at or above `max`: 1, 2 or 5 times a power of ten. */
export function niceTop(max: number): number {
  if (max <= 0) return 10;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/** Milliseconds as a scale reads them: "800 ms", "1.5 s". */
export function msText(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** A point on the time axis with its text; `at` lets the page write it in the reader's zone. */
export interface Tick {
  at: number;
  text: string;
  /** How web/static/site.js writes it again: a time of day, or a date. */
  kind: "hour" | "day";
}

/** One stretch of the response-time chart (lib/history.ts `buckets`) with its words. */
interface ChartBucket extends Bucket {
  /** Its words on hover: when, the figures. */
  label: string;
}

const CHART_H = 190;
const PLOT_TOP = 14;
const PLOT_H = 150;
/** The inner plot's own width: it is stretched to the page, its lines keep their width. */
const PLOT_W = 1000;

/**
 * Response times over a period, drawn to the page's width with text that keeps its size: the
 * outer picture has no viewBox (its text, grid and ticks are placed in pixels and percent), the
 * plot inside is stretched (`preserveAspectRatio="none"`, strokes not scaled). Median and 95th
 * percentile per stretch as two lines, stretches with failed checks marked by a red bar at the
 * foot, times the service was down shaded. Gaps where nothing was checked.
 */
export function responseTimeChart(
  data: ChartBucket[],
  opts: { from: number; to: number; ticks: Tick[]; down: [number, number][]; label: string },
): string {
  const { from, to } = opts;
  const top = niceTop(Math.max(0, ...data.flatMap((b) => [b.median_ms ?? 0, b.p95_ms ?? 0])));
  const x = (t: number) => ((t - from) / (to - from)) * PLOT_W;
  const y = (v: number) => PLOT_H - (v / top) * PLOT_H;
  // Each run of stretches with checks is a subpath; a lone one a dot (a round cap on a step
  // too short to see).
  const line = (pick: (b: ChartBucket) => number | null) => {
    const runs: string[][] = [];
    let run: string[] | null = null;
    for (const b of data) {
      const v = pick(b);
      if (v === null) {
        run = null;
        continue;
      }
      if (!run) runs.push(run = []);
      run.push(`${x((b.from + b.to) / 2).toFixed(1)} ${y(v).toFixed(1)}`);
    }
    return runs.map((r) => `M${r.join(" L")}${r.length === 1 ? " h0.1" : ""}`).join(" ");
  };
  const grid = [0, 0.5, 1].map((f) => {
    const gy = PLOT_TOP + PLOT_H - f * PLOT_H;
    return `<line x1="0" x2="100%" y1="${gy}" y2="${gy}" class="grid"/>` +
      (f > 0 ? `<text x="2" y="${gy - 3}" class="axis">${msText(top * f)}</text>` : "");
  });
  const pct = (t: number) => `${(((t - from) / (to - from)) * 100).toFixed(2)}%`;
  const ticks = opts.ticks.filter((t) => t.at > from && t.at < to).map((t) => {
    // Near an edge the text stands on the inner side of its tick, so it is never cut.
    const f = (t.at - from) / (to - from);
    const anchor = f < 0.06 ? "start" : f > 0.94 ? "end" : "middle";
    return `<line x1="${pct(t.at)}" x2="${pct(t.at)}" y1="${PLOT_TOP + PLOT_H}" y2="${
      PLOT_TOP + PLOT_H + 4
    }" class="grid"/><text x="${pct(t.at)}" y="${
      PLOT_TOP + PLOT_H + 18
    }" class="axis" text-anchor="${anchor}" data-at="${t.at}" data-tick="${t.kind}">${
      esc(t.text)
    }</text>`;
  });
  const down = opts.down.map(([a, b]) => {
    const x0 = x(Math.max(from, a));
    const x1 = x(Math.min(to, b));
    return `<rect x="${x0.toFixed(1)}" y="0" width="${
      Math.max(2, x1 - x0).toFixed(1)
    }" height="${PLOT_H}" class="down-span"/>`;
  });
  const marks = data.filter((b) => b.failed > 0).map((b) =>
    `<rect x="${x(b.from).toFixed(1)}" y="${PLOT_H - 6}" width="${
      Math.max(2, x(b.to) - x(b.from) - 1).toFixed(1)
    }" height="6" class="t-off" fill="${COLORS.off}"/>`
  );
  const hover = data.filter((b) => b.checks > 0).map((b) =>
    `<rect x="${x(b.from).toFixed(1)}" y="0" width="${
      (x(b.to) - x(b.from)).toFixed(1)
    }" height="${PLOT_H}" fill="transparent"><title>${esc(b.label)}</title></rect>`
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="100%" height="${CHART_H}" role="img" aria-label="${
      esc(opts.label)
    }">`,
    ...grid,
    `<svg x="0" y="${PLOT_TOP}" width="100%" height="${PLOT_H}" viewBox="0 0 ${PLOT_W} ${PLOT_H}" preserveAspectRatio="none">`,
    ...down,
    `<path d="${
      line((b) => b.p95_ms)
    }" fill="none" class="c-p95" stroke="${COLORS.warn}" stroke-width="1.5" stroke-linecap="round" stroke-linejoin="round" vector-effect="non-scaling-stroke"/>`,
    `<path d="${
      line((b) => b.median_ms)
    }" fill="none" class="c-median" stroke="${COLORS.maintenance}" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" vector-effect="non-scaling-stroke"/>`,
    ...marks,
    ...hover,
    `</svg>`,
    ...ticks,
    `</svg>`,
  ].join("");
}
