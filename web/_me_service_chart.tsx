/**
 * A checked service's response-time chart on its page (/me/services/<id>): the periods it
 * shows (1 hour, 24 hours, 7 or 30 days), the links that choose one, and the chart with its
 * figures in words. Drawn on the server (lib/svg.ts); no script, no inline style.
 */
import { raw } from "hono/html";
import { recentResults } from "../kv/service/history.ts";
import type { Service } from "../kv/service/commands.ts";
import { DAY, HOUR, iso, MINUTE } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { type Bucket, buckets, type OffPeriod, percentile } from "../lib/history.ts";
import { msText, responseTimeChart, type Tick } from "../lib/svg.ts";
import { when } from "./_me.tsx";

/** The periods the response-time chart shows: its span, its stretches and its ticks. */
export const RANGES = {
  "1h": { words: "1 hour", span: HOUR, count: 60, step: 15 * MINUTE, tick: "hour" },
  "24h": { words: "24 hours", span: DAY, count: 96, step: 6 * HOUR, tick: "hour" },
  "7d": { words: "7 days", span: 7 * DAY, count: 168, step: DAY, tick: "day" },
  "30d": { words: "30 days", span: 30 * DAY, count: 120, step: 7 * DAY, tick: "day" },
} as const;
export type Range = keyof typeof RANGES;

/** Points on the time axis: each `step` (whole UTC hours or days) within [from, to]. */
function ticksOf(from: number, to: number, range: Range): Tick[] {
  const { step, tick } = RANGES[range];
  const out: Tick[] = [];
  for (let t = Math.ceil(from / step) * step; t < to; t += step) {
    const text = tick === "hour" ? iso(t).slice(11, 16) : dayWords(t);
    out.push({ at: t, text, kind: tick });
  }
  return out;
}

const MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" ");
/** "Nov 27" (UTC; the page writes it again in the reader's zone). */
const dayWords = (t: number) => `${MONTHS[new Date(t).getUTCMonth()]} ${new Date(t).getUTCDate()}`;

/** A stretch's words on hover: when, then its figures. */
function bucketLabel(b: Bucket): string {
  const span = `${when(b.from)} to ${iso(b.to).slice(11, 16)}`;
  if (!b.checks) return `${span}: no checks`;
  const failed = b.failed ? `, ${b.failed} failed` : "";
  return `${span}: median ${msText(b.median_ms!)}, 95th percentile ${
    msText(b.p95_ms!)
  } (${b.checks} check${b.checks === 1 ? "" : "s"}${failed})`;
}

/** The links that choose the chart's period (a GET: no script needed). */
function RangeLinks(props: { id: number; range: Range }) {
  return (
    <nav aria-label="Period of the chart" class="ranges">
      <ul class="inline">
        {(Object.keys(RANGES) as Range[]).map((r) => (
          <li>
            <a
              href={`/me/services/${props.id}?range=${r}#chart`}
              aria-current={r === props.range ? "page" : undefined}
            >
              {RANGES[r].words}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** A checked service's response times over the chosen period, with its figures in words. */
export async function ResponseTimePart(
  props: { deps: Deps; s: Service; range: Range; now: number; down: OffPeriod[] },
) {
  const { s, range, now } = props;
  const { span, count, words } = RANGES[range];
  // Stretches on whole quarter hours, hours or six hours: the last one holds now.
  const size = span / count;
  const to = Math.floor(now / size) * size + size;
  const from = to - span;
  const results = await recentResults(props.deps.kv, s.account, s.id, now, now - from);
  const data = buckets(results, from, to, count).map((b) => ({ ...b, label: bucketLabel(b) }));
  const times = results.map((r) => r.ms);
  const failed = results.filter((r) => r.state === "off").length;
  const median = percentile(times, 50);
  const p95 = percentile(times, 95);
  const summary = results.length
    ? `${results.length} check${results.length === 1 ? "" : "s"}: median ${msText(median!)}, ` +
      `95th percentile ${msText(p95!)}, slowest ${msText(Math.max(...times))}; ${
        failed ? `${failed} failed` : "none failed"
      }.`
    : "No checks in this period yet.";
  return (
    <section aria-labelledby="chart" class="panel">
      <h2 id="chart">Response time, last {words}</h2>
      <RangeLinks id={s.id} range={range} />
      <figure>
        {raw(responseTimeChart(data, {
          from,
          to,
          ticks: ticksOf(from, to, range),
          down: props.down.map((p) => [p.from, p.to ?? now]),
          label: `Response time of ${s.name} over the last ${words}. ${summary}`,
        }))}
        <figcaption class="hint">
          <span class="key key-median"></span> median, <span class="key key-p95"></span>{" "}
          95th percentile, <span class="key key-fail"></span> failed checks, shaded: down. Times in
          {" "}
          <span data-zone="">UTC</span>.
        </figcaption>
      </figure>
      <p>{summary}</p>
    </section>
  );
}
