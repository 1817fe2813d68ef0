/**
 * Counters for `GET /metrics` (Prometheus text format 0.0.4), kept in this process's memory.
 * Each server process (each isolate on Deno Deploy) counts only what it served, from its own
 * start; Prometheus sums them. What lives in KV (the mail queue) is read when scraped.
 *
 * Labels hold route patterns, statuses, kinds and outcomes only: never a path, an address or
 * anything a person wrote.
 */

/** Upper bounds of the latency buckets, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RouteStats {
  /** `method="GET",route="/api/me"`, escaped once. */
  labels: string;
  byStatus: Map<number, number>;
  /** Counts per bucket (last: +Inf), then the sum of seconds. */
  hist: Float64Array;
  inFlight: number;
}

const routes = new Map<string, RouteStats>();
const counters = new Map<string, Map<string, number>>();
const started = Date.now();

/** A request began on `route` (the pattern); answers the stats to pass to `requestEnded`. */
export function requestStarted(method: string, route: string): RouteStats {
  const id = `${method} ${route}`;
  let s = routes.get(id);
  if (!s) {
    const labels = `method="${label(method)}",route="${label(route)}"`;
    s = { labels, byStatus: new Map(), hist: new Float64Array(BUCKETS.length + 2), inFlight: 0 };
    routes.set(id, s);
  }
  s.inFlight++;
  return s;
}

export function requestEnded(s: RouteStats, status: number, seconds: number): void {
  s.inFlight--;
  s.byStatus.set(status, (s.byStatus.get(status) ?? 0) + 1);
  let i = 0;
  while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
  s.hist[i]++;
  s.hist[BUCKETS.length + 1] += seconds;
}

let uploads = 0;

/** Counts an upload (a request whose route reads its own body) while it is received. */
export async function receivingUpload(next: () => Promise<void>): Promise<void> {
  uploads++;
  try {
    await next();
  } finally {
    uploads--;
  }
}

/** Uploads being received now. */
export const uploadsInProgress = (): number => uploads;

/** Adds to a labelled counter, e.g. count("checks_total", 'kind="http",outcome="ok"'). */
export function count(name: string, labels = "", n = 1): void {
  let m = counters.get(name);
  if (!m) counters.set(name, m = new Map());
  m.set(labels, (m.get(labels) ?? 0) + n);
}

/** A label value with the format's escapes. */
export function label(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** A value read at scrape time (from KV, or a count kept by another module). */
export interface Gauge {
  name: string;
  help: string;
  value: number;
  labels?: string;
  type?: "gauge" | "counter";
}

const HELP: Record<string, string> = {
  catalogue_heartbeats_total: "Heartbeat pings answered, by outcome",
  catalogue_checks_total: "Checks run by the jobs, by kind and outcome",
  catalogue_mail_total: "Mail delivery attempts, by outcome",
  catalogue_job_runs_total: "Job runs, by job and outcome",
  catalogue_queued_looks_total: "Looks asked for through the KV queue, by outcome",
  catalogue_watchdog_pings_total:
    "Pings of the outside watchdog (WATCHDOG_URL), by signal and outcome",
};

/** The whole exposition: this process's counters plus the gauges read at scrape time. */
export function render(gauges: Gauge[]): string {
  const out: string[] = [];
  out.push("# HELP catalogue_http_requests_total Requests answered, by route pattern and status");
  out.push("# TYPE catalogue_http_requests_total counter");
  for (const s of routes.values()) {
    for (const [status, n] of s.byStatus) {
      out.push(`catalogue_http_requests_total{${s.labels},status="${status}"} ${n}`);
    }
  }
  out.push("# HELP catalogue_http_request_duration_seconds Time to answer, by route pattern");
  out.push("# TYPE catalogue_http_request_duration_seconds histogram");
  for (const s of routes.values()) {
    let sum = 0;
    for (let i = 0; i <= BUCKETS.length; i++) {
      sum += s.hist[i];
      const le = i < BUCKETS.length ? String(BUCKETS[i]) : "+Inf";
      out.push(`catalogue_http_request_duration_seconds_bucket{${s.labels},le="${le}"} ${sum}`);
    }
    out.push(
      `catalogue_http_request_duration_seconds_sum{${s.labels}} ${s.hist[BUCKETS.length + 1]}`,
    );
    out.push(`catalogue_http_request_duration_seconds_count{${s.labels}} ${sum}`);
  }
  out.push("# HELP catalogue_http_requests_in_flight Requests under way, by route pattern");
  out.push("# TYPE catalogue_http_requests_in_flight gauge");
  for (const s of routes.values()) {
    if (s.inFlight > 0) out.push(`catalogue_http_requests_in_flight{${s.labels}} ${s.inFlight}`);
  }
  for (const [name, help] of Object.entries(HELP)) {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    for (const [labels, n] of counters.get(name) ?? []) {
      out.push(labels ? `${name}{${labels}} ${n}` : `${name} ${n}`);
    }
    if (!counters.get(name)?.size && !HELP[name].includes(", by")) out.push(`${name} 0`);
  }
  for (const g of gauges) {
    out.push(`# HELP ${g.name} ${g.help}`, `# TYPE ${g.name} ${g.type ?? "gauge"}`);
    out.push(g.labels ? `${g.name}{${g.labels}} ${g.value}` : `${g.name} ${g.value}`);
  }
  out.push("# HELP catalogue_process_start_time_seconds When this process started");
  out.push("# TYPE catalogue_process_start_time_seconds gauge");
  out.push(`catalogue_process_start_time_seconds ${Math.floor(started / 1000)}`);
  return out.join("\n") + "\n";
}
