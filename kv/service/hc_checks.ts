import { sha1 } from "@noble/hashes/legacy.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { Deps } from "../../lib/deps.ts";
import { DomainError, forbidden, invalid, notFound } from "../../lib/errors.ts";
import { withDurations } from "../../lib/runs.ts";
import { cronError, validTimeZone } from "../../lib/schedule.ts";
import { hcSlug } from "../../lib/text.ts";
import type { Account } from "../accounts/accounts.ts";
import { listChannels } from "../alerts/channels.ts";
import { listEvents } from "./heartbeats.ts";
import {
  beatLimits,
  deleteService,
  getBeat,
  judgeBeat,
  listServices,
  openRun,
  periodMs,
  runGrace,
  type Service,
  serviceByUuid,
} from "./commands.ts";
import { addService, editService, type ServiceChange } from "./rules.ts";
import { serviceHistory } from "./windows.ts";
import { badgeOwner, badgeSignature, checkSignature, projectBadge } from "./badges.ts";
import type { Pulse } from "./state.ts";

/**
 * Healthchecks' Management API (v1, v2, v3) read over the watched services: its checks are
 * this service's heartbeats (kind `webhook`), created, changed, paused and deleted through
 * the same domain functions as the native API (kv/service/rules.ts, kv/service/commands.ts). Here
 * are the mapping of its fields to ours and back (docs/api.md, "Healthchecks' Management
 * API") and its rules (`unique` upsert, channels by id or name). Holds no KV keys.
 */

export type HcVersion = 1 | 2 | 3;

/** Who calls: the key's account, whether the key is read-only, the API version of the path. */
export interface HcCaller {
  account: Account;
  readonly: boolean;
  v: HcVersion;
}

/** A create or update request as Healthchecks' `Spec` reads it (http/hc_inputs.ts). */
export interface HcSpec {
  name?: string;
  slug?: string;
  tags?: string;
  desc?: string;
  timeout?: number;
  grace?: number;
  schedule?: string;
  tz?: string;
  manual_resume?: boolean;
  methods?: "" | "POST";
  channels?: string;
  unique?: ("name" | "slug" | "tags" | "timeout" | "grace")[];
}

/** Healthchecks' defaults for a new check: a one-day period and a one-hour grace. */
const DEFAULT_TIMEOUT = 86400;
const DEFAULT_GRACE = 3600;

/** A Healthchecks error of a request's JSON (400, `json validation error: ...`). */
const badSpec = (what: string): never => invalid(`json validation error: ${what}`);

/** Healthchecks' time form: ISO 8601 in UTC, seconds, `+00:00`. */
const hcTime = (ms: number) => new Date(ms).toISOString().slice(0, 19) + "+00:00";

/** Healthchecks' ping `date`: Python's isoformat, with microseconds unless they are 0. */
const pingDate = (ms: number) =>
  ms % 1000 === 0 ? hcTime(ms) : new Date(ms).toISOString().slice(0, 23) + "000+00:00";

/** `unique_key`: SHA-1 of the first 16 hex digits of the uuid, as Healthchecks derives it. */
export function uniqueKey(uuid: string): string {
  const half = uuid.replaceAll("-", "").slice(0, 16);
  return bytesToHex(sha1(new TextEncoder().encode(half)));
}

/** The name Healthchecks shows: a check made without one is stored under its uuid. */
const hcName = (s: Service) => (s.name === s.code ? "" : s.name);

/** Tags as Healthchecks writes them: one string, space-separated. */
const hcTags = (s: Service) => (s.tags ?? []).join(" ");

/** Tags of a Healthchecks `tags` string. */
const tagList = (tags: string) => tags.split(" ").map((t) => t.trim()).filter((t) => t !== "");

/** The grace in seconds: the schedule's, or the interval's (one interval unless set). */
const graceSeconds = (s: Service) => Math.round(runGrace(s));

const isHeartbeat = (s: Service) => s.kind === "webhook" && !!s.code;

/** Healthchecks' status from our verdict: new, started (v1), up, grace, down, paused. */
function hcStatus(s: Service, pulse: Pulse | null, now: number, v: HcVersion) {
  const verdict = judgeBeat(pulse, s, now);
  if (verdict.paused) return { status: "paused", verdict, run: null };
  const run = openRun(verdict.pulse);
  const overdue = run && now >= run.at + runGrace(s) * 1000;
  if (overdue || verdict.state === "off") return { status: "down", verdict, run };
  if (run && v === 1) return { status: "started", verdict, run };
  // A run under way before any success: still new there, as the state here waits for one;
  // so is a resumed check before its next ping (the judged beat is then the resume itself).
  const pinged = !!pulse?.beat && pulse.beat.at >= (s.resumed ?? 0);
  const fresh = verdict.state === "wait" || (verdict.state === "ok" && !pinged);
  const status = fresh ? "new" : verdict.state === "warn" ? "grace" : "up";
  return { status, verdict, run };
}

type Events = Awaited<ReturnType<typeof listEvents>>;

/** A check as Healthchecks' `Check.to_dict` answers it, for a read-write or read-only key. */
function checkDict(
  deps: Deps,
  s: Service,
  pulse: Pulse | null,
  events: Events,
  caller: Pick<HcCaller, "readonly" | "v">,
) {
  const now = deps.clock.now();
  const base = deps.config.baseUrl;
  const { status, verdict, run } = hcStatus(s, pulse, now, caller.v);
  const judged = verdict.pulse;
  const resumed = s.resumed ?? 0;
  const since = (x: { at: number } | null | undefined) => (x && x.at >= resumed ? x.at : 0);
  const lastPing = Math.max(since(pulse?.beat), since(pulse?.failed));
  // Healthchecks' grace start: the next expected ping while up, or the start of a run.
  let next: number | null = null;
  if ((status === "up" || status === "grace" || status === "started") && judged?.beat) {
    next = beatLimits(s, judged.beat.at)?.warn ?? null;
  }
  if (run && status !== "down") next = next === null ? run.at : Math.min(next, run.at);
  const lastEnd = events.find((e) => e.kind === "success" || e.kind === "fail");
  const timed = lastEnd ? withDurations(events).find((e) => e.ref === lastEnd.ref) : null;
  // As there, a run's duration under a second is 0, and a run without one has none.
  const duration = timed?.duration_ms ? Math.floor(timed.duration_ms / 1000) : null;
  const uuid = s.code!;
  const dict: Record<string, unknown> = {
    name: hcName(s),
    slug: s.slug ?? "",
    tags: hcTags(s),
    desc: s.what,
    grace: graceSeconds(s),
    n_pings: events.length,
    status,
    started: run !== null && status !== "paused",
    last_ping: lastPing ? hcTime(lastPing) : null,
    next_ping: next === null ? null : hcTime(next),
    manual_resume: s.manual_resume ?? true,
    methods: s.methods ?? "",
    subject: "",
    subject_fail: "",
    start_kw: "",
    success_kw: "",
    failure_kw: "",
    filter_subject: false,
    filter_body: false,
    filter_http_body: false,
    filter_default_fail: false,
    badge_url: s.badge ? `${base}/api/badges/${s.badge}.svg` : "",
  };
  if (duration !== null) dict.last_duration = duration;
  if (caller.readonly) {
    dict.unique_key = uniqueKey(uuid);
  } else {
    const update = `${base}/api/v${caller.v}/checks/${uuid}`;
    Object.assign(dict, {
      uuid,
      ping_url: `${base}/ping/${uuid}`,
      update_url: update,
      pause_url: `${update}/pause`,
      resume_url: `${update}/resume`,
      channels: (s.channels ?? []).map(String).sort().join(","),
    });
  }
  if (s.schedule) {
    dict.schedule = s.schedule.cron;
    dict.tz = s.schedule.tz;
  } else {
    dict.timeout = Math.round(periodMs(s) / 1000);
  }
  return dict;
}

/** The account's heartbeats with their signals and kept events. */
async function heartbeats(deps: Deps, account: number) {
  const out = [];
  for (const { service, beat } of await listServices(deps.kv, account)) {
    if (!isHeartbeat(service)) continue;
    out.push({ service, beat, events: await listEvents(deps.kv, account, service.id) });
  }
  return out;
}

/** `GET /api/v<n>/checks/`: every check, or those with every tag asked (and the slug). */
export async function listChecks(
  deps: Deps,
  caller: HcCaller,
  filter: { tags: string[]; slug?: string },
) {
  const wanted = new Set(filter.tags);
  const out = [];
  for (const { service, beat, events } of await heartbeats(deps, caller.account.id)) {
    const tags = new Set(service.tags ?? []);
    if (![...wanted].every((t) => tags.has(t))) continue;
    if (filter.slug && (service.slug ?? "") !== filter.slug) continue;
    out.push(checkDict(deps, service, beat, events, caller));
  }
  return out;
}

/**
 * The account's check named by a uuid or (`byKey`) a unique_key; `notFound` for none, for
 * another account's and for a checked kind.
 */
export async function findCheck(
  deps: Deps,
  account: number,
  id: { uuid: string } | { uniqueKey: string },
): Promise<Service> {
  if ("uuid" in id) {
    const s = await serviceByUuid(deps.kv, account, id.uuid);
    if (s && isHeartbeat(s)) return s;
    notFound("not found");
  }
  for (const { service } of await listServices(deps.kv, account)) {
    if (isHeartbeat(service) && uniqueKey(service.code!) === id.uniqueKey) return service;
  }
  notFound("not found");
}

/** One check as the caller sees it. */
export async function checkOf(deps: Deps, caller: HcCaller, s: Service) {
  const beat = await getBeat(deps.kv, s);
  const events = await listEvents(deps.kv, s.account, s.id);
  return checkDict(deps, s, beat, events, caller);
}

/** A cron or OnCalendar schedule and its zone checked as Healthchecks checks them. */
function checkSchedule(schedule: string, tz: string): void {
  if (!validTimeZone(tz)) badSpec("tz is not a valid timezone");
  if (cronError(schedule, tz, true)) {
    badSpec("schedule is not a valid cron or OnCalendar expression");
  }
}

/** `channels`: "*" all, "" none, else ids or names separated by commas. */
async function channelIds(deps: Deps, account: number, spec: string): Promise<number[]> {
  const all = await listChannels(deps.kv, account);
  if (spec === "*") return all.map((c) => c.id);
  if (spec === "") return [];
  const ids = new Set<number>();
  for (const part of spec.split(",")) {
    if (part === "") invalid("empty channel identifier");
    const matches = all.filter((c) => String(c.id) === part || c.name === part);
    if (matches.length === 0) invalid(`invalid channel identifier: ${part}`);
    if (matches.length > 1) invalid(`non-unique channel identifier: ${part}`);
    ids.add(matches[0].id);
  }
  return [...ids];
}

/** A name as this service keeps it: one line, no control characters (they reach mail). */
function checkName(name: string): void {
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) {
    badSpec("name has control characters");
  }
}

/**
 * The part of a change that timing fields make. A schedule wins over a timeout (as there);
 * a timeout, or a new check without a schedule, is the fixed interval with its grace; else a
 * grace or zone changes the current kind's.
 */
function timingChange(spec: HcSpec, cur: Service | null): Partial<ServiceChange> {
  const graceNow = () => spec.grace ?? (cur ? graceSeconds(cur) : DEFAULT_GRACE);
  if (spec.schedule !== undefined) {
    const tz = spec.tz ?? cur?.schedule?.tz ?? "UTC";
    checkSchedule(spec.schedule, tz);
    return { schedule: spec.schedule, tz, grace_seconds: graceNow() };
  }
  if (spec.timeout !== undefined || !cur) {
    return {
      ...(cur?.schedule ? { schedule: null } : {}),
      period_seconds: spec.timeout ?? (cur ? Math.round(periodMs(cur) / 1000) : DEFAULT_TIMEOUT),
      grace_seconds: graceNow(),
    };
  }
  if (cur.schedule) {
    const out: Partial<ServiceChange> = {};
    if (spec.tz !== undefined) out.tz = spec.tz;
    if (spec.grace !== undefined) out.grace_seconds = spec.grace;
    return out;
  }
  return spec.grace !== undefined ? { grace_seconds: spec.grace } : {};
}

/** The first check matching every field of `unique`, or null (Healthchecks' `_lookup`). */
async function lookup(deps: Deps, account: number, spec: HcSpec): Promise<Service | null> {
  const unique = spec.unique ?? [];
  if (unique.length === 0 || unique.some((f) => spec[f] === undefined)) return null;
  for (const { service: s } of await listServices(deps.kv, account)) {
    if (!isHeartbeat(s)) continue;
    if (unique.includes("name") && hcName(s) !== spec.name) continue;
    if (unique.includes("slug") && (s.slug ?? "") !== spec.slug) continue;
    if (unique.includes("tags") && hcTags(s) !== tagList(spec.tags!).join(" ")) continue;
    if (unique.includes("timeout") && (s.schedule || periodMs(s) !== spec.timeout! * 1000)) {
      continue;
    }
    if (unique.includes("grace") && graceSeconds(s) !== spec.grace) continue;
    return s;
  }
  return null;
}

/** What a spec changes of a check, as the native change (kv/service/rules.ts) takes it. */
async function changeOf(
  deps: Deps,
  caller: HcCaller,
  spec: HcSpec,
  cur: Service | null,
): Promise<ServiceChange> {
  const account = caller.account.id;
  const change: ServiceChange = { ...timingChange(spec, cur) };
  if (spec.name !== undefined) checkName(spec.name);
  if (spec.name !== undefined && spec.name !== "") change.name = spec.name;
  if (spec.name === "" && cur) change.name = cur.code!;
  // v1 and v2 make the slug from the name; v3 takes it as given ("" when not given, as there).
  if (spec.name !== undefined && caller.v < 3) change.slug = hcSlug(spec.name);
  if (spec.slug !== undefined) change.slug = spec.slug;
  if (!cur && change.slug === undefined) change.slug = "";
  if (spec.methods !== undefined) change.methods = spec.methods;
  if (spec.desc !== undefined) {
    if (spec.desc.length > 160) badSpec("desc is too long (at most 160 characters here)");
    change.what = spec.desc;
  }
  if (spec.tags !== undefined) change.tags = tagList(spec.tags);
  if (spec.manual_resume !== undefined) change.manual_resume = spec.manual_resume;
  if (spec.channels !== undefined) change.channels = await channelIds(deps, account, spec.channels);
  return change;
}

/** A domain refusal of a change said as Healthchecks' validation errors say it. */
async function asSpecError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError && err.kind === "invalid" && err.extra.field) {
      badSpec(err.message);
    }
    throw err;
  }
}

/**
 * `POST /api/v<n>/checks/`: updates the check `unique` finds (200) or creates one (201). A
 * new check past the account's limit is refused with 403, as Healthchecks refuses it.
 */
export async function createCheck(
  deps: Deps,
  caller: HcCaller,
  spec: HcSpec,
): Promise<{ created: boolean; check: Record<string, unknown> }> {
  const me = caller.account;
  const found = await lookup(deps, me.id, spec);
  if (found) return { created: false, check: await updateCheck(deps, caller, found, spec) };
  const change = await changeOf(deps, caller, spec, null);
  const uuid = crypto.randomUUID();
  const added = await asSpecError(async () => {
    try {
      return await addService(deps, me, {
        name: change.name ?? uuid,
        check: "webhook:",
        what: change.what ?? "",
        group: "Jobs",
        interval: 60,
        alerts: true,
        threshold: 1,
        schedule: change.schedule ?? null,
        tz: change.schedule ? change.tz : undefined,
        ...(change.period_seconds !== undefined ? { period_seconds: change.period_seconds } : {}),
        grace_seconds: change.grace_seconds,
        channels: change.channels ?? [],
        tags: change.tags ?? [],
        manual_resume: change.manual_resume ?? false,
        code: uuid,
        slug: change.slug,
        ...(change.methods ? { methods: change.methods } : {}),
      });
    } catch (err) {
      if (err instanceof DomainError && err.kind === "conflict") {
        forbidden("the account has reached its limit of checks");
      }
      throw err;
    }
  });
  const s = await serviceByUuid(deps.kv, me.id, added.item.uuid!);
  if (!s) notFound("not found");
  return { created: true, check: await checkOf(deps, caller, s) };
}

/** `POST /api/v<n>/checks/<uuid>`: changes what the spec gives, the rest stays. */
export async function updateCheck(
  deps: Deps,
  caller: HcCaller,
  s: Service,
  spec: HcSpec,
): Promise<Record<string, unknown>> {
  const change = await changeOf(deps, caller, spec, s);
  await asSpecError(() => editService(deps, caller.account, s.id, change));
  const now = await findCheck(deps, caller.account.id, { uuid: s.code! });
  return await checkOf(deps, caller, now);
}

/** `POST .../pause`: paused (already paused: as it is). */
export async function pauseCheck(deps: Deps, caller: HcCaller, s: Service) {
  if (s.paused_at == null) await editService(deps, caller.account, s.id, { paused: true });
  return await checkOf(deps, caller, await findCheck(deps, caller.account.id, { uuid: s.code! }));
}

/** `POST .../resume`: 409 when not paused, else resumed afresh ("new" until its next ping). */
export async function resumeCheck(deps: Deps, caller: HcCaller, s: Service) {
  if (s.paused_at == null) return null;
  await editService(deps, caller.account, s.id, { paused: false });
  return await checkOf(deps, caller, await findCheck(deps, caller.account.id, { uuid: s.code! }));
}

/** `DELETE /api/v<n>/checks/<uuid>`: the check as it was, then removed. */
export async function deleteCheck(deps: Deps, caller: HcCaller, s: Service) {
  const dict = await checkOf(deps, caller, s);
  if (!await deleteService(deps, caller.account.id, s.id)) notFound("not found");
  return dict;
}

/** Kept events as Healthchecks' pings, newest first, numbered oldest first from 1. */
export async function listPings(deps: Deps, caller: HcCaller, s: Service) {
  const events = withDurations(await listEvents(deps.kv, s.account, s.id));
  const base = `${deps.config.baseUrl}/api/v${caller.v}/checks/${s.code}/pings`;
  const scheme = new URL(deps.config.baseUrl).protocol.replace(":", "");
  return events.map((e, i) => {
    const n = events.length - i;
    const ping: Record<string, unknown> = {
      type: e.kind,
      date: pingDate(e.at),
      n,
      scheme,
      remote_addr: null,
      method: e.method,
      ua: "",
      rid: e.rid,
      body_url: e.body ? `${base}/${n}/body` : null,
    };
    if ((e.kind === "success" || e.kind === "fail") && e.duration_ms !== null) {
      ping.duration = Math.round(e.duration_ms / 10) / 100;
    }
    return ping;
  });
}

/** A kept ping's body by its number; `notFound` when there is none or it is empty. */
export async function pingBody(deps: Deps, s: Service, n: number): Promise<string> {
  const events = await listEvents(deps.kv, s.account, s.id);
  const e = events[events.length - n];
  if (n < 1 || !e || !e.body) notFound("not found");
  return e.body;
}

/**
 * State changes as Healthchecks' flips (up 1, down or paused 0), newest first. A resumed check
 * is `new` there until its next success (hcStatus), and `new` reads 0: here the look after the
 * last resume counts it up at once, so that change reads 0 and the up flip is the first success
 * since the resume (among the kept events).
 */
export async function listFlips(
  deps: Deps,
  s: Service,
  filter: { start?: number; end?: number; seconds?: number },
) {
  const now = deps.clock.now();
  const [h, events] = await Promise.all([
    serviceHistory(deps.kv, s, now),
    s.resumed === undefined ? [] : listEvents(deps.kv, s.account, s.id),
  ]);
  const resumed = s.resumed ?? Infinity;
  const successes = events.filter((e) => e.kind === "success" && e.at >= resumed);
  const firstPing = successes.length > 0 ? successes[successes.length - 1].at : null;
  const flips: { at: number; up: number }[] = [];
  let last: number | null = null;
  const add = (at: number, up: number) => {
    if (up === last) return;
    last = up;
    flips.push({ at, up });
  };
  for (const [i, c] of h.changes.entries()) {
    if (c.state === "warn" && last === 1) continue;
    const up = c.state === "ok" || c.state === "warn" ? 1 : 0;
    if (up === 1 && c.at >= resumed && (firstPing === null || firstPing > c.at)) {
      add(c.at, 0);
      if (firstPing !== null && firstPing < (h.changes[i + 1]?.at ?? Infinity)) add(firstPing, 1);
    } else add(c.at, up);
  }
  return flips.filter((f) => {
    if (filter.start !== undefined && f.at < filter.start * 1000) return false;
    if (filter.end !== undefined && f.at >= filter.end * 1000) return false;
    if (filter.seconds !== undefined && f.at < now - filter.seconds * 1000) return false;
    return true;
  }).reverse().map((f) => ({ timestamp: hcTime(f.at), up: f.up }));
}

/**
 * Each channel kind here as Healthchecks names its integration (its `TRANSPORTS` keys):
 * PagerDuty is `pd`, Pushover `po`, Teams `msteamsw`, Google Chat `googlechat`, Rocket.Chat
 * `rocketchat`; the others by the same name.
 */
export const HC_CHANNEL_KINDS: Record<string, string> = {
  slack: "slack",
  discord: "discord",
  telegram: "telegram",
  teams: "msteamsw",
  google_chat: "googlechat",
  mattermost: "mattermost",
  rocket_chat: "rocketchat",
  zulip: "zulip",
  matrix: "matrix",
  ntfy: "ntfy",
  gotify: "gotify",
  pushover: "po",
  pagerduty: "pd",
  opsgenie: "opsgenie",
  webhook: "webhook",
};

/** `GET /api/v<n>/channels/`: the account's channels, each kind in Healthchecks' name. */
export async function listHcChannels(deps: Deps, account: number) {
  return (await listChannels(deps.kv, account)).map((c) => ({
    id: String(c.id),
    name: c.name,
    kind: HC_CHANNEL_KINDS[c.kind ?? "webhook"] ?? c.kind ?? "webhook",
  }));
}

/** Healthchecks' badge formats: an SVG, its JSON, and shields.io's endpoint JSON. */
export const BADGE_FORMATS = ["svg", "json", "shields"] as const;
type BadgeFormat = typeof BADGE_FORMATS[number];

/**
 * `GET /api/v<n>/badges/`: for `*` and every tag of the account's checks, the six addresses
 * Healthchecks lists (svg, json, shields; `3` the three-state ones, which show late).
 */
export async function listBadges(deps: Deps, account: number) {
  const { key, secret } = await projectBadge(deps.kv, account);
  const tags = new Set(["*"]);
  for (const { service } of await listServices(deps.kv, account)) {
    if (isHeartbeat(service)) { for (const t of service.tags ?? []) tags.add(t); }
  }
  const url = (tag: string, fmt: BadgeFormat, withLate: boolean) => {
    const sig = badgeSignature(secret, tag, withLate);
    const at = `${deps.config.baseUrl}/api/badges/${key}/${sig}`;
    return tag === "*" ? `${at}.${fmt}` : `${at}/${encodeURIComponent(tag)}.${fmt}`;
  };
  const badges: Record<string, Record<string, string>> = {};
  for (const tag of [...tags].sort()) {
    badges[tag] = {
      svg: url(tag, "svg", false),
      svg3: url(tag, "svg", true),
      json: url(tag, "json", false),
      json3: url(tag, "json", true),
      shields: url(tag, "shields", false),
      shields3: url(tag, "shields", true),
    };
  }
  return badges;
}

/**
 * A project badge's state, as Healthchecks' `badge` view counts it: of the checks with the tag
 * (every check for `*`), any down is down, else any late is late (three-state badges only),
 * else up; with the totals. Null: no such key, or a signature that is not the tag's.
 */
export async function projectBadgeState(deps: Deps, key: string, sig: string, tag: string) {
  const owner = await badgeOwner(deps.kv, key);
  if (!owner) return null;
  const withLate = checkSignature(owner.secret, tag, sig);
  if (withLate === null) return null;
  const now = deps.clock.now();
  let status: "up" | "late" | "down" = "up";
  let total = 0, grace = 0, down = 0;
  for (const { service, beat } of await listServices(deps.kv, owner.account)) {
    if (!isHeartbeat(service)) continue;
    if (tag !== "*" && !(service.tags ?? []).includes(tag)) continue;
    total++;
    const st = hcStatus(service, beat, now, 3).status;
    if (st === "down") {
      down++;
      status = "down";
    } else if (st === "grace") {
      grace++;
      if (status === "up" && withLate) status = "late";
    }
  }
  return { label: tag === "*" ? "Mine" : tag, status, total, grace, down };
}
