import { HOUR } from "../lib/clock.ts";
import { sha256hex } from "../lib/crypto.ts";
import { limited } from "../lib/errors.ts";
import { type Atomic, atomic, commit, deleteKeys, keysOf, transact } from "./_atomic.ts";

/**
 * Fixed-window rate limits, one mechanism for every limit of SPEC.md section 8. Key layout:
 *   ["rate", window_end_ms, rule, subject_hash] -> Deno.KvU64 count
 * The window is in the key (KV `sum` takes no expireIn), so the sweep job deletes whole
 * past windows by range. Subjects (addresses, origins, account ids) are hashed: no address
 * sits in a key.
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
  // Not in SPEC.md: invitations mail strangers, so they are bounded like link requests.
  invite: hourly("invite", 20),
  // Not in SPEC.md: following a status page mails a confirmation link to the address given,
  // and each incident note mails every follower.
  followByAddress: hourly("follow_address", 3),
  followByOrigin: hourly("follow_origin", 5),
  notes: hourly("status_notes", 20),
  // Not in SPEC.md: sign-ins through a provider or a passkey, bounded like link requests but
  // higher, since no mail is sent: starts per client network, sign-ins per address.
  providerByOrigin: hourly("provider_origin", 30),
  providerByAddress: hourly("provider_address", 20),
  passkeyByOrigin: hourly("passkey_origin", 60),
  // Each sign-in page a browser with passkeys opens asks for options once (its autofill).
  passkeyOptions: hourly("passkey_options", 600),
} as const satisfies Record<string, Rule>;

export interface Verdict {
  ok: boolean;
  count: number;
  /** Seconds until the window ends (for Retry-After). */
  retryAfter: number;
}

/** The counter key of `subject` under `rule` at `now`, and seconds until its window ends. */
export function rateKey(rule: Rule, subject: string, now: number) {
  const windowEnd = (Math.floor(now / rule.windowMs) + 1) * rule.windowMs;
  const retryAfter = Math.max(1, Math.ceil((windowEnd - now) / 1000));
  const key = ["rate", windowEnd, rule.name, sha256hex(subject).slice(0, 32)];
  return { key, retryAfter };
}

/** Counts one use of `rule` by `subject`; refused uses are not counted. */
export async function countSubjectUse(
  kv: Deno.Kv,
  rule: Rule,
  subject: string,
  now: number,
): Promise<Verdict> {
  const { key, retryAfter } = await rateKey(rule, subject, now);
  return await transact<Verdict>(async () => {
    const entry = await kv.get<Deno.KvU64>(key);
    const count = Number(entry.value?.value ?? 0n);
    if (count >= rule.max) return { op: null, result: { ok: false, count, retryAfter } };
    return { op: countInto(atomic(kv), entry), result: { ok: true, count: count + 1, retryAfter } };
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
  const { key, retryAfter } = rateKey(rule, subject, now);
  const entry = await kv.get<Deno.KvU64>(key);
  if (Number(entry.value?.value ?? 0n) >= rule.max) {
    limited(`too many requests: at most ${rule.max} an hour; try again later`, retryAfter, {
      retry_after: retryAfter,
    });
  }
  return { apply: (op: Atomic) => countInto(op, entry) };
}

/**
 * Adds one use to a counter the caller read (at `rateKey(...).key`), checked unchanged: the
 * mutator of a write elsewhere that counts itself in its own atomic (kv/points.ts).
 */
export function countInto(op: Atomic, counter: Deno.KvEntryMaybe<Deno.KvU64>): Atomic {
  return op.check(counter).sum(counter.key, 1n);
}

/**
 * Adds `n` uses to the counter at `key` (a `rateKey`) unchecked: the heartbeat path counts in
 * memory and writes its sums with its ping batches (kv/hooks.ts).
 */
export function addUses(op: Atomic, key: Deno.KvKey, n: bigint): Atomic {
  return op.sum(key, n);
}

/** Deletes every counter whose window has ended. */
export async function sweepRateWindows(kv: Deno.Kv, now: number): Promise<number> {
  // No empty commit (deleteKeys makes none): it would still write to the KV file, every
  // minute, for nothing.
  return await deleteKeys(kv, keysOf(kv, { start: ["rate"], end: ["rate", now] }));
}

export interface HeldCounter {
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
