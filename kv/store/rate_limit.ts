import { HOUR } from "../../lib/clock.ts";
import { sha256hex } from "../../lib/crypto.ts";
import { limited } from "../../lib/errors.ts";
import { type Atomic, atomic, commit, deleteKeys, keysOf, transact } from "../_atomic.ts";

/**
 * Sliding-window rate limits, one mechanism for every limit of docs/api.md "Limits". Key layout:
 *   ["rate", window_end_ms, rule, subject_hash] -> Deno.KvU64 count
 * Uses are counted per fixed window (the window is in the key: KV `sum` takes no expireIn,
 * so the sweep job deletes whole past windows by range), but judged over the window that
 * ends now: this window's count plus the previous window's, weighted by the part of it still
 * inside the last `windowMs` and rounded up. A limit spent at a window's end therefore stays
 * spent after the edge and comes back one use every `windowMs / max`, as a token bucket
 * refills; no clock hour lets twice the limit through. Subjects (addresses, origins, account
 * ids) are hashed: no address sits in a key.
 */

export interface Rule {
  name: string;
  max: number;
  windowMs: number;
}

const hourly = (name: string, max: number): Rule => ({ name, max, windowMs: HOUR });

export const RULES = {
  linkByAddress: hourly("link_address", 5),
  linkByOrigin: hourly("link_origin", 5),
  journal: hourly("journal", 60),
  points: hourly("points", 120),
  search: hourly("search", 1200),
  manualCheck: hourly("manual_check", 60),
  heartbeat: hourly("heartbeat", 600),
  upload: hourly("upload", 60),
  proposalByAddress: hourly("proposal_address", 5),
  proposalByOrigin: hourly("proposal_origin", 5),
  // Not in the interface's own limits (docs/api.md "Limits"): invitations mail strangers, so they are bounded like link requests.
  invite: hourly("invite", 20),
  // Not in the interface's own limits (docs/api.md "Limits"): following a status page mails a confirmation link to the address given,
  // and each incident note mails every follower.
  followByAddress: hourly("follow_address", 3),
  followByOrigin: hourly("follow_origin", 5),
  notes: hourly("status_notes", 20),
  // Not in the interface's own limits (docs/api.md "Limits"): sign-ins through a provider or a passkey, bounded like link requests but
  // higher, since no mail is sent: starts per client network, sign-ins per address.
  providerByOrigin: hourly("provider_origin", 30),
  providerByAddress: hourly("provider_address", 20),
  passkeyByOrigin: hourly("passkey_origin", 60),
  // Each sign-in page a browser with passkeys opens asks for options once (its autofill).
  passkeyOptions: hourly("passkey_options", 600),
} as const satisfies Record<string, Rule>;

export interface RateVerdict {
  ok: boolean;
  count: number;
  /** Seconds until the window ends (for Retry-After). */
  retryAfter: number;
}

/**
 * The counter key of `subject` under `rule` at `now` (uses are added there), the previous
 * window's (read to judge), and the current window's end.
 */
export function rateKey(rule: Rule, subject: string, now: number) {
  const windowEnd = (Math.floor(now / rule.windowMs) + 1) * rule.windowMs;
  const hash = sha256hex(subject).slice(0, 32);
  const key = ["rate", windowEnd, rule.name, hash];
  const previous = ["rate", windowEnd - rule.windowMs, rule.name, hash];
  return { key, previous, windowEnd };
}

/**
 * Whether one more use passes at `now`, given the uses counted in the previous window and in
 * this one (which ends at `windowEnd`). `count` is the window's count with this use;
 * `retryAfter` is, for a refusal, the seconds until one more would pass with no other use
 * meanwhile, and otherwise the seconds until this window ends.
 */
export function judge(
  rule: Rule,
  now: number,
  windowEnd: number,
  previous: number,
  current: number,
): RateVerdict {
  const w = rule.windowMs;
  const held = heldUses(rule, now, windowEnd, previous, current);
  if (held < rule.max) {
    return {
      ok: true,
      count: held + 1,
      retryAfter: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
    };
  }
  // When the weighted share falls to what leaves room for one: within this window while its
  // own count leaves room, else in the next, where this window's count is the weighted one.
  const at = current < rule.max
    ? windowEnd - (rule.max - current - 1) * w / previous
    : windowEnd + w - (rule.max - 1) * w / current;
  return { ok: false, count: held, retryAfter: Math.max(1, Math.ceil((at - now) / 1000)) };
}

/**
 * The uses held against `rule` at `now`: this window's count and the previous window's
 * weighted by its part still inside the last `windowMs`, rounded up (a share of a use is
 * still a use).
 */
export function heldUses(
  rule: Rule,
  now: number,
  windowEnd: number,
  previous: number,
  current: number,
): number {
  // The tolerance keeps float noise (2.0000000001) from counting one use more.
  return current + Math.ceil(previous * (windowEnd - now) / rule.windowMs - 1e-9);
}

/** The two counters a use of `rule` by `subject` at `now` is judged by. */
async function readCounters(kv: Deno.Kv, rule: Rule, subject: string, now: number) {
  const { key, previous, windowEnd } = rateKey(rule, subject, now);
  const [entry, before] = await kv.getMany<[Deno.KvU64, Deno.KvU64]>([key, previous]);
  const verdict = judge(
    rule,
    now,
    windowEnd,
    Number(before.value?.value ?? 0n),
    Number(entry.value?.value ?? 0n),
  );
  return { entry, verdict };
}

/** Counts one use of `rule` by `subject`; refused uses are not counted. */
export async function countSubjectUse(
  kv: Deno.Kv,
  rule: Rule,
  subject: string,
  now: number,
): Promise<RateVerdict> {
  return await transact<RateVerdict>(async () => {
    const { entry, verdict } = await readCounters(kv, rule, subject, now);
    if (!verdict.ok) return { op: null, result: verdict };
    return { op: countInto(atomic(kv), entry), result: verdict };
  });
}

/**
 * Counts one use of `rule` by `who` (an account id, or an address already reduced by
 * lib/ip.ts `originSubject`): the subject every caller of a rule shares.
 */
export function countUse(kv: Deno.Kv, rule: Rule, who: string | number, now: number) {
  return countSubjectUse(kv, rule, `${rule.name}:${who}`, now);
}

/** Counts one use like `countUse`; past the limit throws `limited` (Retry-After, retry_after). */
export async function spendUse(kv: Deno.Kv, rule: Rule, who: string | number, now: number) {
  const v = await countUse(kv, rule, who, now);
  if (!v.ok) {
    limited(`too many requests: at most ${rule.max} an hour; try again later`, v.retryAfter, {
      retry_after: v.retryAfter,
    });
  }
}

/**
 * For a write that counts itself: reads the counter inside a `transact` attempt and throws
 * a `limited` domain error when it is full; `apply` adds the check and the count to the write's own
 * atomic, so a call is counted exactly when its write commits.
 */
export async function rateInto(kv: Deno.Kv, rule: Rule, subject: string, now: number) {
  const { entry, verdict } = await readCounters(kv, rule, subject, now);
  if (!verdict.ok) {
    limited(`too many requests: at most ${rule.max} an hour; try again later`, verdict.retryAfter, {
      retry_after: verdict.retryAfter,
    });
  }
  return { apply: (op: Atomic) => countInto(op, entry) };
}

/**
 * For a write that reads its own entries: the counter (at `rateKey(...).key`) and the one
 * before it (`previous`) as the caller read them, judged at `now` (kv/catalogue/points.ts).
 */
export function judgeRead(
  rule: Rule,
  now: number,
  counter: Deno.KvEntryMaybe<Deno.KvU64>,
  before: Deno.KvEntryMaybe<Deno.KvU64>,
): RateVerdict {
  const windowEnd = counter.key[1] as number;
  return judge(
    rule,
    now,
    windowEnd,
    Number(before.value?.value ?? 0n),
    Number(counter.value?.value ?? 0n),
  );
}

/**
 * Adds one use to a counter the caller read (at `rateKey(...).key`), checked unchanged: the
 * mutator of a write elsewhere that counts itself in its own atomic (kv/catalogue/points.ts).
 */
export function countInto(op: Atomic, counter: Deno.KvEntryMaybe<Deno.KvU64>): Atomic {
  return op.check(counter).sum(counter.key, 1n);
}

/**
 * Adds `n` uses to the counter at `key` (a `rateKey`) unchecked: the heartbeat path counts in
 * memory and writes its sums with its ping batches (kv/service/heartbeats.ts).
 */
export function addUses(op: Atomic, key: Deno.KvKey, n: bigint): Atomic {
  return op.sum(key, n);
}

/** The longest window of any rule: a counter is read for one window after its own ends. */
const LONGEST_WINDOW = HOUR;

/** Deletes every counter no use is judged by any more (its window ended a window ago). */
export async function sweepRateWindows(kv: Deno.Kv, now: number): Promise<number> {
  // No empty commit (deleteKeys makes none): it would still write to the KV file, every
  // minute, for nothing.
  return await deleteKeys(
    kv,
    keysOf(kv, { start: ["rate"], end: ["rate", now - LONGEST_WINDOW] }),
  );
}

interface HeldCounter {
  key: Deno.KvKey;
  rule: string;
  window_end: number;
  count: number;
}

/**
 * The counters of `rules` held for any of `who` (an account id, an address: the subject `countSubjectUse`
 * is given after the rule name) in the current window and the one before it (the sweep job
 * may not have run yet): for the data export and the erasure. Direct reads, no listing.
 */
export async function countersOf(
  kv: Deno.Kv,
  rules: Rule[],
  who: string[],
  now: number,
): Promise<HeldCounter[]> {
  const wanted: { key: Deno.KvKey; rule: string; window_end: number }[] = [];
  for (const rule of rules) {
    for (const at of [now, now - rule.windowMs]) {
      for (const w of who) {
        const { key } = rateKey(rule, `${rule.name}:${w}`, at);
        wanted.push({ key, rule: rule.name, window_end: key[1] as number });
      }
    }
  }
  const out: HeldCounter[] = [];
  for (let i = 0; i < wanted.length; i += 10) {
    const batch = wanted.slice(i, i + 10);
    const got = await kv.getMany<Deno.KvU64[]>(batch.map((w) => w.key));
    got.forEach((g, j) => {
      if (g.value) out.push({ ...batch[j], count: Number(g.value.value) });
    });
  }
  return out;
}

/** Deletes the counters `countersOf` finds for `who` (erasure). */
export async function dropCounters(
  kv: Deno.Kv,
  rules: Rule[],
  who: string[],
  now: number,
): Promise<void> {
  for (const c of await countersOf(kv, rules, who, now)) await commit(atomic(kv).delete(c.key));
}
