import { DAY, iso, isoDate, MONTH_NAMES } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { invalid, notFound } from "../../lib/errors.ts";
import { merged } from "../../lib/maintenance.ts";
import {
  dayAt,
  monthRange,
  offSpans,
  type Outage,
  previousMonth,
  REPORT_RULE,
  type ServiceFigures,
  serviceFigures,
  type Span,
} from "../../lib/report.ts";
import { monthlyReportMail } from "../../mail/reports.ts";
import { atomic, commit, transact } from "../_atomic.ts";
import { type Account, getAccount } from "../accounts/accounts.ts";
import { changesBetween, countChecks, KEEP_DAYS } from "../service/history.ts";
import { listEvents } from "../service/heartbeats.ts";
import { listWindows, quietSpans } from "../service/maintenance.ts";
import { listGaps } from "../service/monitor.ts";
import { enqueueMail } from "../alerts/outbox.ts";
import { listServices, type Service } from "../service/commands.ts";
import { listStatusPages, pageSlug } from "./settings.ts";

/**
 * Uptime reports: for one service, the services of a status page, or the whole account, over a
 * month or a range of days (UTC), the figures of lib/report.ts per service (uptime with its
 * rule, maintenance left out, unreachable through a dependency apart, no data not counted), its
 * outages with their durations and the longest, and its checks or runs counted; as data for
 * the page, the CSV and the API, and mailed monthly to the account that asks.
 * Key layout (owned here):
 *   ["report_mail", account_id] -> {since, last?}  the account asked for the monthly mail;
 *                                  `last`: the month ("YYYY-MM") last mailed
 */

const mailKey = (account: number) => ["report_mail", account] as const;

type ReportScope =
  | { kind: "account" }
  | { kind: "service"; id: number }
  | { kind: "page"; slug: string };

interface ReportAsk {
  scope: ReportScope;
  /** "YYYY-MM"; or `from` and `to`, days "YYYY-MM-DD" (both included). */
  month?: string;
  from?: string;
  to?: string;
}

interface ReportRow extends ServiceFigures {
  id: number;
  name: string;
  kind: string;
  group: string;
  /** Checks recorded (checked kinds) or runs received (heartbeats) in the range. */
  checks: number;
  /** Heartbeats: only the last signals are kept, so `checks` may count fewer than there were. */
  checks_partial: boolean;
  /** The names of the services it depends on (unreachable time is theirs). */
  depends_on: string[];
}

export interface Report {
  title: string;
  scope: ReportScope;
  from: number;
  to: number;
  /** The range as asked, in words: "November 2026", "2026-11-03 to 2026-11-09". */
  period: string;
  rule: string;
  rows: ReportRow[];
  /** The rows' figures summed; outages counted. */
  totals: Omit<ServiceFigures, "outages"> & { outages: number; checks: number };
  created: number;
}

/** A range longer than this is refused (the history is kept 90 days). */
const MAX_RANGE_DAYS = KEEP_DAYS;

/** The range asked, checked: a month, or two days in order within the history kept. */
function reportRange(
  ask: ReportAsk,
  now: number,
): { from: number; to: number; period: string } {
  let from: number;
  let to: number;
  let period: string;
  if (ask.month !== undefined) {
    if (ask.from !== undefined || ask.to !== undefined) {
      invalid("give a month or a range of days (from, to), not both", "month");
    }
    const r = monthRange(ask.month);
    if (!r) invalid("month: must be a month as YYYY-MM, for example 2026-11", "month");
    [from, to] = r;
    period = `${MONTH_NAMES[new Date(from).getUTCMonth()]} ${new Date(from).getUTCFullYear()}`;
  } else if (ask.from !== undefined || ask.to !== undefined) {
    const f = ask.from === undefined ? null : dayAt(ask.from);
    const t = ask.to === undefined ? null : dayAt(ask.to);
    if (f === null) invalid("from: must be a day as YYYY-MM-DD", "from");
    if (t === null) invalid("to: must be a day as YYYY-MM-DD", "to");
    if (t < f) invalid("to: must be the same day as from or later", "to");
    from = f;
    to = t + DAY;
    period = `${ask.from} to ${ask.to}`;
  } else {
    // Nothing asked: this month so far.
    const d = new Date(now);
    from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    to = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    period = `${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  }
  if ((to - from) / DAY > MAX_RANGE_DAYS + 1) {
    invalid(`to: a report covers at most ${MAX_RANGE_DAYS} days (the history kept)`, "to");
  }
  const earliest = Math.floor(now / DAY) * DAY - (KEEP_DAYS - 1) * DAY;
  if (to <= earliest) {
    invalid(
      `${ask.month !== undefined ? "month" : "from"}: the history is kept ${KEEP_DAYS} days; ` +
        `the earliest day is ${isoDate(earliest)}`,
      ask.month !== undefined ? "month" : "from",
    );
  }
  if (from > now) {
    invalid(
      `${ask.month !== undefined ? "month" : "from"}: must not be in the future`,
      ask.month !== undefined ? "month" : "from",
    );
  }
  return { from, to, period };
}

/** The services a scope covers, in the order the owner sees them. */
async function scopeServices(
  deps: Deps,
  account: Account,
  scope: ReportScope,
): Promise<{ title: string; list: Service[]; all: Service[] }> {
  const all = (await listServices(deps.kv, account.id)).map((x) => x.service);
  if (scope.kind === "account") return { title: "All services", list: all, all };
  if (scope.kind === "service") {
    const s = all.find((x) => x.id === scope.id);
    if (!s) notFound("no such service");
    return { title: s.name, list: [s], all };
  }
  const page = (await listStatusPages(deps.kv, account.id))
    .find((p) => pageSlug(p, account) === scope.slug);
  if (!page) notFound("no such status page");
  const byId = new Map(all.map((s) => [s.id, s]));
  const list = page.services.map((x) => byId.get(x.id)).filter((s): s is Service => !!s);
  return { title: page.title || "Status page", list, all };
}

/** The services `s` depends on (issue 47, dependencies), as records. */
function parentsOf(s: Service, all: Service[]): Service[] {
  const ids = s.depends_on ?? [];
  return all.filter((x) => ids.includes(x.id));
}

/**
 * The figures (lib/report.ts) of each of `list` over [from, to): its changes, the maintenance
 * windows covering it, this monitor's gaps, and the off stretches of the services it depends on
 * (among `all`, the account's).
 */
async function figuresOver(
  deps: Deps,
  accountId: number,
  list: Service[],
  all: Service[],
  from: number,
  to: number,
): Promise<ServiceFigures[]> {
  const [windows, gaps] = await Promise.all([
    listWindows(deps.kv, accountId),
    listGaps(deps.kv, from, to),
  ]);
  const offOf = new Map<number, Promise<Span[]>>();
  const offSpansOf = (s: Service) => {
    let p = offOf.get(s.id);
    if (!p) {
      p = changesBetween(deps.kv, accountId, s.id, from, to)
        .then(({ changes, before }) => offSpans(changes, before, from, to));
      offOf.set(s.id, p);
    }
    return p;
  };
  return await Promise.all(list.map(async (s) => {
    const [{ changes, before }, parentOff] = await Promise.all([
      changesBetween(deps.kv, accountId, s.id, from, to),
      Promise.all(parentsOf(s, all).map(offSpansOf)).then((xs) => merged(xs.flat())),
    ]);
    return serviceFigures({
      from,
      to,
      changes,
      before,
      quiet: quietSpans(windows, s, from, to),
      gaps,
      parentOff,
    });
  }));
}

/**
 * What explains an incident's outages, in words (the status page says so), or null: the
 * affected services' time off in it that a maintenance window or a service they depend on
 * being down accounts for.
 */
export async function incidentExplained(
  deps: Deps,
  accountId: number,
  incident: { services: number[]; created: number; resolved: number | null },
  all: Service[],
): Promise<string | null> {
  const list = all.filter((s) => incident.services.includes(s.id));
  if (!list.length) return null;
  const to = incident.resolved ?? deps.clock.now();
  const figures = await figuresOver(deps, accountId, list, all, incident.created, to);
  const said: string[] = [];
  list.forEach((s, i) => {
    const f = figures[i];
    if (f.unreachable_s > 0) {
      const parents = parentsOf(s, all).map((p) => p.name).join(", ");
      said.push(`${s.name} was unreachable because ${parents}, which it depends on, was down`);
    }
    if (f.maintenance_s > 0) said.push(`${s.name} was in a planned maintenance window`);
  });
  return said.length ? `${said.join("; ")}.` : null;
}

/** The uptime report of `account` for what it asks. */
export async function uptimeReport(deps: Deps, accountId: number, ask: ReportAsk): Promise<Report> {
  const now = deps.clock.now();
  const account = (await getAccount(deps.kv, accountId)).value;
  if (!account) notFound("no such account");
  const { from, to: end, period } = reportRange(ask, now);
  const to = Math.min(end, now);
  const { title, list, all } = await scopeServices(deps, account, ask.scope);
  const figures = await figuresOver(deps, accountId, list, all, from, to);
  const rows = await Promise.all(list.map(async (s, i): Promise<ReportRow> => ({
    id: s.id,
    name: s.name,
    kind: s.kind,
    group: s.group,
    ...figures[i],
    ...await countOf(deps, s, from, to),
    depends_on: parentsOf(s, all).map((p) => p.name),
  })));
  const sum = (k: keyof ServiceFigures & `${string}_s`) => rows.reduce((n, r) => n + r[k], 0);
  const up = sum("up_s");
  const down = sum("down_s");
  return {
    title,
    scope: ask.scope,
    from,
    to,
    period,
    rule: REPORT_RULE,
    rows,
    totals: {
      uptime: up + down >= 15 * 60 ? up / (up + down) : null,
      up_s: up,
      down_s: down,
      unreachable_s: sum("unreachable_s"),
      maintenance_s: sum("maintenance_s"),
      monitor_down_s: sum("monitor_down_s"),
      no_data_s: sum("no_data_s"),
      outages: rows.reduce((n, r) => n + r.outages.length, 0),
      longest_outage_s: Math.max(0, ...rows.map((r) => r.longest_outage_s)),
      checks: rows.reduce((n, r) => n + r.checks, 0),
    },
    created: now,
  };
}

/** Checks recorded, or a heartbeat's runs among the signals kept. */
async function countOf(deps: Deps, s: Service, from: number, to: number) {
  if (s.kind !== "webhook") {
    return { checks: await countChecks(deps.kv, s.account, s.id, from, to), checks_partial: false };
  }
  const events = await listEvents(deps.kv, s.account, s.id);
  const runs = events.filter((e) => e.kind === "success" && e.at >= from && e.at < to).length;
  const oldest = events.length ? events[events.length - 1].at : null;
  return { checks: runs, checks_partial: oldest !== null && oldest > from && events.length >= 100 };
}

/** An outage's words: its duration and what explains it. */
export function outageWords(o: Outage): string {
  return o.explained === "dependency"
    ? "unreachable: a service it depends on was down"
    : o.explained === "maintenance"
    ? "in a maintenance window"
    : o.explained === "monitor down"
    ? "while this monitor was down"
    : "down";
}

/** The report as CSV (RFC 4180): a line per service, then its outages; times in UTC. */
export function reportCsv(r: Report): string {
  const q = (v: string | number | null) => {
    const t = v === null ? "" : String(v);
    // A cell a spreadsheet would read as a formula is quoted with a leading apostrophe.
    const safe = /^[=+\-@\t\r]/.test(t) ? `'${t}` : t;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  const lines = [
    [
      "service",
      "kind",
      "group",
      "from",
      "to",
      "uptime_percent",
      "up_s",
      "down_s",
      "unreachable_s",
      "maintenance_s",
      "monitor_down_s",
      "no_data_s",
      "outages",
      "longest_outage_s",
      "checks",
    ].join(","),
  ];
  for (const x of r.rows) {
    lines.push([
      q(x.name),
      q(x.kind),
      q(x.group),
      iso(r.from),
      iso(r.to),
      x.uptime === null ? "" : (Math.floor(x.uptime * 1_000_000) / 10_000).toFixed(4),
      x.up_s,
      x.down_s,
      x.unreachable_s,
      x.maintenance_s,
      x.monitor_down_s,
      x.no_data_s,
      x.outages.length,
      x.longest_outage_s,
      x.checks,
    ].join(","));
  }
  lines.push("");
  lines.push("service,outage_from,outage_to,duration_s,down_s,explained");
  for (const x of r.rows) {
    for (const o of x.outages) {
      lines.push([
        q(x.name),
        iso(o.from),
        o.to === null ? "" : iso(o.to),
        o.duration_s,
        o.down_s,
        q(o.explained ?? ""),
      ].join(","));
    }
  }
  return lines.join("\r\n") + "\r\n";
}

/** Whether the account asked for the monthly report by mail. */
export async function reportMailWanted(kv: Deno.Kv, account: number): Promise<boolean> {
  return (await kv.get(mailKey(account))).value !== null;
}

/** Turns the monthly mail on or off. Turned on, the first comes for the month now ending. */
export async function setReportMail(deps: Deps, account: number, on: boolean): Promise<boolean> {
  const now = deps.clock.now();
  await transact(async () => {
    const entry = await deps.kv.get<{ since: number; last?: string }>(mailKey(account));
    if (on === (entry.value !== null)) return { op: null, result: null };
    const op = atomic(deps.kv).check(entry);
    if (on) op.set(mailKey(account), { since: now, last: previousMonth(now) });
    else op.delete(mailKey(account));
    return { op, result: null };
  });
  return on;
}

/** Removes the account's request (erasure). */
export async function eraseReportMail(kv: Deno.Kv, account: number): Promise<void> {
  await commit(atomic(kv).delete(mailKey(account)));
}

/**
 * The daily job's part: each account that asked gets last month's report once, on the first
 * day the job runs in a new month. The mark and the mail are one atomic.
 */
export async function mailMonthlyReports(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const month = previousMonth(now);
  let sent = 0;
  for await (
    const e of deps.kv.list<{ since: number; last?: string }>({ prefix: ["report_mail"] })
  ) {
    if (e.value.last === month) continue;
    const account = e.key[1] as number;
    const acc = (await getAccount(deps.kv, account)).value;
    if (!acc) continue;
    const report = await uptimeReport(deps, account, { scope: { kind: "account" }, month });
    const link = `${deps.config.baseUrl}/me/reports?month=${month}`;
    const op = atomic(deps.kv).check(e).set(e.key, { ...e.value, last: month });
    enqueueMail(op, { ...monthlyReportMail(report, link), to: acc.email }, now);
    if ((await commit(op)).ok) sent++;
  }
  return sent;
}
