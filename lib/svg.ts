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

/** A bar's color: full days green, short outages yellow, longer ones red, no data grey. */
export function barColor(uptime: number | null): string {
  if (uptime === null) return COLORS.none;
  if (uptime >= 0.9995) return COLORS.ok;
  if (uptime >= 0.95) return COLORS.warn;
  return COLORS.off;
}

/** One bar per day (oldest left), each with a title for its date and uptime. */
export function uptimeBars(
  days: { date: string; uptime: number | null; maintenance_s?: number }[],
  opts: { height?: number; bar?: number; gap?: number } = {},
): string {
  const h = opts.height ?? 28;
  const bw = opts.bar ?? 4;
  const gap = opts.gap ?? 2;
  const w = Math.max(1, days.length * (bw + gap) - gap);
  const bars = days.map((d, i) => {
    const up = d.uptime === null ? "no data" : `${percentText(d.uptime)} up`;
    const m = d.maintenance_s ?? 0;
    // A day with maintenance says so, and carries a blue cap: those hours are not in the uptime.
    const label = m > 0 ? `${up}, ${Math.round(m / 360) / 10} h maintenance` : up;
    const cap = m > 0
      ? `<rect x="${i * (bw + gap)}" y="0" width="${bw}" height="4" fill="${COLORS.maintenance}"/>`
      : "";
    return `<rect x="${i * (bw + gap)}" y="0" width="${bw}" height="${h}" rx="1" fill="${
      barColor(d.uptime)
    }"><title>${esc(d.date)}: ${esc(label)}</title></rect>${cap}`;
  });
  // Scales to the width it is given (a phone's included); the bars keep their height.
  return `<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="${h}" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" role="img" aria-label="Daily uptime, ${days.length} days">${
    bars.join("")
  }</svg>`;
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
