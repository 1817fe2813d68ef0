import { iso } from "../../lib/clock.ts";
import { sha256hex } from "../../lib/crypto.ts";
import { originSubject } from "../../lib/ip.ts";
import type { Deps } from "../../lib/deps.ts";
import {
  type Atomic,
  atomic,
  atomicStats,
  commit,
  ConflictError,
  deleteKeys,
  keysOf,
  mutationCount,
  TRANSACT_BUDGET_MS,
} from "../_atomic.ts";
import { getManyEntries } from "../_batch.ts";
import { addUses, heldUses, judge, rateKey, RULES } from "../store/rate_limit.ts";
import { addEarlyDue, queueLook } from "./store.ts";
import { type BeatSignal, openRun, type Pulse, type Start } from "./state.ts";

/**
 * Heartbeat hooks, the hottest path of the service. Key layout:
 *   ["hooks", key_hash]             -> HookRef {account, id, name}; only the key's hash is kept
 *   ["beats", account_id, service]  -> Beat {at, status}, the last success signal
 *   ["beat_starts", account_id, service] -> {at, rid}, the last start signal
 *   ["beat_fails", account_id, service]  -> {at, status}, the last failure signal
 *   ["service_events", account_id, service, at_ms, nonce] -> HookEvent (the last 100 are
 *                                      kept: the runner trims them at each look)
 * A ping's batch also writes keys other modules own, through their mutators: a nudge, an
 * early due entry of the service (kv/service/store.ts `addEarlyDue`, set blind; the aggregate's header
 * says what a nudge may be), for a start (at its grace's end), a failure (now), a success whose
 * hook entry says it changes the state (`HookRef.look`: the heartbeat waits or is off; now) or
 * a service that wrote NUDGE_EVERY events in this process since its last, so the runner looks,
 * and trims, in time; for a start, a failure and such a success a KV queue message
 * (kv/service/store.ts `queueLook`, a start's delayed to its grace end), which the process that
 * listens (jobs/queue.ts) takes then, so the change is in the history and its alert on its
 * way within seconds; the heartbeat rate counts (kv/store/rate_limit.ts `addUses`). Success pings of
 * a heartbeat that is up write nothing more.
 *
 * A ping is one lookup and one write, and it is answered only once the write is durable.
 * Two things keep that cheap:
 * - Group commit: pings that arrive while a commit is under way wait for the next one, so
 *   one atomic (one fsync) carries many beats; each ping awaits its batch's commit.
 * - The lookup is an in-process cache of key hash -> HookRef with the versionstamp of the
 *   `["hooks", key_hash]` entry it was read from. Every batch checks the entry of each hook
 *   it writes a beat for (never a key shared by all hooks), so a rotation, rename or deletion
 *   made by any process fails only the batches holding that very hook; those hooks are then
 *   looked up again before the batch is retried. The old key therefore stops at once
 *   everywhere, and other accounts' hook changes never touch a ping.
 * The heartbeat rate limit counts per address in process (seeded from KV once per window
 * and address by a read the first ping does not wait for) and adds its counts to KV with the
 * pings' batches: at once in a quiet process, and under steady traffic at most RATE_WRITE_MS
 * after they were counted (one write per address then, not one per batch: hashed addresses
 * are spread over the whole file, and a write to each cost more than the ping's own), on
 * SIGTERM at once (`flushBeats`). Events are trimmed by the runner's look, never on the
 * ping's path nor in a look a failure asked for through the queue: a service that wrote
 * NUDGE_EVERY events in this process since its last nudge gets one in its batch (a blind set,
 * a millisecond past the minute so no queued look takes it), so a flood is trimmed within a
 * minute. With several server processes each seeds from KV when it first sees an address, so
 * the limit may be passed by what other processes counted after that (documented in
 * docs/api.md).
 */

export interface HookRef {
  account: number;
  id: number;
  name: string;
  /**
   * Minutes after a start signal when the runner first looks: the run's grace, or its shorter
   * minimum duration (kv/service/commands.ts `startLook`; absent: 60).
   */
  grace?: number;
  /** The service takes POST only (its `methods` setting): other methods are not recorded. */
  post?: true;
  /**
   * The service is paused and resumes at its next success or failure (Healthchecks'
   * `manual_resume: false`): the ping resumes it before it is recorded.
   */
  resume?: true;
  /**
   * The service waits for its first run or is off: its next success changes its state, so it
   * asks for a look at once, as a failure does (kv/service/commands.ts `hookRef`).
   */
  look?: true;
  /**
   * A slug's entry only, when several services share the slug in the account: all of them.
   * Pings by such a slug are refused ("ambiguous slug"); the services' own keys still work.
   */
  all?: HookRef[];
}

const KINDS = ["success", "start", "fail", "log"] as const;
export type SignalKind = typeof KINDS[number];

/** One signal as the hook received it. */
export interface Signal {
  kind: SignalKind;
  /** The exit code of `/<0-255>` (0 is a success, anything else a failure). */
  code: number | null;
  rid: string | null;
  /** The request body as text, up to BODY_MAX bytes. */
  body: string;
  /** The client's rough origin (its network, never the address). */
  origin: string;
  /** A response time the client reported with the signal (Uptime Kuma's `ping`), in ms. */
  ms?: number | null;
}

interface HookEvent extends Signal {
  at: number;
  status: string;
  /** The request's method (GET, POST, HEAD); "" for events kept from before it was recorded. */
  method: string;
}

export const BODY_MAX = 10 * 1024;
/** Events kept per service. */
export const EVENTS_KEPT = 100;
/**
 * Events a service writes in this process before its batch nudges the runner to look (and
 * trim) now. A service pinged on its schedule is looked at long before; only a flood reaches it.
 */
const NUDGE_EVERY = 2 * EVENTS_KEPT;
/** Value bytes per atomic at most (KV allows 800 KiB). */
const MAX_BATCH_BYTES = 600 * 1024;

export const hookKey = (hash: string) => ["hooks", hash] as const;
const beatKey = (account: number, id: number) => ["beats", account, id] as const;
const startKey = (account: number, id: number) => ["beat_starts", account, id] as const;
const failKey = (account: number, id: number) => ["beat_fails", account, id] as const;

/** A hook key's record (by the key's hash), in the caller's atomic: this module writes ["hooks"]. */
export function putHookRef(op: Atomic, hash: string, ref: HookRef): Atomic {
  return op.set(hookKey(hash), ref);
}

/**
 * The hash a Healthchecks check's UUID is kept by: a second key to the same service, in the
 * same ["hooks"] entries (a UUID's 36 characters never hash alike with a 43-character key).
 */
export const codeHash = (code: string) => sha256hex(code.toLowerCase());
/** The hash of a ping key and slug pair: the project's key hash, then the slug. */
export const slugHash = (pingKeyHash: string, slug: string) => sha256hex(`${pingKeyHash}/${slug}`);
/** The hash of an Uptime Kuma push token. */
export const pushHash = (token: string) => sha256hex(`push:${token}`);

/** The services a slug's entry names (none, one, or several when the slug is shared). */
export const slugRefs = (entry: HookRef | null): HookRef[] => entry ? entry.all ?? [entry] : [];

/** A slug's entry naming these services, in the caller's atomic; none: removed. */
export function putSlugRefs(op: Atomic, hash: string, refs: HookRef[]): Atomic {
  if (refs.length === 0) return op.delete(hookKey(hash));
  if (refs.length === 1) return op.set(hookKey(hash), refs[0]);
  return op.set(hookKey(hash), { ...refs[0], all: refs });
}

/** Reads hook entries by hash (to change a slug's entry in a version-checked atomic). */
export function hookEntries(kv: Deno.Kv, hashes: string[]) {
  return getManyEntries<HookRef>(kv, hashes.map(hookKey));
}

/** Checks in the caller's atomic that no service has this key yet (a kept UUID or token). */
export function hookFreeInto(op: Atomic, hash: string): Atomic {
  return op.check({ key: hookKey(hash), versionstamp: null });
}

/** Deletes a hook key's record (rotated or removed). */
export function dropHookRef(op: Atomic, hash: string): Atomic {
  return op.delete(hookKey(hash));
}

/** Deletes a heartbeat's last success, start and failure (the service is removed). */
export function dropPulse(op: Atomic, account: number, id: number): Atomic {
  return op.delete(beatKey(account, id)).delete(startKey(account, id)).delete(failKey(account, id));
}
const eventPrefix = (account: number, id: number) => ["service_events", account, id] as const;
const eventKey = (account: number, id: number, at: number, nonce: number) =>
  ["service_events", account, id, at, nonce] as const;
const MINUTE = 60_000;

export const SUCCESS_SIGNAL: Signal = {
  kind: "success",
  code: null,
  rid: null,
  body: "",
  origin: "",
};

/** Keys are 32 random bytes in base64url (256 bits). */
const HOOK_KEY_RE = /^[A-Za-z0-9_-]{43}$/;
/**
 * Checks per atomic at most: Deno KV refuses a commit of more than 100. A hook takes one, and a
 * hook with a success that ends a run by its id three more (its service's pulse: `pairRuns`).
 */
const MAX_CHECKS = 100;
const RUN_END_CHECKS = 3;
/** A run a success ends by its id is written again (`pairRuns`): one write beside its checks. */
const RUN_END_WRITES = 1;
/** Pings per atomic at most (each adds no more than one beat write). */
const MAX_BATCH = 400;
/** Mutations per atomic at most: Deno KV refuses a commit of more than 1 000. */
const MAX_MUTATIONS = 1000;
/**
 * The writes a signal kind adds to its batch once per hook, beside its event: its pulse key,
 * then a start's nudge and queued look, a failure's nudge and queued look (`commitBatch`).
 */
const KIND_WRITES: Record<SignalKind, number> = { success: 1, start: 3, fail: 3, log: 0 };
/**
 * A success of a hook that asks for a look (`HookRef.look`) adds its nudge and queued look.
 * Counted for every success: a hook read again before the commit (another process changed it)
 * may ask for a look it did not ask for when its batch was taken.
 */
const LOOK_WRITES = 2;
/**
 * How long the per-address counts wait in process, under steady traffic, before a batch adds
 * them to KV: one write per address in that time instead of one per batch. A quiet process
 * (no write in that time) writes a ping's count with the ping itself.
 */
const RATE_WRITE_MS = 10_000;
const CACHE_MAX = 100_000;
/**
 * Addresses counted in process per window at most: past it the counts start again from KV
 * (each slot's count is in KV within RATE_WRITE_MS, and a new slot reads it back: what was
 * not written yet is not seen), so a flood of addresses cannot grow the process.
 */
const RATE_SLOTS_MAX = 20_000;

interface Cached {
  ref: HookRef;
  /** Versionstamp of the `["hooks", hash]` entry `ref` was read from. */
  stamp: string;
}

interface QueuedPing {
  hook: Cached;
  hash: string;
  beat: BeatSignal;
  signal: Signal;
  method: string;
  /** The hook's ref once durable; null: the key is gone; "ambiguous": now a shared slug. */
  resolve: (ref: HookRef | null | "ambiguous") => void;
  reject: (err: unknown) => void;
}

interface RateSum {
  key: Deno.KvKey;
  n: bigint;
}

/** One address's heartbeat counts in this process: this window's, and the previous window's. */
interface RateSlot {
  count: number;
  previous: number;
  key: Deno.KvKey;
  id: string;
}

interface HookState {
  cache: Map<string, Cached>;
  queue: QueuedPing[];
  committing: boolean;
  rateWindow: number;
  rate: Map<string, RateSlot>;
  /** The previous window's slots (their counts are weighted into this window's verdicts). */
  ratePrevious: Map<string, RateSlot>;
  /** Counts not in KV yet, by window and address hash (a slot's `id`). */
  sums: Map<string, RateSum>;
  /** When the last batch left no count behind (the service's clock); -Infinity: never. */
  ratesWritten: number;
  /** The service's clock, from the pings' deps (tests move it); the system's before any. */
  clock: { now(): number };
  /** Every count goes with the next batches, due or not (`flushBeats`). */
  ratesNow: boolean;
  /** Events written per service in this process since its last nudge, by service id. */
  written: Map<number, number>;
}

const states = new WeakMap<Deno.Kv, HookState>();

function stateOf(kv: Deno.Kv): HookState {
  let st = states.get(kv);
  if (!st) {
    st = {
      cache: new Map(),
      queue: [],
      committing: false,
      rateWindow: 0,
      rate: new Map(),
      ratePrevious: new Map(),
      sums: new Map(),
      ratesWritten: -Infinity,
      clock: Date,
      ratesNow: false,
      written: new Map(),
    };
    states.set(kv, st);
  }
  return st;
}

/**
 * Drops this process's cache at once after a hook change made here (other processes notice
 * through the per-hook check of their next batch).
 */
export function forgetHooks(kv: Deno.Kv): void {
  states.get(kv)?.cache.clear();
}

type RateVerdict = { ok: true } | { ok: false; retryAfter: number };

/** Counts one heartbeat call from an address (docs/api.md "Limits": 600 an hour). */
export function countHeartbeat(deps: Deps, address: string): RateVerdict {
  // An IPv6 client counts by its /64, as for every per-origin limit (one host holds a /64).
  const origin = originSubject(address);
  const st = stateOf(deps.kv);
  st.clock = deps.clock;
  const rule = RULES.heartbeat;
  const now = deps.clock.now();
  const windowEnd = (Math.floor(now / rule.windowMs) + 1) * rule.windowMs;
  if (windowEnd !== st.rateWindow) {
    // This window's slots become the previous window's (an older window's weigh nothing).
    st.ratePrevious = st.rateWindow === windowEnd - rule.windowMs ? st.rate : new Map();
    st.rateWindow = windowEnd;
    st.rate = new Map();
  }
  let slot = st.rate.get(origin);
  if (!slot) {
    // The keys of kv/store/rate_limit.ts (same subject), so the sweep job and other tools agree.
    const { key, previous } = rateKey(rule, `${rule.name}:${origin}`, now);
    const hash = key[3] as string;
    const fresh: RateSlot = {
      count: 0,
      previous: st.ratePrevious.get(origin)?.count ?? 0,
      key,
      id: `${windowEnd}/${hash}`,
    };
    slot = fresh;
    if (st.rate.size >= RATE_SLOTS_MAX) st.rate.clear();
    st.rate.set(origin, fresh);
    // What was counted before (another process, or this one before a restart) is added when
    // the read returns; the ping does not wait for it. The read goes to KV ahead of this
    // ping's own count, so it never includes it; the previous window's KV count holds this
    // process's once written, so the larger of the two is taken.
    deps.kv.getMany<[Deno.KvU64, Deno.KvU64]>([key, previous]).then(([seen, before]) => {
      fresh.count += Number(seen.value?.value ?? 0n);
      fresh.previous = Math.max(fresh.previous, Number(before.value?.value ?? 0n));
    }, () => {});
  }
  if (heldUses(rule, now, windowEnd, slot.previous, slot.count) >= rule.max) {
    return {
      ok: false,
      retryAfter: judge(rule, now, windowEnd, slot.previous, slot.count).retryAfter,
    };
  }
  slot.count++;
  const sum = st.sums.get(slot.id);
  if (sum) sum.n++;
  else st.sums.set(slot.id, { key: slot.key, n: 1n });
  return { ok: true };
}

/**
 * The hook of a key, from the cache or KV; null when there is none. A shared slug's entry is
 * not kept: its pings are refused, and the entry changes when the slugs do.
 */
async function lookup(kv: Deno.Kv, st: HookState, hash: string): Promise<Cached | null> {
  const hit = st.cache.get(hash);
  if (hit) return hit;
  const entry = await kv.get<HookRef>(hookKey(hash));
  if (!entry.value) return null;
  const found = { ref: entry.value, stamp: entry.versionstamp };
  if (found.ref.all) return found;
  if (st.cache.size >= CACHE_MAX) st.cache.clear();
  // A concurrent lookup may have stored a newer entry meanwhile; keep the newest.
  const now = st.cache.get(hash);
  if (!now || now.stamp < found.stamp) st.cache.set(hash, found);
  return found;
}

/**
 * What a ping to a POST-only service by another method does: refused (this service's own hook
 * addresses) or recorded as an ignored ping that changes nothing (Healthchecks' and Uptime
 * Kuma's addresses, as Healthchecks does).
 */
type OtherMethods = "refuse" | "ignore";

/** A recorded signal, or why none was: no such key, a shared slug, a POST-only service. */
export type BeatOutcome =
  | { ref: HookRef; at: number; ignored: boolean }
  | "unknown"
  | "ambiguous"
  | "post only";

/**
 * Records one heartbeat by its key; resolves once it is durable, with the hook's service.
 * Status text is already cut to its limit by the caller.
 */
export function beat(
  deps: Deps,
  key: string,
  status: string,
  signal: Signal = SUCCESS_SIGNAL,
  method = "POST",
  resume?: Resume,
): Promise<BeatOutcome> {
  if (!HOOK_KEY_RE.test(key)) {
    flushSoon(deps.kv);
    return Promise.resolve("unknown");
  }
  return beatByHash(deps, sha256hex(key), status, signal, method, "refuse", resume);
}

/**
 * Resumes the paused service of a hook whose next end resumes it (`HookRef.resume`), before
 * the ping is recorded; true when it did. The callers pass kv/service/commands.ts `resumeByPing`,
 * loaded only when needed (this module cannot import it: services.ts imports this one).
 */
export type Resume = (ref: HookRef) => Promise<boolean>;

/**
 * Records one heartbeat by the hash of a key to its service (a hook key, a check's UUID, a
 * ping key and slug, a push token: `codeHash`, `slugHash`, `pushHash`), through the same
 * cache and group commit as every ping.
 */
export async function beatByHash(
  deps: Deps,
  hash: string,
  status: string,
  signal: Signal,
  method: string,
  otherMethods: OtherMethods,
  resume?: Resume,
): Promise<BeatOutcome> {
  const st = stateOf(deps.kv);
  const hook = st.cache.get(hash) ?? await lookup(deps.kv, st, hash);
  if (!hook) {
    flushSoon(deps.kv);
    return "unknown";
  }
  if (hook.ref.all) return "ambiguous";
  let ignored = false;
  if (hook.ref.post && method !== "POST") {
    if (otherMethods === "refuse") return "post only";
    ignored = true;
    status = `ignored: a ${method} request (this service takes POST only)`;
    signal = { ...signal, kind: "log", code: null };
  }
  if (resume && hook.ref.resume && (signal.kind === "success" || signal.kind === "fail")) {
    if (await resume(hook.ref)) return beatByHash(deps, hash, status, signal, method, otherMethods);
  }
  const at = deps.clock.now();
  const ref = await new Promise<HookRef | null | "ambiguous">((resolve, reject) => {
    st.queue.push({ hook, hash, beat: { at, status }, signal, method, resolve, reject });
    flushSoon(deps.kv);
  });
  if (ref === "ambiguous") return ref;
  return ref ? { ref, at, ignored } : "unknown";
}

/**
 * Resolves once every beat and rate count waiting in this process is committed (or its commit
 * failed and its ping was answered so): the server calls it on SIGTERM before closing KV.
 */
export async function flushBeats(kv: Deno.Kv, maxMs = 5_000): Promise<void> {
  const st = states.get(kv);
  const until = performance.now() + maxMs;
  if (st) st.ratesNow = true;
  while (st && (st.committing || st.queue.length > 0 || st.sums.size > 0)) {
    if (performance.now() > until) return;
    flushSoon(kv);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Whether the counts waiting in process go with the next batch: when flushed, or RATE_WRITE_MS
 * after the last, or at once should the clock have been set back since.
 */
const ratesDue = (st: HookState) => {
  if (st.sums.size === 0) return false;
  const since = st.clock.now() - st.ratesWritten;
  return st.ratesNow || since >= RATE_WRITE_MS || since < 0;
};

/** Whether a commit has anything to write: pings, or counts that are due. */
const workWaiting = (st: HookState) => st.queue.length > 0 || ratesDue(st);

/** Starts a commit unless one is under way; that one's loop takes what queued meanwhile. */
function flushSoon(kv: Deno.Kv) {
  const st = stateOf(kv);
  if (st.committing) return;
  st.committing = true;
  queueMicrotask(() => {
    drain(kv, st).finally(() => {
      st.committing = false;
      if (workWaiting(st)) flushSoon(kv);
    });
  });
}

/**
 * Takes the next batch off the queue: at most MAX_BATCH pings, and no more checks, writes and
 * bytes than an atomic takes.
 */
function takeBatch(st: HookState): QueuedPing[] {
  // By hook: the signal kinds seen, one bit each (their writes are made once per hook).
  const kinds = new Map<string, number>();
  // The hooks whose run a success ends by its id (their pulse is read and checked).
  const runEnds = new Set<string>();
  let n = 0;
  let bytes = 0;
  let writes = 0;
  let checks = 0;
  for (; n < st.queue.length && n < MAX_BATCH; n++) {
    const p = st.queue[n];
    // An event's value: its body (UTF-16 length bounds its UTF-8 bytes by 3x) and fields.
    bytes += p.signal.body.length * 3 + p.beat.status.length * 3 + 200;
    if (n > 0 && bytes > MAX_BATCH_BYTES) break;
    const seen = kinds.get(p.hash);
    const endsRun = p.signal.kind === "success" && p.signal.rid !== null && !runEnds.has(p.hash);
    const moreChecks = (seen === undefined ? 1 : 0) + (endsRun ? RUN_END_CHECKS : 0);
    if (checks + moreChecks > MAX_CHECKS) break;
    checks += moreChecks;
    if (endsRun) runEnds.add(p.hash);
    const bit = 1 << KINDS.indexOf(p.signal.kind);
    // The event; the kind's writes the first time; a flood's nudge once per hook.
    const kindWrites = KIND_WRITES[p.signal.kind] + (p.signal.kind === "success" ? LOOK_WRITES : 0);
    const more = 1 + ((seen ?? 0) & bit ? 0 : kindWrites) + (seen === undefined ? 1 : 0) +
      (endsRun ? RUN_END_WRITES : 0);
    if (writes + more > MAX_MUTATIONS) break;
    writes += more;
    kinds.set(p.hash, (seen ?? 0) | bit);
  }
  return st.queue.splice(0, n);
}

/**
 * Takes at most `room` of the counts waiting in process, oldest first; once none is left
 * behind, the next ones wait RATE_WRITE_MS.
 */
function takeSums(st: HookState, room: number): [id: string, sum: RateSum][] {
  const taken: [string, RateSum][] = [];
  for (const entry of st.sums) {
    if (taken.length >= room) break;
    taken.push(entry);
    st.sums.delete(entry[0]);
  }
  if (st.sums.size === 0) {
    st.ratesWritten = st.clock.now();
    st.ratesNow = false;
  }
  return taken;
}

/**
 * Counts a batch had no room for wait for the next one, added to those counted since; they
 * were due, so they go with it whatever its time.
 */
function putBack(st: HookState, left: [id: string, sum: RateSum][]): void {
  for (const [id, sum] of left) {
    const since = st.sums.get(id);
    if (since) since.n += sum.n;
    else st.sums.set(id, sum);
  }
  if (left.length > 0) st.ratesNow = true;
}

/**
 * An event's nonce: unique within a millisecond and process (a random high part per process,
 * then a count), so two events of one millisecond list in the order they came. A number, as
 * short in the key as a nonce can be.
 */
let nonce = 0;
const processBase = (crypto.getRandomValues(new Uint32Array(1))[0] >>> 11) * 2 ** 32;
const eventNonce = () => processBase + (nonce++ % 2 ** 32);

/**
 * An event as stored: the fields that differ from their usual value only (every ping writes
 * one, and a smaller value is less for KV to write); `at` is in the key. `shownEvent` reads it.
 */
type StoredEvent = Partial<HookEvent> & { kind: SignalKind };

function storedEvent(signal: Signal, status: string, method: string): StoredEvent {
  const e: StoredEvent = { kind: signal.kind, method };
  if (signal.code !== null) e.code = signal.code;
  if (signal.rid !== null) e.rid = signal.rid;
  if (signal.body !== "") e.body = signal.body;
  if (signal.origin !== "") e.origin = signal.origin;
  if (signal.ms != null) e.ms = signal.ms;
  if (status !== "") e.status = status;
  return e;
}

/** A stored event whole again (events written whole before are read the same). */
function shownEvent(key: Deno.KvKey, e: StoredEvent): HookEvent {
  return {
    kind: e.kind,
    code: e.code ?? null,
    rid: e.rid ?? null,
    body: e.body ?? "",
    origin: e.origin ?? "",
    at: e.at ?? (key[3] as number),
    status: e.status ?? "",
    ms: e.ms ?? null,
    method: e.method ?? "",
  };
}

async function drain(kv: Deno.Kv, st: HookState): Promise<void> {
  while (workWaiting(st)) {
    const batch = takeBatch(st);
    try {
      await commitBatch(kv, st, batch);
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}

async function commitBatch(
  kv: Deno.Kv,
  st: HookState,
  batch: QueuedPing[],
): Promise<void> {
  let live = batch;
  // The counts due, taken by the first attempt; a failed commit loses them (the limit itself
  // counts in process).
  let sums: [id: string, sum: RateSum][] | null = null;
  const started = Date.now();
  for (let attempt = 0;; attempt++) {
    const op = atomic(kv);
    // One check per hook; per service and signal kind the last of the batch wins; every
    // signal is an event.
    const checked = new Map<string, Cached>();
    // By service id (unique across accounts) and the signal kind's place in KINDS.
    const last = new Map<number, QueuedPing>();
    for (const p of live) {
      checked.set(p.hash, p.hook);
      last.set(p.hook.ref.id * 4 + KINDS.indexOf(p.signal.kind), p);
    }
    for (const [hash, h] of checked) op.check({ key: hookKey(hash), versionstamp: h.stamp });
    const paired = await pairRuns(kv, op, live);
    for (const p of last.values()) {
      const { account, id, grace } = p.hook.ref;
      const at = p.beat.at;
      const kind = p.signal.kind;
      if (kind === "success") {
        op.set(beatKey(account, id), p.signal.rid ? { ...p.beat, rid: p.signal.rid } : p.beat);
      } else if (kind === "start") {
        if (!paired.has(id)) {
          op.set(startKey(account, id), { at, rid: p.signal.rid } satisfies Start);
        }
        // A look the millisecond the run's grace ends, woken then through the queue.
        const end = Math.ceil(at + (grace ?? 60) * MINUTE) + 1;
        addEarlyDue(op, end, id, account);
        queueLook(op, { account, id, due: end }, end - at);
      } else if (kind === "fail") op.set(failKey(account, id), p.beat);
      if (kind === "fail" || (kind === "success" && p.hook.ref.look)) {
        const due = Math.floor(at / MINUTE) * MINUTE;
        addEarlyDue(op, due, id, account);
        // A failure, or a success that changes the state, is known now: the look it asks
        // for runs within seconds, not at the next minute (jobs/queue.ts); the nudge stays
        // for the runner should it not.
        queueLook(op, { account, id, due });
      }
    }
    for (const p of live) {
      const { account, id } = p.hook.ref;
      op.set(
        eventKey(account, id, p.beat.at, eventNonce()),
        storedEvent(p.signal, p.beat.status, p.method),
      );
    }
    const counted = nudgeFloods(op, st, live);
    // The counts take the room the pings left, counted on the atomic itself; a later attempt
    // may have less (a hook read again may now ask for a look), and the rest wait.
    const room = Math.max(0, MAX_MUTATIONS - mutationCount(op));
    sums ??= ratesDue(st) ? takeSums(st, room) : [];
    for (const [, s] of sums.slice(0, room)) addUses(op, s.key, s.n);
    const res = await commit(op);
    if (res.ok) {
      putBack(st, sums.slice(room));
      for (const p of live) p.resolve(p.hook.ref);
      if (st.written.size >= CACHE_MAX) st.written.clear();
      for (const [id, n] of counted) st.written.set(id, Math.max(0, n));
      return;
    }
    // One of these hooks changed somewhere since it was read: read them again.
    if (Date.now() - started > TRANSACT_BUDGET_MS) {
      atomicStats.gaveUp++;
      throw new ConflictError();
    }
    atomicStats.retries++;
    live = await revalidate(kv, st, live, [...checked.keys()]);
    if (attempt > 2) await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
  }
}

/**
 * Runs ended by a success with a run id, paired as Healthchecks pairs them (its `Check.ping`):
 * a start opens the run of its id (the one open run), a failure or a success without an id
 * ends it, a success ends it only if its id is the run's. A success without an id and a
 * failure need no read (`openRun` pairs them by time); a success with one reads the service's
 * pulse in this atomic (checked) and writes its start again, `ended` when a signal ended it.
 * Answers the services whose start it wrote.
 */
const pulseOf = (beat: Deno.KvEntryMaybe<BeatSignal>, failed: Deno.KvEntryMaybe<BeatSignal>) => ({
  beat: beat.value,
  failed: failed.value,
});

async function pairRuns(kv: Deno.Kv, op: Atomic, live: QueuedPing[]): Promise<Set<number>> {
  const done = new Set<number>();
  const withRid = live.filter((p) => p.signal.kind === "success" && p.signal.rid !== null);
  if (withRid.length === 0) return done;
  const services = [...new Map(withRid.map((p) => [p.hook.ref.id, p.hook.ref.account]))];
  // Read together; each entry is checked, so reads of different moments fail the commit.
  const pulses = await getManyEntries<BeatSignal & Start>(
    kv,
    services.flatMap(([id, account]) => [
      beatKey(account, id),
      startKey(account, id),
      failKey(account, id),
    ]),
  );
  for (const [i, [id, account]] of services.entries()) {
    const [beat, start, failed] = pulses.slice(i * 3, i * 3 + 3) as [
      Deno.KvEntryMaybe<BeatSignal>,
      Deno.KvEntryMaybe<Start>,
      Deno.KvEntryMaybe<BeatSignal>,
    ];
    op.check(beat, start, failed);
    let run = start.value;
    let changed = false;
    if (run && run.ended === undefined && !openRun({ ...pulseOf(beat, failed), start: run })) {
      // Ended by time (a plain success or a failure since): said so before this batch's
      // success with an id takes the last success's place.
      run = { ...run, ended: Math.max(beat.value?.at ?? 0, failed.value?.at ?? 0) };
      changed = true;
    }
    for (const p of live) {
      if (p.hook.ref.id !== id) continue;
      const { kind, rid } = p.signal;
      const ends = kind === "fail" || (kind === "success" && (!rid || rid === run?.rid));
      if (kind === "start") run = { at: p.beat.at, rid };
      else if (run && run.ended === undefined && ends) run = { ...run, ended: p.beat.at };
      else continue;
      changed = true;
    }
    if (changed && run) {
      op.set(startKey(account, id), run);
      done.add(id);
    }
  }
  return done;
}

/**
 * Reads the batch's hooks again. Pings whose hook is gone or now belongs to another service
 * are answered "unknown key"; the others carry the fresh entry.
 */
async function revalidate(
  kv: Deno.Kv,
  st: HookState,
  pending: QueuedPing[],
  hashes: string[],
): Promise<QueuedPing[]> {
  const fresh = new Map<string, Cached | null>();
  const got = await getManyEntries<HookRef>(kv, hashes.map(hookKey));
  for (const [j, e] of got.entries()) {
    st.cache.delete(hashes[j]);
    fresh.set(hashes[j], e.value ? { ref: e.value, stamp: e.versionstamp } : null);
  }
  const live: QueuedPing[] = [];
  for (const p of pending) {
    const h = fresh.get(p.hash);
    const same = h && !h.ref.all && h.ref.account === p.hook.ref.account &&
      h.ref.id === p.hook.ref.id;
    if (same) {
      p.hook = h!;
      live.push(p);
    } else p.resolve(h?.ref.all ? "ambiguous" : null);
  }
  return live;
}

/**
 * The events each service of the batch writes, added to what it wrote in this process; a
 * service that reaches NUDGE_EVERY gets a nudge for this minute in the batch, so the runner
 * looks and trims its events. Answers the counts to keep once the batch commits (-1 for a
 * nudged service: it starts again from 0).
 */
function nudgeFloods(op: Atomic, st: HookState, live: QueuedPing[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const p of live) {
    const { account, id } = p.hook.ref;
    const before = counts.get(id) ?? st.written.get(id) ?? 0;
    if (before < 0) continue;
    if (before + 1 >= NUDGE_EVERY) {
      // A millisecond past the minute: never the entry a failure's queued look claims (the
      // minute itself), so the runner's look, which trims, takes this one.
      addEarlyDue(op, Math.floor(p.beat.at / MINUTE) * MINUTE + 1, id, account);
      counts.set(id, -1);
    } else counts.set(id, before + 1);
  }
  return counts;
}

/** Deletes all but the newest EVENTS_KEPT events of a service. */
export async function trimEvents(kv: Deno.Kv, account: number, id: number): Promise<void> {
  const old: Deno.KvKey[] = [];
  let n = 0;
  for await (
    const e of kv.list({ prefix: eventPrefix(account, id) }, { reverse: true })
  ) {
    if (++n > EVENTS_KEPT) old.push(e.key);
  }
  await deleteKeys(kv, old);
}

/** The newest events of a service (at most EVENTS_KEPT), newest first. */
export async function listEvents(
  kv: Deno.Kv,
  account: number,
  id: number,
): Promise<(HookEvent & { ref: string })[]> {
  const out: (HookEvent & { ref: string })[] = [];
  const iter = kv.list<StoredEvent>({ prefix: eventPrefix(account, id) }, {
    reverse: true,
    limit: EVENTS_KEPT,
  });
  for await (const e of iter) out.push({ ...shownEvent(e.key, e.value), ref: String(e.key[4]) });
  return out;
}

/** Removes a service's events (deletion, erasure). */
export async function eraseEvents(kv: Deno.Kv, account: number, id: number): Promise<void> {
  await deleteKeys(kv, keysOf(kv, { prefix: eventPrefix(account, id) }));
}

/** A service's pulse (last success, start, failure); null parts when none. */
export async function getPulse(kv: Deno.Kv, account: number, id: number): Promise<Pulse> {
  const [beat, start, failed] = await kv.getMany<[BeatSignal, Start, BeatSignal]>([
    beatKey(account, id),
    startKey(account, id),
    failKey(account, id),
  ]);
  return { beat: beat.value, start: start.value, failed: failed.value };
}

/** The pulses of an account's heartbeats, by service id. */
export async function listPulses(kv: Deno.Kv, account: number): Promise<Map<number, Pulse>> {
  const out = new Map<number, Pulse>();
  const get = (id: number) => {
    let p = out.get(id);
    if (!p) out.set(id, p = { beat: null, start: null, failed: null });
    return p;
  };
  for await (const e of kv.list<BeatSignal>({ prefix: ["beats", account] })) {
    get(e.key[2] as number).beat = e.value;
  }
  for await (const e of kv.list<Start>({ prefix: ["beat_starts", account] })) {
    get(e.key[2] as number).start = e.value;
  }
  for await (const e of kv.list<BeatSignal>({ prefix: ["beat_fails", account] })) {
    get(e.key[2] as number).failed = e.value;
  }
  return out;
}

/** The answer of a ping. */
export const pingAnswer = (ref: HookRef, at: number) => ({
  ok: true as const,
  service: ref.name,
  received: iso(at),
});
