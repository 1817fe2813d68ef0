import { DAY, MINUTE } from "../../lib/clock.ts";
import type { CheckResult } from "../../lib/checks/mod.ts";
import { randomToken, sha256hex } from "../../lib/crypto.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, invalid } from "../../lib/errors.ts";
import type { Schedule } from "../../lib/schedule.ts";
import type { Kind } from "../../lib/targets.ts";
import type { HttpOptions } from "../../lib/checks/http_options.ts";
import { type Atomic, atomic, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { counted } from "../alerts/alert_rules.ts";
import { formTokenEntry, spendFormToken, spent } from "../store/form_tokens.ts";
import {
  claimServiceId,
  countAdded,
  countEntry,
  countOf,
  dropService,
  getService,
  insertService,
  saveService,
  serviceEntries,
  serviceWithCount,
} from "./store.ts";
import { firstLook, floorMinute, periodMs, type Pulse, runGrace, type Service } from "./state.ts";
import {
  type Channel,
  channelEntry,
  channelView,
  createChannel,
  deleteChannel,
  listChannels,
  type NewChannel,
  setForNew,
} from "../alerts/channels.ts";
import {
  codeHash,
  dropHookRef,
  dropPulse,
  eraseEvents,
  forgetHooks,
  getPulse,
  hookEntries,
  hookFreeInto,
  type HookRef,
  listPulses,
  pushHash,
  putHookRef,
  putSlugRefs,
  slugHash,
  slugRefs,
} from "./heartbeats.ts";
import { newPingKey, type PingKey, pingKeyEntry, putPingKey } from "./ping_keys.ts";
import { hcSlug } from "../../lib/text.ts";
import { addDuration, emptyDay, eraseHistory, recordChange } from "./history.ts";
import { dropServiceInto, windowsEntry } from "./maintenance.ts";

/**
 * Watched services as their owner changes them: create, change, pause, rotate a key, delete,
 * erase, with their badges and hook keys. Key layout:
 *   ["service_badges", token]       -> {account, id}, a service's public badge address
 * The record, its id entry, the account's count and the runner's due entry are the aggregate's,
 * kv/service/store.ts: each change here adds its mutators (`insertService`, `saveService`,
 * `dropService`) to the atomic that also writes the hook entries (kv/service/heartbeats.ts `putHookRef`),
 * slug entries and maintenance windows the change touches. What a look finds is recorded by
 * kv/service/looks.ts, through the same `saveService`.
 */

export const GROUPS = ["Public", "LAN and tailnet", "Data", "Jobs"] as const;
export const PLACES = [
  "via tunnel",
  "cloudflared",
  "LAN",
  "tailnet",
  "container only",
  "oneshot",
  "cloud",
  "on site",
] as const;
/** Consecutive failed checks before a checked service turns warn or off (default 1). */
export const THRESHOLDS = [1, 2, 3, 4, 5] as const;
export const MAX_SERVICES = 30;
/** Most tags a service has, and the longest tag. */
export const MAX_TAGS = 20;
export const MAX_TAG = 50;

export type { Service, ServiceView, State } from "./state.ts";
export {
  beatLimits,
  beatState,
  firstLook,
  graceMinutes,
  INTERVALS,
  judgeBeat,
  openFailure,
  openRun,
  periodFields,
  periodMs,
  pulseState,
  runGrace,
  serviceView,
  shownVerdict,
  spanText,
  specInterval,
} from "./state.ts";

export { countServices, getService, serviceIdEntries } from "./store.ts";

const badgeKey = (token: string) => ["service_badges", token] as const;

/**
 * Minutes after a start signal when the runner first looks (the nudge the ping leaves): the
 * run's grace, or sooner, the minimum duration, so a run that ended too soon alerts then.
 */
const startLook = (s: Service) => Math.min(runGrace(s), s.min_duration || Infinity) / 60;

/**
 * What a hook key stands for (kv/service/heartbeats.ts): the service, its name, when to look at a run, and
 * whether its next success changes its state (it waits for a first run, or is off), so that
 * success asks for a look at once: the change is in the history, and the back alert on its
 * way, within seconds of the ping, while a success of a heartbeat that is up writes nothing
 * more.
 */
const hookRef = (s: Service): HookRef => ({
  account: s.account,
  id: s.id,
  name: s.name,
  grace: startLook(s),
  ...(s.methods === "POST" ? { post: true as const } : {}),
  ...(s.paused_at != null && s.manual_resume === false ? { resume: true as const } : {}),
  ...(s.paused_at == null && (s.seen === "wait" || s.seen === "off")
    ? { look: true as const }
    : {}),
});

/** The hashes of a heartbeat's own keys: its hook key, its UUID and its push token. */
const ownHashes = (s: Service): string[] =>
  [s.hook, s.code ? codeHash(s.code) : null, s.push ?? null].filter((h) => h !== null);

/**
 * The slug entries a change touches, under the account's ping key, read so that the atomic
 * can check them: the key's entry and, when there is a key, each slug's entry.
 */
interface SlugSpots {
  pk: Deno.KvEntryMaybe<PingKey>;
  entries: Map<string, { hash: string; entry: Deno.KvEntryMaybe<HookRef> }>;
}

async function readSlugs(kv: Deno.Kv, account: number, slugs: string[]): Promise<SlugSpots> {
  const pk = await pingKeyEntry(kv, account);
  const entries: SlugSpots["entries"] = new Map();
  if (!pk.value) return { pk, entries };
  const unique = [...new Set(slugs)].filter((slug) => slug !== "");
  const hashes = unique.map((slug) => slugHash(pk.value!.hash, slug));
  const got = await hookEntries(kv, hashes);
  unique.forEach((slug, i) => entries.set(slug, { hash: hashes[i], entry: got[i] }));
  return { pk, entries };
}

/**
 * Service `id` leaves the slug `from` and joins `to` with `ref` (either may be null), in an
 * atomic checked against what `readSlugs` read. A slug shared by several services names
 * them all (its pings answer "ambiguous slug").
 */
function moveSlugInto(
  op: Atomic,
  spots: SlugSpots,
  id: number,
  from: string | null,
  to: string | null,
  ref: HookRef | null,
): void {
  op.check(spots.pk);
  for (const [slug, { hash, entry }] of spots.entries) {
    if (slug !== from && slug !== to) continue;
    const refs = slugRefs(entry.value).filter((r) => r.id !== id);
    if (slug === to && ref) refs.push(ref);
    refs.sort((a, b) => a.id - b.id);
    op.check(entry);
    putSlugRefs(op, hash, refs);
  }
}

/**
 * The account's service with this Healthchecks uuid, or null (another account's too). The
 * UUID's one index is its hook entry (kv/service/heartbeats.ts `codeHash`), which its pings read too.
 */
export async function serviceByUuid(
  kv: Deno.Kv,
  account: number,
  uuid: string,
): Promise<Service | null> {
  const [entry] = await hookEntries(kv, [codeHash(uuid)]);
  const ref = entry.value;
  if (!ref || ref.all || ref.account !== account) return null;
  const s = (await getService(kv, account, ref.id)).value;
  return s?.code === uuid.toLowerCase() ? s : null;
}

/** A heartbeat's signals (null for a checked kind). */
export async function getBeat(kv: Deno.Kv, s: Service): Promise<Pulse | null> {
  if (s.kind !== "webhook") return null;
  return await getPulse(kv, s.account, s.id);
}

/** The account's services, oldest first, with their heartbeat signals. */
/** The account's service entries (with their versionstamps, to check in an atomic). */
export async function listServiceEntries(
  kv: Deno.Kv,
  account: number,
): Promise<Deno.KvEntry<Service>[]> {
  const out: Deno.KvEntry<Service>[] = [];
  for await (const e of serviceEntries(kv, account)) out.push(e);
  return out;
}

export async function listServices(
  kv: Deno.Kv,
  account: number,
): Promise<{ service: Service; beat: Pulse | null }[]> {
  const pulses = await listPulses(kv, account);
  const out = [];
  for await (const e of serviceEntries(kv, account)) {
    out.push({ service: e.value, beat: pulses.get(e.value.id) ?? null });
  }
  return out;
}

/** Every service of every account (team listing). */
export async function listAllServices(kv: Deno.Kv) {
  const out: { service: Service; beat: Pulse | null }[] = [];
  for await (const e of serviceEntries(kv)) {
    out.push({ service: e.value, beat: await getBeat(kv, e.value) });
  }
  return out;
}

/** The rules a new service may be given and a patch may change, each optional in both. */
interface ServiceRules {
  /** 1 when absent. */
  threshold?: number;
  schedule?: Schedule | null;
  channels?: number[];
  depends_on?: number[];
  remind?: number | null;
  min_duration?: number | null;
  interval_grace?: number | null;
  period?: number | null;
  grace_s?: number | null;
  tags?: string[];
  manual_resume?: boolean;
}

export interface NewService extends ServiceRules {
  name: string;
  what: string;
  group: string;
  place: string | null;
  interval: number;
  alerts: boolean;
  kind: Kind;
  check: string;
  hint: string | null;
  /** Heartbeats: a Healthchecks UUID to keep (an import); absent: a new one. */
  code?: string;
  /** Heartbeats: the slug; absent: made from the name. */
  slug?: string;
  methods?: "POST";
  /** Heartbeats: the hash of an Uptime Kuma push token to keep (an import). */
  push?: string | null;
  http?: HttpOptions;
  /** Created paused (an import of a paused check or monitor). */
  paused?: boolean;
}

/** A heartbeat as Healthchecks makes a check: a period of a day, in the group Jobs. */
export const hcHeartbeat = (name: string, channels: number[]): NewService => ({
  name,
  what: "",
  group: "Jobs",
  place: null,
  interval: 1440,
  alerts: true,
  kind: "webhook",
  check: "webhook:",
  hint: null,
  channels,
});

const tooMany = () =>
  conflict(`at most ${MAX_SERVICES} services per account; remove one first`, {
    max: MAX_SERVICES,
  });

/**
 * Stores a new service with its first result; answers it and, for a heartbeat, its key. A
 * heartbeat gets a UUID and a slug as a Healthchecks check (its slug's entry under the
 * account's ping key). `slugFree`: only if no service has that slug yet (auto-provisioning;
 * answers null when one has, so that two concurrent first pings make one check).
 */
export async function createService(
  deps: Deps,
  account: number,
  input: NewService,
  first: CheckResult | null,
  slugFree = false,
  form?: SentForm,
): Promise<{ service: Service; key: string | null } | null> {
  const made = await storeServices(deps, account, [{ input, first }], slugFree, form);
  return made ? made[0] : null;
}

/** The token of the page's form that asks for it, and how long it counts (kv/store/form_tokens.ts). */
export interface SentForm {
  token: string;
  life: number;
}

/**
 * Stores several new services in one atomic, all or none, within the account's limit (an
 * import); checked kinds wait for the runner's next minute.
 */
export async function importServices(
  deps: Deps,
  account: number,
  inputs: NewService[],
): Promise<Service[]> {
  const made = await storeServices(deps, account, inputs.map((input) => ({ input, first: null })));
  return made!.map((m) => m.service);
}

/**
 * The one atomic of `createService` and `importServices`; a page form's token (`form`) is spent
 * in it, so the same form sent again adds nothing (a conflict with `repeated`).
 */
async function storeServices(
  deps: Deps,
  account: number,
  news: { input: NewService; first: CheckResult | null }[],
  slugFree = false,
  form?: SentForm,
): Promise<{ service: Service; key: string | null }[] | null> {
  const { kv } = deps;
  const now = deps.clock.now();
  const prepared = news.map(({ input, first }) => {
    const hb = input.kind === "webhook";
    const key = hb ? randomToken(32) : null;
    const { slug, code, paused, ...fields } = input;
    return {
      key,
      hash: key ? sha256hex(key) : null,
      fields,
      first,
      hb,
      slug: hb ? slug ?? hcSlug(input.name) : undefined,
      code: hb ? (code ?? crypto.randomUUID()).toLowerCase() : undefined,
      paused: paused === true,
    };
  });
  const kept = news.flatMap(({ input }) => [
    ...(input.code ? [codeHash(input.code.toLowerCase())] : []),
    ...(input.push ? [input.push] : []),
  ]);
  if (new Set(kept).size !== kept.length) {
    conflict("one UUID or push token is named twice: each names one service");
  }
  // An empty slug (Healthchecks' v3 check made without one) has no address, so no entry.
  const slugs = prepared.flatMap((p) => p.slug ? [p.slug] : []);
  const made = await transact(async () => {
    const [count, token] = await Promise.all([
      countEntry(kv, account),
      form ? formTokenEntry(kv, account, form.token) : null,
    ]);
    if (token && spent(token, now)) {
      conflict("this form was sent before: the service was added once", { repeated: true });
    }
    if (countOf(count) + news.length > MAX_SERVICES) tooMany();
    // A kept UUID or push token (an import) taken since it was planned, by another import
    // of this account or another's: a plain refusal, not a retry until the budget is spent.
    if (kept.length > 0 && (await hookEntries(kv, kept)).some((e) => e.value !== null)) {
      conflict(
        "a check with one of these UUIDs or push tokens was added here meanwhile (another " +
          "import at the same time?): nothing was imported; import again to see what is left",
      );
    }
    const spots = slugs.length > 0 ? await readSlugs(kv, account, slugs) : null;
    const refs = new Map<string, HookRef[]>();
    for (const [slug, { entry }] of spots?.entries ?? []) refs.set(slug, slugRefs(entry.value));
    if (slugFree && (refs.get(slugs[0])?.length ?? 0) > 0) return { op: null, result: null };
    const op = countAdded(atomic(kv), count, account, news.length);
    if (token) spendFormToken(op, token, now, form!.life);
    const out: { service: Service; key: string | null }[] = [];
    for (const p of prepared) {
      const id = await claimServiceId(kv);
      // Checked at creation: next at its interval. Not checked (past the manual-check limit,
      // or imported): at the next minute's run. A heartbeat: before its first beat could turn off.
      const due = p.hb
        ? firstLook(p.fields, now)
        : floorMinute(now) + (p.first ? p.fields.interval : 1) * MINUTE;
      const base: Service = {
        id: id.id,
        account,
        ...p.fields,
        ...(p.hb ? { code: p.code, slug: p.slug } : {}),
        created: now,
        hook: p.hash,
        last: null,
        streak: 0,
        cert: null,
        seen: "wait",
        ...(p.hb ? { looked: now } : {}),
        ...(p.paused ? { paused_at: now } : {}),
        down_mailed: false,
        due,
      };
      // The first result counts as any other (threshold, certificate), without alerts.
      const s = p.first ? counted(base, p.first, now).service : base;
      // Off from its first result: the person saw it on the creation's answer, and the look
      // of the next minute alerts, not one interval later (a day for a daily check).
      if (s.seen === "off") s.due = floorMinute(now) + MINUTE;
      insertService(id.apply(op), s);
      // A UUID or push token kept from another service (an import) must name no other check.
      for (const h of ownHashes(s)) {
        if (h !== p.hash) hookFreeInto(op, h);
        putHookRef(op, h, hookRef(s));
      }
      if (s.slug !== undefined && refs.has(s.slug)) refs.get(s.slug)!.push(hookRef(s));
      if (p.first) {
        s.since = now;
        recordChange(op, account, s.id, now, { state: s.seen, status: s.last!.status });
        addDuration(op, emptyDay(account, s.id, now), p.first.ms, now, p.first.state);
      }
      out.push({ service: s, key: p.key });
    }
    if (spots) {
      op.check(spots.pk);
      for (const [slug, { hash, entry }] of spots.entries) {
        op.check(entry);
        putSlugRefs(op, hash, refs.get(slug)!.sort((a, b) => a.id - b.id));
      }
    }
    return { op, result: out };
  });
  // A slug's entry may have changed (shared now): this process reads it again.
  if (slugs.length > 0) forgetHooks(kv);
  return made;
}

export interface ServicePatch extends ServiceRules {
  name?: string;
  what?: string;
  group?: string;
  place?: string | null;
  interval?: number;
  alerts?: boolean;
  /** url checks: new options (null: none, a plain GET). */
  http?: HttpOptions | null;
  /** Heartbeats: pause (true) or resume (false). */
  paused?: boolean;
  slug?: string;
  /** "POST": POST pings only; "": any method. */
  methods?: "" | "POST";
}

/**
 * A service paused or resumed, in the atomic of its record. Pausing ends its outage's alerts
 * (no back alert follows) and reads `wait` in its history, which leaves the paused time out of
 * uptime; a paused checked kind is not checked (jobs/checks.ts `skipPaused`). Resuming starts
 * afresh: a heartbeat judges nothing before it (one that had run is due one period after it),
 * a checked kind is checked at the next minute, and the runner looks at once.
 */
function pauseInto(op: Atomic, old: Service, s: Service, paused: boolean, now: number): void {
  if (paused === (old.paused_at != null)) return;
  if (paused) {
    Object.assign(s, { paused_at: now, seen: "wait", since: now, down_mailed: false });
    Object.assign(s, { held: false, streak: 0, due: floorMinute(now) + DAY });
    recordChange(op, s.account, s.id, now, { state: "wait", status: "paused" });
  } else if (s.kind === "webhook") {
    Object.assign(s, { paused_at: null, resumed: now, looked: now, streak: 0 });
    Object.assign(s, { judged: { beat: now, fail: now }, due: floorMinute(now) });
  } else {
    // A checked kind is checked again at the next minute's run.
    Object.assign(s, { paused_at: null, resumed: now, streak: 0, due: floorMinute(now) });
  }
}

/**
 * A paused checked service the runner came to: it is not checked; its next look is a day on
 * (a resume moves it to the next minute).
 */
export async function skipPaused(deps: Deps, account: number, id: number): Promise<void> {
  const { kv } = deps;
  await transact(async () => {
    const entry = await getService(kv, account, id);
    const s = entry.value;
    if (!s || s.paused_at == null) return { op: null, result: null };
    const next = { ...s, due: floorMinute(deps.clock.now()) + DAY };
    return { op: saveService(atomic(kv).check(entry), s, next), result: null };
  });
}

/**
 * Changes a service. `guard`: entries the change was decided on (the account's services a
 * dependency change read), checked in its atomic; a change among them fails it.
 */
export async function patchService(
  deps: Deps,
  account: number,
  id: number,
  patch: ServicePatch,
  now = deps.clock.now(),
  guard: Deno.KvEntryMaybe<unknown>[] = [],
): Promise<Service | null> {
  const { kv } = deps;
  let attempt = 0;
  const out = await transact(async () => {
    // A retry means the guarded entries changed: the caller decides again on fresh reads.
    if (attempt++ > 0 && guard.length) conflict("the services changed meanwhile; try again");
    const entry = await getService(kv, account, id);
    if (!entry.value) return { op: null, result: null };
    const old = entry.value;
    const { paused, methods, ...fields } = patch;
    const s: Service = { ...old, ...fields };
    if (methods === "POST") s.methods = "POST";
    else if (methods === "") delete s.methods;
    if (s.depends_on?.length === 0) delete s.depends_on;
    const op = atomic(kv).check(entry);
    for (const g of guard) if (g.key[2] !== id) op.check(g);
    if (paused !== undefined && paused !== (old.paused_at != null)) {
      pauseInto(op, old, s, paused, now);
    } else if (
      s.kind === "webhook" &&
      (periodMs(s) !== periodMs(old) || (s.grace_s ?? null) !== (old.grace_s ?? null) ||
        (s.interval_grace ?? null) !== (old.interval_grace ?? null))
    ) {
      // A new period or grace changes when the heartbeat is late: the runner looks again now.
      s.due = floorMinute(now);
    } else if (patch.interval !== undefined && patch.interval !== old.interval) {
      // The next look comes one new interval after the last one, or now if that is past.
      const base = old.last?.checked ?? old.created;
      s.due = Math.max(floorMinute(now), floorMinute(base) + s.interval * MINUTE);
    } else if (
      patch.schedule !== undefined &&
      JSON.stringify(patch.schedule) !== JSON.stringify(old.schedule)
    ) {
      // A new schedule changes when the heartbeat is late: the runner looks again now.
      s.due = floorMinute(now);
    }
    await hookRefsInto(kv, op, old, s);
    saveService(op, old, s);
    return { op, result: s };
  });
  if (out?.hook) forgetHooks(kv);
  return out;
}

/**
 * A heartbeat's hook entries (its own keys' and its slug's) rewritten in the atomic of its
 * changed record `s` when what they say of it changed (name, grace, methods, pause, whether a
 * success asks for a look); read inside the caller's transact. True when they were.
 */
export async function hookRefsInto(
  kv: Deno.Kv,
  op: Atomic,
  old: Service,
  s: Service,
): Promise<boolean> {
  if (!s.hook) return false;
  const ref = hookRef(s);
  const refChanged = JSON.stringify(ref) !== JSON.stringify(hookRef(old));
  if (refChanged) { for (const h of ownHashes(s)) putHookRef(op, h, ref); }
  if (s.slug !== undefined && (s.slug !== old.slug || refChanged)) {
    const spots = await readSlugs(kv, s.account, [old.slug ?? s.slug, s.slug]);
    moveSlugInto(op, spots, s.id, old.slug ?? null, s.slug, ref);
    return true;
  }
  return refChanged;
}

/**
 * A new ping key for the account (the old one, if any, stops at once): every heartbeat's slug
 * entry moves under it in the same atomic. Answers the key, shown only here.
 */
export async function rotatePingKey(deps: Deps, account: number): Promise<string> {
  const { kv } = deps;
  const made = newPingKey();
  await transact(async () => {
    const pk = await pingKeyEntry(kv, account);
    const count = await countEntry(kv, account);
    const op = atomic(kv).check(pk, count);
    const bySlug = new Map<string, HookRef[]>();
    for await (const e of serviceEntries(kv, account)) {
      const s = e.value;
      if (!s.slug) continue;
      op.check(e);
      bySlug.set(s.slug, [...bySlug.get(s.slug) ?? [], hookRef(s)]);
      if (pk.value) dropHookRef(op, slugHash(pk.value.hash, s.slug));
    }
    for (const [slug, refs] of bySlug) putSlugRefs(op, slugHash(made.hash, slug), refs);
    putPingKey(op, account, made.hash, deps.clock.now(), pk.value);
    return { op, result: null };
  });
  forgetHooks(kv);
  return made.key;
}

/** When the account made its ping key (it is shown only then); null: it has none. */
export async function pingKeyMade(kv: Deno.Kv, account: number): Promise<number | null> {
  return (await pingKeyEntry(kv, account)).value?.created ?? null;
}

/** Takes a removed channel off every service of the account. */
async function dropChannel(deps: Deps, account: number, channel: number): Promise<void> {
  for (const { service } of await listServices(deps.kv, account)) {
    if (!service.channels?.includes(channel)) continue;
    await patchService(deps, account, service.id, {
      channels: service.channels.filter((c) => c !== channel),
    });
  }
}

/** Deletes an alert channel and takes it off every service that chose it; false: no such channel. */
export async function removeChannel(
  deps: Deps,
  account: number,
  channel: number,
): Promise<boolean> {
  if (!await deleteChannel(deps, account, channel)) return false;
  await dropChannel(deps, account, channel);
  return true;
}

/** A new badge token for a service (the old address stops); null: no such service. */
export async function rotateBadge(deps: Deps, account: number, id: number): Promise<string | null> {
  const { kv } = deps;
  const token = randomToken(16);
  return await transact(async () => {
    const entry = await getService(kv, account, id);
    const s = entry.value;
    if (!s) return { op: null, result: null };
    const op = saveService(atomic(kv).check(entry), s, { ...s, badge: token })
      .set(badgeKey(token), { account, id });
    if (s.badge) op.delete(badgeKey(s.badge));
    return { op, result: token };
  });
}

/** The service a badge token names, or null. */
export async function serviceByBadge(kv: Deno.Kv, token: string): Promise<Service | null> {
  const ref = (await kv.get<{ account: number; id: number }>(badgeKey(token))).value;
  if (!ref) return null;
  const s = (await getService(kv, ref.account, ref.id)).value;
  return s && s.badge === token ? s : null;
}

/** A new heartbeat key; the old one stops at once. Null: no such service. */
export async function rotateHook(deps: Deps, account: number, id: number): Promise<string | null> {
  const key = randomToken(32);
  const refusal = "only a heartbeat service has a hook address to rotate";
  return await rotateAddress(deps, account, id, "hook", sha256hex(key), refusal) ? key : null;
}

/**
 * A new Uptime Kuma push token for a heartbeat (`/api/push/<token>`; the old one stops at
 * once); shown only here, kept as a hash. Null: no such service.
 */
export async function rotatePush(deps: Deps, account: number, id: number): Promise<string | null> {
  const token = kumaToken();
  const refusal = "only a heartbeat has a push address";
  return await rotateAddress(deps, account, id, "push", pushHash(token), refusal) ? token : null;
}

/**
 * Puts a heartbeat's new address (the hash of a hook key or push token) in place of its old one,
 * in one atomic that checks no service holds it yet. False: no such service.
 */
async function rotateAddress(
  deps: Deps,
  account: number,
  id: number,
  field: "hook" | "push",
  hash: string,
  refusal: string,
): Promise<boolean> {
  const { kv } = deps;
  const done = await transact(async () => {
    const entry = await getService(kv, account, id);
    const s = entry.value;
    if (!s) return { op: null, result: false };
    if (s.kind !== "webhook") invalid(refusal);
    const op = saveService(atomic(kv).check(entry), s, { ...s, [field]: hash });
    putHookRef(hookFreeInto(op, hash), hash, hookRef(s));
    const old = s[field];
    if (old) dropHookRef(op, old);
    return { op, result: true };
  });
  forgetHooks(kv);
  return done;
}

const KUMA_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A push token as Uptime Kuma makes them: 32 letters and digits (about 190 bits). */
function kumaToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(64));
  let out = "";
  // 62 letters: bytes of 248 and over are skipped, so every letter is as likely.
  for (const b of bytes) if (b < 248 && out.length < 32) out += KUMA_ALPHABET[b % 62];
  return out.length === 32 ? out : kumaToken();
}

/** Adds the removal of a service and everything indexed with it to an atomic. */
function removeInto(
  op: Atomic,
  s: Service,
  count: Deno.KvEntryMaybe<Deno.KvU64>,
  spots: SlugSpots | null,
): Atomic {
  dropService(op, s, count);
  if (s.badge) op.delete(badgeKey(s.badge));
  if (s.kind === "webhook") dropPulse(op, s.account, s.id);
  for (const h of ownHashes(s)) dropHookRef(op, h);
  if (spots) moveSlugInto(op, spots, s.id, s.slug!, null, null);
  return op;
}

/** The removal of a service with its id dropped from the account's maintenance windows. */
async function removeWithWindows(
  kv: Deno.Kv,
  entry: Deno.KvEntry<Service>,
  count: Deno.KvEntryMaybe<Deno.KvU64>,
): Promise<Atomic> {
  const s = entry.value;
  const windows = await windowsEntry(kv, s.account);
  const spots = s.slug !== undefined ? await readSlugs(kv, s.account, [s.slug]) : null;
  const op = removeInto(atomic(kv).check(entry), s, count, spots);
  return dropServiceInto(op, windows, s.account, s.id);
}

/** Removes one service with its indexes and counter (removeWithWindows); false: it is gone. */
async function removeService(kv: Deno.Kv, account: number, id: number): Promise<boolean> {
  return await transact(async () => {
    const [entry, count] = await serviceWithCount(kv, account, id);
    if (!entry.value) return { op: null, result: false };
    return { op: await removeWithWindows(kv, entry, count), result: true };
  });
}

export async function deleteService(deps: Deps, account: number, id: number): Promise<boolean> {
  const { kv } = deps;
  const done = await removeService(kv, account, id);
  forgetHooks(kv);
  if (done) {
    await eraseHistory(kv, account, id);
    await eraseEvents(kv, account, id);
    await dropDependency(deps, account, id);
  }
  return done;
}

/** Takes a removed service off the dependencies of every service that named it. */
async function dropDependency(deps: Deps, account: number, id: number): Promise<void> {
  for (const { service } of await listServices(deps.kv, account)) {
    if (!service.depends_on?.includes(id)) continue;
    await patchService(deps, account, service.id, {
      depends_on: service.depends_on.filter((p) => p !== id),
    });
  }
}

/**
 * Healthchecks' `manual_resume: false`: a success or failure ping resumes a paused heartbeat.
 * The resume is dated a millisecond before the ping, so the ping is the first signal judged
 * after it (a failure turns it off, a success up). False when there was nothing to resume
 * (resumed meanwhile, or the setting changed): the ping is then recorded as it comes.
 */
export async function resumeByPing(deps: Deps, account: number, id: number): Promise<boolean> {
  const s = (await getService(deps.kv, account, id)).value;
  if (!s || s.paused_at == null || s.manual_resume !== false) {
    forgetHooks(deps.kv);
    return false;
  }
  await patchService(deps, account, id, { paused: false }, deps.clock.now() - 1);
  forgetHooks(deps.kv);
  return true;
}

/**
 * Gives every heartbeat made before Healthchecks' addresses a UUID (unless it has one), a slug
 * and the UUID's hook entry, its one index (a migration step; again is harmless: a heartbeat
 * with a slug is skipped). A UUID whose entry names another service is replaced by a new one.
 */
export async function giveCodes(kv: Deno.Kv): Promise<void> {
  for await (const e of serviceEntries(kv)) {
    if (e.value.kind !== "webhook" || e.value.slug !== undefined) continue;
    await transact(async () => {
      const entry = await getService(kv, e.value.account, e.value.id);
      const old = entry.value;
      if (!old || old.slug !== undefined) return { op: null, result: null };
      let code = old.code ?? crypto.randomUUID();
      let [taken] = await hookEntries(kv, [codeHash(code)]);
      if (taken.value && taken.value.id !== old.id) {
        code = crypto.randomUUID();
        [taken] = await hookEntries(kv, [codeHash(code)]);
      }
      const s: Service = { ...old, code, slug: hcSlug(old.name) };
      const op = saveService(atomic(kv).check(entry).check(taken), old, s);
      putHookRef(op, codeHash(code), hookRef(s));
      return { op, result: null };
    });
  }
}

/** Removes the UUID index of an earlier layout (a migration step): the hook entry is the one. */
export async function dropUuidIndex(kv: Deno.Kv): Promise<void> {
  await deleteKeys(kv, keysOf(kv, { prefix: ["services_by_uuid"] }));
}

/** Removes every service of an account (erasure); answers how many. */
export async function eraseServices(deps: Deps, account: number): Promise<number> {
  const { kv } = deps;
  let n = 0;
  for await (const e of serviceEntries(kv, account)) {
    if (await removeService(kv, account, e.value.id)) n++;
    await eraseHistory(kv, account, e.value.id);
    await eraseEvents(kv, account, e.value.id);
  }
  forgetHooks(kv);
  return n;
}

/** A channel as its owner's list shows it: its view and how many services it alerts. */
export type ChannelInUse = ReturnType<typeof channelView> & { services: number };

const inUse = (c: Channel, services: number): ChannelInUse => ({ ...channelView(c), services });

/**
 * The account's channels, each with the number of its services that alert it (counted from
 * the service records, so always what the records say), and how many services there are.
 */
export async function channelsInUse(
  kv: Deno.Kv,
  account: number,
): Promise<{ items: ChannelInUse[]; services: number }> {
  const [{ used, services }, channels] = await Promise.all([
    useCounts(kv, account),
    listChannels(kv, account),
  ]);
  return { items: channels.map((c) => inUse(c, used.get(c.id) ?? 0)), services };
}

/** How many services alert each channel of the account, and how many services it has. */
async function useCounts(kv: Deno.Kv, account: number) {
  const used = new Map<number, number>();
  let services = 0;
  for await (const { value } of serviceEntries(kv, account)) {
    services++;
    for (const id of new Set(value.channels ?? [])) used.set(id, (used.get(id) ?? 0) + 1);
  }
  return { used, services };
}

/** Turns a channel's "use for new services" on or off (PATCH); null: no such channel. */
export async function changeChannel(
  deps: Deps,
  account: number,
  id: number,
  change: { for_new_services: boolean },
): Promise<ChannelInUse | null> {
  const ch = await setForNew(deps, account, id, change.for_new_services);
  return ch ? inUse(ch, (await useCounts(deps.kv, account)).used.get(id) ?? 0) : null;
}

/**
 * "Apply to all my services": adds the channel to every service of the account that does not
 * alert it yet, each in an atomic that checks the service and the channel (a channel removed
 * meanwhile is added to none after). Answers how many services alert it now and how many were
 * added; null: no such channel.
 */
export async function applyChannel(
  deps: Deps,
  account: number,
  channel: number,
): Promise<{ services: number; added: number } | null> {
  const { kv } = deps;
  if (!(await channelEntry(kv, account, channel)).value) return null;
  let services = 0;
  let added = 0;
  for (const { service } of await listServices(kv, account)) {
    const outcome = await transact(async () => {
      const entry = await getService(kv, account, service.id);
      const old = entry.value;
      if (!old) return { op: null, result: "gone" as const };
      if (old.channels?.includes(channel)) return { op: null, result: "had" as const };
      const ch = await channelEntry(kv, account, channel);
      if (!ch.value) return { op: null, result: "no channel" as const };
      const s: Service = { ...old, channels: [...old.channels ?? [], channel] };
      return { op: saveService(atomic(kv).check(entry, ch), old, s), result: "added" as const };
    });
    if (outcome === "no channel") return null;
    if (outcome === "added") added++;
    if (outcome !== "gone") services++;
  }
  return { services, added };
}

/**
 * Adds a channel (kv/alerts/channels.ts `createChannel`) and, with `apply_to_all`, applies it to every
 * service of the account at once ("Apply on all existing monitors"). Answers the channel as the
 * list shows it, and a webhook's signing secret, shown only here.
 */
export async function addChannel(
  deps: Deps,
  account: number,
  input: NewChannel & { apply_to_all?: boolean },
  allowPrivate: boolean,
): Promise<{ item: ChannelInUse; shownSecret: string | null }> {
  const { apply_to_all: all, ...fields } = input;
  const made = await createChannel(deps, account, fields, allowPrivate);
  const applied = all ? await applyChannel(deps, account, made.id) : null;
  return { item: inUse(made, applied?.services ?? 0), shownSecret: made.shownSecret };
}
