/**
 * Small SVG pictures drawn on the server (no chart library in the browser): a service's 90
 * daily uptime bars, its response-time chart and a status badge. Pure functions of their
 * figures; every text is escaped.
 */

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
export interface BarDay {
  date: string;
  uptime: number | null;
  down_s?: number;
  maintenance_s?: number;
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
export function dayTone(d: BarDay): "ok" | "warn" | "off" | "none" | "maintenance" {
  const down = d.down_s ?? (d.uptime === null ? 0 : d.uptime < 1 ? 3600 : 0);
  if (d.uptime === null) return (d.maintenance_s ?? 0) > 0 ? "maintenance" : "none";
  if (down <= 0) return "ok";
  return down < 3600 ? "warn" : "off";
}

/** A bar's color for a day (dayTone). */
export function barColor(d: BarDay): string {
  return COLORS[dayTone(d)];
}

/** What a day's bar says on hover: its date, how long it was down, maintenance. */
export function dayText(d: BarDay): string {
  const down = d.down_s ?? 0;
  const up = d.uptime === null
    ? "no data"
    : down > 0
    ? `down ${minutesText(down)} (${percentText(d.uptime)} up)`
    : `up all day (${percentText(d.uptime)})`;
  const m = d.maintenance_s ?? 0;
  return m > 0 ? `${up}, ${Math.round(m / 360) / 10} h maintenance` : up;
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
export interface Beat {
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
export function beatBar(beats: Beat[], opts: { slots?: number; label: string }): string {
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

/**
 * Median and 95th percentile duration per day as two lines over a common scale, with the
 * scale's top written at the left. Days without checks leave gaps.
 */
export function responseChart(
  days: { date: string; median_ms: number | null; p95_ms: number | null }[],
  opts: { width?: number; height?: number } = {},
): string {
  const w = opts.width ?? 540;
  const h = opts.height ?? 140;
  const left = 44;
  const top = 10;
  const bottom = 20;
  const plotW = w - left - 6;
  const plotH = h - top - bottom;
  const max = Math.max(1, ...days.flatMap((d) => [d.median_ms ?? 0, d.p95_ms ?? 0]));
  const x = (i: number) => left + (days.length <= 1 ? 0 : (i * plotW) / (days.length - 1));
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const line = (pick: (d: typeof days[number]) => number | null) => {
    const parts: string[] = [];
    let open = false;
    days.forEach((d, i) => {
      const v = pick(d);
      if (v === null) {
        open = false;
        return;
      }
      parts.push(`${open ? "L" : "M"}${x(i).toFixed(1)} ${y(v).toFixed(1)}`);
      open = true;
    });
    return parts.join(" ");
  };
  const first = days[0]?.date ?? "";
  const last = days[days.length - 1]?.date ?? "";
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 ${w} ${h}" role="img" aria-label="Response time per day: median and 95th percentile">`,
    `<line x1="${left}" y1="${top + plotH}" x2="${w - 6}" y2="${
      top + plotH
    }" stroke="#999" stroke-width="1"/>`,
    `<text x="${left - 4}" y="${
      top + 8
    }" font-size="10" text-anchor="end" font-family="sans-serif">${max} ms</text>`,
    `<text x="${left - 4}" y="${
      top + plotH
    }" font-size="10" text-anchor="end" font-family="sans-serif">0</text>`,
    `<text x="${left}" y="${h - 4}" font-size="10" font-family="sans-serif">${esc(first)}</text>`,
    `<text x="${w - 6}" y="${h - 4}" font-size="10" text-anchor="end" font-family="sans-serif">${
      esc(last)
    }</text>`,
    `<path d="${
      line((d) => d.p95_ms)
    }" fill="none" stroke="#d9a300" stroke-width="1.5"><title>95th percentile</title></path>`,
    `<path d="${
      line((d) => d.median_ms)
    }" fill="none" stroke="#2c6fbb" stroke-width="2"><title>median</title></path>`,
    `</svg>`,
  ].join("");
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
