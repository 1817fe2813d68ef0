import type { Account } from "../accounts/accounts.ts";
import { isOwner } from "../accounts/accounts.ts";
import { channelsOf, defaultChannels, listChannels } from "../alerts/channels.ts";
import { accountOfPingKey } from "./ping_keys.ts";
import { countUse, RULES, spendUse } from "../store/rate_limit.ts";
import {
  countServices,
  createService,
  getBeat,
  getService,
  graceMinutes,
  hcHeartbeat,
  listServiceEntries,
  listServices,
  MAX_SERVICES,
  patchService,
  periodFields,
  runGrace,
  type Service,
  type ServicePatch,
  type ServiceView,
  serviceView,
  spanText,
} from "./commands.ts";
import { recordResult } from "./looks.ts";
import { checkDependencies } from "./dependencies.ts";
import { listWindows } from "./maintenance.ts";
import { formTokenEntry, spent } from "../store/form_tokens.ts";
import type { SentForm } from "./commands.ts";
import { runCheck } from "../../lib/checks/mod.ts";
import { type HttpOptions, optionProblems } from "../../lib/checks/http_options.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, DomainError, invalid, notFound } from "../../lib/errors.ts";
import { cronError, type Schedule, validTimeZone } from "../../lib/schedule.ts";
import { isCronLine } from "../../lib/oncalendar.ts";
import { parseCheck, resolveTarget, type Target, TargetError } from "../../lib/targets.ts";

/**
 * The rules of adding, changing and checking a watched service, as POST/PATCH
 * /api/me/services and the services pages both apply them: the target allowed for this
 * account, the schedule of a heartbeat, the account's own channels, the service limit and the
 * manual-check limit. Holds no KV keys: kv/service/commands.ts stores the changes, through the
 * aggregate kv/service/store.ts.
 */

/** A new service as the API's `NewService` schema gives it (http/services_inputs.ts). */
interface NewServiceInput {
  name: string;
  check: string;
  what: string;
  group: string;
  place?: string | null;
  interval: number;
  alerts: boolean;
  threshold: number;
  schedule?: string | null;
  /** Only with a schedule (default UTC). */
  tz?: string;
  /** Only with a schedule (default 60). */
  grace?: number;
  /** Absent: the account's channels ticked "use for new services". */
  channels?: number[];
  /** Services of the account it depends on (kv/service/dependencies.ts). */
  depends_on?: number[];
  remind?: number | null;
  /** Heartbeats: seconds a run (start to success) takes at least; null: no minimum. */
  min_duration?: number | null;
  /** Heartbeats: the slug of its Healthchecks address (absent: made from the name). */
  slug?: string;
  /** Heartbeats: "POST" takes POST pings only. */
  methods?: "" | "POST";
  /** Free tags (one word each). */
  tags?: string[];
  /** Heartbeats on the interval: minutes past it before off (Healthchecks' grace). */
  interval_grace?: number | null;
  /** Heartbeats on the interval: the exact period in seconds (`interval` then follows it). */
  period_seconds?: number;
  /** Heartbeats: the exact grace in seconds (the schedule's or the interval's). */
  grace_seconds?: number;
  /** Heartbeats: stays paused when pinged (true), or its next end resumes it (false). */
  manual_resume?: boolean;
  /** Its Healthchecks id, when the caller chose it (else a new one). */
  code?: string;
  /** url checks: the request's options and the answer's assertions. */
  http?: HttpOptions;
}

/** A change as the API's `ServicePatch` schema gives it; kind and target never change. */
export interface ServiceChange extends Omit<ServicePatch, "schedule" | "period" | "grace_s"> {
  schedule?: string | null;
  tz?: string;
  grace?: number;
  period_seconds?: number;
  grace_seconds?: number;
  check?: unknown;
  kind?: unknown;
  target?: unknown;
}

/** The parsed check, with its address allowed for this account (`invalid` naming `check`). */
export async function validTarget(deps: Deps, account: Account, check: string): Promise<Target> {
  let target: Target;
  try {
    target = parseCheck(check);
  } catch (err) {
    if (err instanceof TargetError) invalid(`check: ${err.message}`, "check");
    throw err;
  }
  if (target.kind !== "webhook") {
    const r = await resolveTarget(deps.resolver, target.host, isOwner(account));
    if (!r.ok) invalid(`check: ${r.error}`, "check");
  }
  return target;
}

/**
 * What the rules below refuse in a service's fields that needs no lookup (the check's form, the
 * schedule's time zone and cron line), every field at once, by field: the forms show all of
 * them together instead of one a submit. The same words as the refusals, less the check's kind
 * before them (the forms chose it already).
 */
export function fieldProblems(
  input: { check?: unknown; schedule?: unknown; tz?: unknown; http?: unknown },
): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof input.http === "object" && input.http !== null) {
    for (const [k, why] of Object.entries(optionProblems(input.http as HttpOptions))) {
      out[`http.${k}`] = why;
    }
  }
  if (typeof input.check === "string") {
    try {
      parseCheck(input.check);
    } catch (err) {
      if (!(err instanceof TargetError)) throw err;
      out.check = err.message.replace(/^(url|mcp): /, "");
    }
  }
  if (typeof input.schedule === "string" && input.schedule.trim()) {
    const tz = typeof input.tz === "string" ? input.tz : "UTC";
    const knownZone = validTimeZone(tz);
    if (!knownZone) out.tz = "not a known IANA time zone";
    const why = cronError(input.schedule, knownZone ? tz : "UTC", true);
    if (why) out.schedule = why;
  }
  return out;
}

/** A valid schedule for a service of this kind, or `invalid` naming the field. */
export function validSchedule(kind: string, cron: string, tz: string, grace: number): Schedule {
  if (kind !== "webhook") {
    invalid("schedule: only a heartbeat (webhook:) has a schedule", "schedule");
  }
  if (!validTimeZone(tz)) invalid("tz: not a known IANA time zone", "tz");
  const why = cronError(cron, tz, true);
  if (why) invalid(`schedule: ${why}`, "schedule");
  // A cron line's fields one space apart; OnCalendar's lines each trimmed, kept apart.
  const kept = isCronLine(cron)
    ? cron.trim().replace(/\s+/g, " ")
    : cron.trim().split("\n").map((l) => l.trim().replace(/\s+/g, " ")).join("\n");
  return { cron: kept, tz, grace };
}

/** `tz` or `grace` given without a schedule: `invalid` naming the first of them. */
function scheduleParts(tz: string | undefined, grace: number | undefined): void {
  if (tz !== undefined) {
    invalid("tz: a time zone goes with a schedule; without one the interval applies", "tz");
  }
  if (grace !== undefined) {
    invalid("grace: a grace time goes with a schedule; without one the interval applies", "grace");
  }
}

/** The ids, each one of the account's channels (`invalid` naming `channels` otherwise). */
async function validChannels(deps: Deps, account: number, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  const found = await channelsOf(deps.kv, account, unique);
  if (found.length !== unique.length) {
    invalid("channels: not one of your channels (GET /api/me/channels)", "channels");
  }
  return unique;
}

/**
 * A heartbeat's run options checked against its kind and timing: a minimum duration only for
 * a heartbeat, and shorter than the time a run may take (its grace), else every run would
 * fail. `invalid` naming the field.
 */
function runOptions(
  s: Pick<
    Service,
    "kind" | "interval" | "schedule" | "interval_grace" | "period" | "grace_s" | "min_duration"
  >,
): void {
  const hb = s.kind === "webhook";
  if (s.min_duration != null && !hb) {
    invalid("min_duration: only a heartbeat's runs have a duration", "min_duration");
  }
  if (s.min_duration != null && s.min_duration >= runGrace(s)) {
    invalid(
      `min_duration: must be shorter than the ${spanText(runGrace(s) * 1000)} a run may take ` +
        "(the schedule's grace, or the interval)",
      "min_duration",
    );
  }
}

/**
 * The record's exact timing fields of a heartbeat's `period_seconds` and `grace_seconds`: the
 * period with the interval of the list below it, the grace in seconds with its minutes for the
 * interval (a schedule takes the minutes itself). `invalid` naming the field for a checked
 * kind, or a period beside a schedule.
 */
function exactTiming(
  kind: string,
  scheduled: boolean,
  input: { period_seconds?: number; grace_seconds?: number },
): { interval?: number; period?: number | null; grace_s?: number; interval_grace?: number } {
  const out: ReturnType<typeof exactTiming> = {};
  for (const f of ["period_seconds", "grace_seconds"] as const) {
    if (input[f] !== undefined && kind !== "webhook") {
      invalid(`${f}: only a heartbeat has a period and a grace; a check runs every interval`, f);
    }
  }
  if (input.period_seconds !== undefined) {
    if (scheduled) {
      invalid(
        "period_seconds: a heartbeat on a schedule is due at its times, not after a period; " +
          "set schedule to null for a period",
        "period_seconds",
      );
    }
    Object.assign(out, periodFields(input.period_seconds));
  }
  if (input.grace_seconds !== undefined) {
    out.grace_s = input.grace_seconds;
    if (!scheduled) out.interval_grace = graceMinutes(input.grace_seconds);
  }
  return out;
}

/**
 * An address check's options, allowed for its kind and by the rules of lib/checks/http_options.ts
 * (`invalid` naming `http.<option>` with every problem's words); empty options are none.
 */
function validHttp(kind: string, http: HttpOptions): HttpOptions {
  if (kind !== "url") {
    invalid("http: only an address check (url:) has request options and assertions", "http");
  }
  const problems = optionProblems(http);
  const first = Object.entries(problems)[0];
  if (first) invalid(`http.${first[0]}: ${first[1]}`, `http.${first[0]}`);
  return http;
}

/** `slug` and `methods` belong to a heartbeat (`invalid` naming the field otherwise). */
function heartbeatOnly(kind: string, input: { slug?: string; methods?: string }): void {
  if (kind === "webhook") return;
  if (input.slug !== undefined) invalid("slug: only a heartbeat has a ping address", "slug");
  if (input.methods !== undefined) {
    invalid("methods: only a heartbeat is pinged", "methods");
  }
}

/**
 * Healthchecks' auto-provisioning (`/ping/<ping key>/<slug>?create=1`): a heartbeat named
 * and slugged `slug` in the account of the ping key, with Healthchecks' defaults (a period of
 * a day, every channel of the account), unless one has that slug already. Answers "created",
 * "exists" (the ping then goes to it), or "refused": no such key, or the account is at its
 * limit of services.
 */
export async function provisionCheck(
  deps: Deps,
  pingKeyHash: string,
  slug: string,
): Promise<"created" | "exists" | "refused"> {
  const account = await accountOfPingKey(deps.kv, pingKeyHash);
  if (account === null) return "refused";
  if (await countServices(deps.kv, account) >= MAX_SERVICES) return "refused";
  const channels = (await listChannels(deps.kv, account)).map((c) => c.id);
  try {
    const made = await createService(
      deps,
      account,
      { ...hcHeartbeat(slugName(slug), channels), slug },
      null,
      true,
    );
    return made ? "created" : "exists";
  } catch (err) {
    if (err instanceof DomainError && err.kind === "conflict") return "refused";
    throw err;
  }
}

/**
 * The name of a check `?create=1` makes: its slug, as Healthchecks names it, within a name's
 * 2 to 80 characters (a one-character slug is "check x").
 */
const slugName = (slug: string) => slug.length < 2 ? `check ${slug}` : slug.slice(0, 80);

/** Tags without repeats, in the order first given. */
export const uniqueTags = (tags: string[]) => [...new Set(tags)];

/** The address a heartbeat calls. */
export const hookUrl = (deps: Deps, key: string) => `${deps.config.baseUrl}/api/hooks/${key}`;

/**
 * Watches a new service for the account: checks the target and schedule, the channels (none
 * named: those ticked "use for new services"), the per-account
 * limit, runs the first check (a checked kind, within the manual-check limit) and stores it.
 * The hook address comes only here, once.
 */
export async function addService(
  deps: Deps,
  me: Account,
  input: NewServiceInput,
  form?: SentForm,
): Promise<{ item: ServiceView; hook_url: string | null }> {
  // The same page form sent again: refused before its check runs (and in the atomic, for real).
  if (form && spent(await formTokenEntry(deps.kv, me.id, form.token), deps.clock.now())) {
    conflict("this form was sent before: the service was added once", { repeated: true });
  }
  const target = await validTarget(deps, me, input.check);
  const chans = input.channels === undefined
    ? await defaultChannels(deps.kv, me.id)
    : await validChannels(deps, me.id, input.channels);
  const parents = input.depends_on?.length
    ? checkDependencies(await serviceNodes(deps, me.id), null, input.depends_on)
    : [];
  if (input.schedule == null) scheduleParts(input.tz, input.grace);
  const exact = exactTiming(target.kind, input.schedule != null, input);
  const sched = input.schedule != null
    ? validSchedule(
      target.kind,
      input.schedule,
      input.tz ?? "UTC",
      exact.grace_s ? graceMinutes(exact.grace_s) : input.grace ?? 60,
    )
    : null;
  const minDuration = input.min_duration ?? null;
  runOptions({
    ...input,
    ...exact,
    kind: target.kind,
    schedule: sched,
    min_duration: minDuration,
  });
  heartbeatOnly(target.kind, input);
  const http = input.http === undefined ? undefined : validHttp(target.kind, input.http);
  // Fail fast before a check runs; the atomic of createService enforces the limit for real.
  if (await countServices(deps.kv, me.id) >= MAX_SERVICES) {
    conflict(`at most ${MAX_SERVICES} services per account; remove one first`, {
      max: MAX_SERVICES,
    });
  }
  // The check at creation counts as a manual check: create-and-delete loops must not probe
  // a target more often than "check now" may. Past the limit the service is still created
  // and the runner checks it at the next minute.
  const first = target.kind === "webhook" ||
      !(await countUse(deps.kv, RULES.manualCheck, me.id, deps.clock.now())).ok
    ? null
    : await runCheck(deps, target.check, isOwner(me), undefined, http);
  const { service, key } = (await createService(
    deps,
    me.id,
    {
      name: input.name,
      what: input.what,
      group: input.group,
      place: input.place ?? null,
      interval: exact.interval ?? input.interval,
      alerts: input.alerts,
      kind: target.kind,
      check: target.check,
      hint: target.hint,
      threshold: input.threshold,
      remind: input.remind ?? null,
      schedule: sched,
      channels: chans,
      ...(parents.length ? { depends_on: parents } : {}),
      ...(target.kind === "webhook" ? { min_duration: minDuration } : {}),
      tags: uniqueTags(input.tags ?? []),
      ...(exact.interval_grace != null
        ? { interval_grace: exact.interval_grace }
        : input.interval_grace != null
        ? { interval_grace: input.interval_grace }
        : {}),
      ...(exact.period != null ? { period: exact.period } : {}),
      ...(exact.grace_s != null ? { grace_s: exact.grace_s } : {}),
      ...(input.manual_resume !== undefined ? { manual_resume: input.manual_resume } : {}),
      ...(input.code ? { code: input.code } : {}),
      ...(input.slug !== undefined ? { slug: input.slug } : {}),
      ...(input.methods === "POST" ? { methods: "POST" as const } : {}),
      ...(http && Object.keys(http).length ? { http } : {}),
    },
    first,
    false,
    form,
  ))!;
  const now = deps.clock.now();
  const item = serviceView(service, null, now, await listWindows(deps.kv, me.id));
  return { item, hook_url: key ? hookUrl(deps, key) : null };
}

/** Runs a checked service's check now, within the account's manual-check limit. */
export async function checkServiceNow(deps: Deps, me: Account, id: number): Promise<ServiceView> {
  const s = (await getService(deps.kv, me.id, id)).value;
  if (!s) notFound("no such service");
  if (s.kind === "webhook") {
    invalid("a heartbeat service is not checked: it is called at its hook address");
  }
  if (s.paused_at != null) conflict("the service is paused: resume it to check it");
  await spendUse(deps.kv, RULES.manualCheck, me.id, deps.clock.now());
  const result = await runCheck(deps, s.check, isOwner(me), undefined, s.http ?? undefined);
  const saved = await recordResult(deps, me.id, id, result, null);
  if (!saved) notFound("no such service");
  return serviceView(saved, null, deps.clock.now(), await listWindows(deps.kv, me.id));
}

/** The account's service entries, read to be checked in a change's atomic. */
const serviceEntriesOf = (deps: Deps, account: number) => listServiceEntries(deps.kv, account);

/** The account's services as the dependency rules read them. */
const serviceNodes = async (deps: Deps, account: number) =>
  (await listServices(deps.kv, account)).map((x) => x.service);

/** Changes a service: its channels must be the account's, a schedule only a heartbeat's. */
export async function editService(
  deps: Deps,
  me: Account,
  id: number,
  body: ServiceChange,
): Promise<ServiceView> {
  const {
    check: _c,
    kind: _k,
    target: _t,
    schedule,
    tz,
    grace,
    channels: chans,
    period_seconds,
    grace_seconds,
    ...rest
  } = body;
  const patch: ServicePatch = rest;
  // The services read for the cycle check are checked in the change's atomic: two changes
  // made at once cannot close a cycle between them.
  let guard: Deno.KvEntryMaybe<unknown>[] = [];
  if (patch.depends_on !== undefined) {
    const nodes = await serviceEntriesOf(deps, me.id);
    if (!nodes.some((e) => e.value.id === id)) notFound("no such service");
    patch.depends_on = checkDependencies(nodes.map((e) => e.value), id, patch.depends_on);
    guard = nodes;
  }
  if (patch.slug !== undefined || patch.methods !== undefined) {
    const cur = (await getService(deps.kv, me.id, id)).value;
    if (!cur) notFound("no such service");
    heartbeatOnly(cur.kind, patch);
  }
  if (patch.tags !== undefined) patch.tags = uniqueTags(patch.tags);
  if (patch.http !== undefined && patch.http !== null) {
    const cur = (await getService(deps.kv, me.id, id)).value;
    if (!cur) notFound("no such service");
    patch.http = validHttp(cur.kind, patch.http);
  }
  if (chans !== undefined) patch.channels = await validChannels(deps, me.id, chans);
  if (schedule !== undefined || tz !== undefined || grace !== undefined) {
    const cur = (await getService(deps.kv, me.id, id)).value;
    if (!cur) notFound("no such service");
    const cron = schedule === undefined ? cur.schedule?.cron ?? null : schedule;
    if (cron === null) {
      scheduleParts(tz, grace);
      patch.schedule = null;
    } else {
      patch.schedule = validSchedule(
        cur.kind,
        cron,
        tz ?? cur.schedule?.tz ?? "UTC",
        grace ?? cur.schedule?.grace ?? 60,
      );
    }
    // A grace in minutes, or a schedule cleared, leaves no exact grace behind.
    if (grace !== undefined || cron === null) patch.grace_s = null;
  }
  if (period_seconds !== undefined || grace_seconds !== undefined) {
    const cur = (await getService(deps.kv, me.id, id)).value;
    if (!cur) notFound("no such service");
    const sched = patch.schedule !== undefined ? patch.schedule : cur.schedule ?? null;
    const exact = exactTiming(cur.kind, sched !== null, { period_seconds, grace_seconds });
    Object.assign(patch, exact);
    if (sched && exact.grace_s !== undefined) {
      patch.schedule = { ...sched, grace: graceMinutes(exact.grace_s) };
    }
  }
  // An interval of the list given alone means exactly that interval.
  if (patch.interval !== undefined && period_seconds === undefined) patch.period = null;
  // A minimum duration, a pause, or a timing that a minimum must stay within.
  const timing = patch.interval !== undefined || patch.schedule !== undefined;
  if (timing || patch.min_duration !== undefined || patch.paused !== undefined) {
    const cur = (await getService(deps.kv, me.id, id)).value;
    if (!cur) notFound("no such service");
    runOptions({ ...cur, ...patch } as Service);
  }
  const s = await patchService(deps, me.id, id, patch, deps.clock.now(), guard);
  if (!s) notFound("no such service");
  const windows = await listWindows(deps.kv, me.id);
  return serviceView(s, await getBeat(deps.kv, s), deps.clock.now(), windows);
}
