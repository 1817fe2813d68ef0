import { iso } from "../lib/clock.ts";
import { sha256hex } from "../lib/crypto.ts";
import { originSubject } from "../lib/ip.ts";
import type { Deps } from "../lib/deps.ts";
import { count } from "../lib/metrics.ts";
import { ConflictError } from "./_atomic.ts";
import { RULES } from "./rate_limit.ts";

/**
 * Heartbeat hooks, the hottest path of the service. Key layout:
 *   ["hooks", key_hash]             -> HookRef {account, id, name}; only the key's hash is kept
 *   ["hooks_gen"]                   -> KvU64, bumped by every change that can stop or rename a
 *                                      hook (create, rotate, rename, delete, erasure)
 *   ["beats", account_id, service]  -> Beat {at, status}, the last heartbeat
 *   ["rate", window_end, "heartbeat", address_hash] -> KvU64 (layout of kv/rate_limit.ts)
 *
 * A ping is one lookup and one write, and it is answered only once the write is durable.
 * Two things keep that cheap:
 * - Group commit: pings that arrive while a commit is under way wait for the next one, so
 *   one atomic (one fsync) carries many beats; each ping awaits its batch's commit.
 * - The lookup is an in-process cache of key hash -> HookRef, tagged with the `hooks_gen`
 *   entry it was read under. Every batch checks that entry, so a rotation or deletion made
 *   by any process fails the batch; the cache is then dropped and each ping of the batch is
 *   looked up again before it is retried. The old key therefore stops at once everywhere.
 * The heartbeat rate limit counts per address in process (seeded from KV once per window
 * and address) and adds its counts to KV in the same batch. With several server processes
 * each seeds from KV when it first sees an address, so the limit may be passed by what
 * other processes counted after that (documented in docs/api.md).
 */

export interface HookRef {
  account: number;
  id: number;
  name: string;
}

export interface Beat {
  at: number;
  status: string;
}

export const hookKey = (hash: string) => ["hooks", hash] as const;
export const beatKey = (account: number, id: number) => ["beats", account, id] as const;
export const GEN_KEY = ["hooks_gen"] as const;

/** Keys are 32 random bytes in base64url (256 bits). */
export const HOOK_KEY_RE = /^[A-Za-z0-9_-]{43}$/;
/** Beats per atomic: 2 mutations each at most, well under the 1000-mutation limit. */
const MAX_BATCH = 400;
const CACHE_MAX = 100_000;

interface Pending {
  ref: HookRef;
  /** The `hooks_gen` versionstamp under which `ref` was read. */
  stamp: string;
  hash: string;
  beat: Beat;
  resolve: (ref: HookRef | null) => void;
  reject: (err: unknown) => void;
}

interface HookState {
  gen: Deno.KvEntryMaybe<Deno.KvU64> | null;
  cache: Map<string, HookRef>;
  queue: Pending[];
  committing: boolean;
  rateWindow: number;
  rate: Map<string, { count: number; key: Deno.KvKey; id: string }>;
  sums: Map<string, { key: Deno.KvKey; n: bigint }>;
}

const states = new WeakMap<Deno.Kv, HookState>();

function stateOf(kv: Deno.Kv): HookState {
  let st = states.get(kv);
  if (!st) {
    st = {
      gen: null,
      cache: new Map(),
      queue: [],
      committing: false,
      rateWindow: 0,
      rate: new Map(),
      sums: new Map(),
    };
    states.set(kv, st);
  }
  return st;
}

/** Adds the generation bump to an atomic that creates, rotates, renames or removes hooks. */
export function bumpHooks(op: Deno.AtomicOperation): Deno.AtomicOperation {
  return op.sum(GEN_KEY, 1n);
}

/** Drops this process's cache at once (other processes notice through `hooks_gen`). */
export function forgetHooks(kv: Deno.Kv): void {
  const st = states.get(kv);
  if (st) {
    st.cache.clear();
    st.gen = null;
  }
}

export type RateVerdict = { ok: true } | { ok: false; retryAfter: number };

/** Counts one heartbeat call from an address (SPEC.md section 8: 600 an hour). */
export async function countHeartbeat(deps: Deps, address: string): Promise<RateVerdict> {
  // An IPv6 client counts by its /64, as for every per-origin limit (one host holds a /64).
  const origin = originSubject(address);
  const st = stateOf(deps.kv);
  const rule = RULES.heartbeat;
  const now = deps.clock.now();
  const windowEnd = (Math.floor(now / rule.windowMs) + 1) * rule.windowMs;
  if (windowEnd !== st.rateWindow) {
    st.rateWindow = windowEnd;
    st.rate.clear();
  }
  let slot = st.rate.get(origin);
  if (!slot) {
    // Same subject and key as kv/rate_limit.ts, so the sweep job and other tools agree.
    const hash = sha256hex(`${rule.name}:${origin}`).slice(0, 32);
    const key = ["rate", windowEnd, rule.name, hash];
    const seen = await deps.kv.get<Deno.KvU64>(key);
    slot = st.rate.get(origin) ??
      { count: Number(seen.value?.value ?? 0n), key, id: `${windowEnd}/${hash}` };
    st.rate.set(origin, slot);
  }
  if (slot.count >= rule.max) {
    return { ok: false, retryAfter: Math.max(1, Math.ceil((windowEnd - now) / 1000)) };
  }
  slot.count++;
  const sum = st.sums.get(slot.id);
  if (sum) sum.n++;
  else st.sums.set(slot.id, { key: slot.key, n: 1n });
  return { ok: true };
}

const stampOf = (e: Deno.KvEntryMaybe<unknown> | null) => e?.versionstamp ?? "";

/**
 * The hook of a key, from the cache or KV, with the `hooks_gen` stamp it is valid under;
 * null when there is none.
 */
async function lookup(
  kv: Deno.Kv,
  st: HookState,
  hash: string,
): Promise<{ ref: HookRef; stamp: string } | null> {
  const hit = st.gen && st.cache.get(hash);
  if (hit) return { ref: hit, stamp: stampOf(st.gen) };
  const [hook, gen] = await kv.getMany<[HookRef, Deno.KvU64]>([hookKey(hash), GEN_KEY]);
  const current = !st.gen || stampOf(gen) >= stampOf(st.gen);
  if (current && (!st.gen || stampOf(gen) !== stampOf(st.gen))) {
    st.cache.clear();
    st.gen = gen;
  }
  if (!hook.value) return null;
  if (current) {
    if (st.cache.size >= CACHE_MAX) st.cache.clear();
    st.cache.set(hash, hook.value);
  }
  return { ref: hook.value, stamp: stampOf(gen) };
}

/**
 * Records one heartbeat; resolves once it is durable, with the hook's service, or null for
 * an unknown key. Status text is already cut to its limit by the caller.
 */
export async function beat(
  deps: Deps,
  key: string,
  status: string,
): Promise<{ ref: HookRef; at: number } | null> {
  if (!HOOK_KEY_RE.test(key)) {
    flushSoon(deps.kv);
    return null;
  }
  const st = stateOf(deps.kv);
  const hash = sha256hex(key);
  const found = await lookup(deps.kv, st, hash);
  if (!found) {
    flushSoon(deps.kv);
    return null;
  }
  const at = deps.clock.now();
  const ref = await new Promise<HookRef | null>((resolve, reject) => {
    const { ref, stamp } = found;
    st.queue.push({ ref, stamp, hash, beat: { at, status }, resolve, reject });
    flushSoon(deps.kv);
  });
  return ref ? { ref, at } : null;
}

/**
 * Resolves once every beat and rate count waiting in this process is committed (or its commit
 * failed and its ping was answered so): the server calls it on SIGTERM before closing KV.
 */
export async function flushBeats(kv: Deno.Kv, maxMs = 5_000): Promise<void> {
  const st = states.get(kv);
  const until = performance.now() + maxMs;
  while (st && (st.committing || st.queue.length > 0 || st.sums.size > 0)) {
    if (performance.now() > until) return;
    flushSoon(kv);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Starts a commit unless one is under way; that one's loop takes what queued meanwhile. */
function flushSoon(kv: Deno.Kv) {
  const st = stateOf(kv);
  if (st.committing) return;
  st.committing = true;
  queueMicrotask(() => {
    drain(kv, st).finally(() => {
      st.committing = false;
      if (st.queue.length > 0 || st.sums.size > 0) flushSoon(kv);
    });
  });
}

async function drain(kv: Deno.Kv, st: HookState): Promise<void> {
  while (st.queue.length > 0 || st.sums.size > 0) {
    const batch = st.queue.splice(0, MAX_BATCH);
    const sums = [...st.sums.values()];
    st.sums.clear();
    try {
      await commitBatch(kv, st, batch, sums);
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}

async function commitBatch(
  kv: Deno.Kv,
  st: HookState,
  batch: Pending[],
  sums: { key: Deno.KvKey; n: bigint }[],
): Promise<void> {
  let live = batch;
  for (let attempt = 0; attempt < 20; attempt++) {
    const op = kv.atomic();
    if (live.length > 0) {
      const found = await revalidate(kv, st, live);
      live = found.live;
      op.check(found.gen);
    }
    // One write per service: the last beat of the batch wins.
    const last = new Map<string, Pending>();
    for (const p of live) last.set(`${p.ref.account}/${p.ref.id}`, p);
    for (const p of last.values()) op.set(beatKey(p.ref.account, p.ref.id), p.beat);
    for (const s of sums) op.sum(s.key, s.n);
    const res = await op.commit();
    if (res.ok) {
      for (const p of live) p.resolve(p.ref);
      return;
    }
    // A hook changed somewhere since: drop the cache; every ping is looked up again.
    count("catalogue_kv_commit_retries_total");
    st.cache.clear();
    st.gen = null;
  }
  throw new ConflictError();
}

/**
 * Makes every ping of a batch valid under one `hooks_gen` entry, looking up again those
 * read under another; pings whose hook is gone are answered "unknown key".
 */
async function revalidate(
  kv: Deno.Kv,
  st: HookState,
  pending: Pending[],
): Promise<{ live: Pending[]; gen: Deno.KvEntryMaybe<Deno.KvU64> }> {
  let left = pending;
  for (;;) {
    const gen = st.gen ?? await kv.get<Deno.KvU64>(GEN_KEY);
    if (!st.gen || stampOf(gen) > stampOf(st.gen)) st.gen = gen;
    const stamp = stampOf(gen);
    const live: Pending[] = [];
    let moved = false;
    for (const p of left) {
      if (p.stamp === stamp) {
        live.push(p);
        continue;
      }
      const [hook, g] = await kv.getMany<[HookRef, Deno.KvU64]>([hookKey(p.hash), GEN_KEY]);
      if (stampOf(g) !== stamp) {
        st.cache.clear();
        st.gen = g;
        moved = true;
        break;
      }
      const ref = hook.value;
      if (ref && ref.account === p.ref.account && ref.id === p.ref.id) {
        p.ref = ref;
        p.stamp = stamp;
        live.push(p);
      } else {
        p.resolve(null);
        p.stamp = "gone";
      }
    }
    if (!moved) return { live, gen };
    left = left.filter((p) => p.stamp !== "gone");
  }
}

/** The answer of a ping. */
export const pingAnswer = (ref: HookRef, at: number) => ({
  ok: true as const,
  service: ref.name,
  received: iso(at),
});
