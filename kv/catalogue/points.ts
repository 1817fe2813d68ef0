import { atomic, commit, transact } from "../_atomic.ts";
import { getModule } from "./modules.ts";
import { countInto, judgeRead, rateKey, RULES } from "../store/rate_limit.ts";

/**
 * Points: one per account and module, given and withdrawn by a toggle. Key layout:
 *   ["points", slug, account_id]             -> true
 *   ["points_by_account", account_id, slug]  -> true
 *   ["point_counts", slug]                   -> Deno.KvU64, holders of a point on slug
 *   ["points_version", shard]                -> Deno.KvU64, summed by every toggle on a module
 *                                               of that shard (0-7, from the slug)
 * A toggle checks only the caller's own point key and moves the count with `sum` (adding
 * 2^64 - 1 is a wrapping decrement), so accounts toggling the same module at once never
 * conflict, while two toggles by one account do: the loser re-reads and toggles back. The
 * count is only ever decremented together with the deletion of an existing point, so it
 * equals the number of point keys. Readers cache counts per version: the sum of the shards,
 * read in one getMany. Sharded because every toggle on every module wrote the one key it
 * had been: on a distributed KV a key every write goes through is a ceiling for the whole
 * service (migration 11 folds that old key into shard 0).
 */

export const pointKey = (slug: string, id: number) => ["points", slug, id] as const;
const mineKey = (id: number, slug: string) => ["points_by_account", id, slug] as const;
export const countKey = (slug: string) => ["point_counts", slug] as const;
/** Version shards; each only ever grows, so their sum orders the snapshots. */
const VERSION_SHARDS = 8; // one getMany reads them all (it takes 10 at most)
export const pointsVersionKey = (shard: number) => ["points_version", shard] as const;
const VERSION_KEYS = Array.from({ length: VERSION_SHARDS }, (_, i) => pointsVersionKey(i));

/**
 * Folds the single version of before the shards (`["points_version"]`) into shard 0 (migration
 * 11, kv/store/migrations.ts): the sum of the shards stays what readers saw.
 */
export async function foldOldVersion(kv: Deno.Kv): Promise<void> {
  const old = await kv.get<Deno.KvU64>(["points_version"]);
  if (old.value === null) return;
  await commit(
    atomic(kv).check(old).delete(old.key).sum(pointsVersionKey(0), old.value.value),
  );
}

/** The version shard of a module: a string hash of its slug. */
export function versionShard(slug: string): number {
  let h = 0;
  for (let i = 0; i < slug.length; i++) h = (h * 31 + slug.charCodeAt(i)) | 0;
  return (h >>> 0) % VERSION_SHARDS;
}

const ONE = 1n;
const MINUS_ONE = (1n << 64n) - 1n;

type ToggleResult =
  | { ok: true; points: number; mine: boolean }
  | { ok: false; reason: "missing" }
  | { ok: false; reason: "limited"; retryAfter: number };

/**
 * Gives or withdraws the account's point on a published module. The use is counted
 * against RULES.points in the same atomic (one commit per toggle; a refused toggle is not
 * counted), so the limit and the point can never disagree.
 */
export async function togglePoint(
  kv: Deno.Kv,
  slug: string,
  accountId: number,
  now: number,
): Promise<ToggleResult> {
  const m = await getModule(kv, slug);
  if (!m.value?.published) return { ok: false, reason: "missing" };
  const rate = rateKey(RULES.points, `${RULES.points.name}:${accountId}`, now);
  let retryAfter = 0;
  const r = await transact<boolean | null>(async () => {
    const [mine, used, before] = await kv.getMany<[true, Deno.KvU64, Deno.KvU64]>([
      pointKey(slug, accountId),
      rate.key,
      rate.previous,
    ]);
    const verdict = judgeRead(RULES.points, now, used, before);
    if (!verdict.ok) {
      retryAfter = verdict.retryAfter;
      return { op: null, result: null };
    }
    const give = mine.value === null;
    const op = countInto(atomic(kv).check(mine), used);
    if (give) {
      op.set(pointKey(slug, accountId), true).set(mineKey(accountId, slug), true)
        .sum(countKey(slug), ONE);
    } else {
      op.delete(pointKey(slug, accountId)).delete(mineKey(accountId, slug))
        .sum(countKey(slug), MINUS_ONE);
    }
    op.sum(pointsVersionKey(versionShard(slug)), ONE);
    return { op, result: give };
  });
  if (r === null) return { ok: false, reason: "limited", retryAfter };
  const count = await kv.get<Deno.KvU64>(countKey(slug));
  return { ok: true, points: Number(count.value?.value ?? 0n), mine: r };
}

/** Slugs the account holds a point on. */
export async function pointsOf(kv: Deno.Kv, accountId: number): Promise<string[]> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: ["points_by_account", accountId] })) {
    out.push(e.key[2] as string);
  }
  return out;
}

export async function pointCount(kv: Deno.Kv, slug: string): Promise<number> {
  const c = await kv.get<Deno.KvU64>(countKey(slug));
  return Number(c.value?.value ?? 0n);
}

export interface Counts {
  version: bigint;
  counts: Map<string, number>;
}

const countCache = new WeakMap<Deno.Kv, Counts>();

/** Every module's point count (modules without points are absent), cached per version. */
export async function allCounts(kv: Deno.Kv): Promise<Map<string, number>> {
  return (await countsSnapshot(kv)).counts;
}

export async function countsSnapshot(kv: Deno.Kv): Promise<Counts> {
  let version = 0n;
  for (const v of await kv.getMany<Deno.KvU64[]>(VERSION_KEYS)) version += v.value?.value ?? 0n;
  const hit = countCache.get(kv);
  if (hit && hit.version === version) return hit;
  const counts = new Map<string, number>();
  for await (const e of kv.list<Deno.KvU64>({ prefix: ["point_counts"] }, { batchSize: 1000 })) {
    const n = Number(e.value.value);
    if (n > 0) counts.set(e.key[1] as string, n);
  }
  const snap = { version, counts };
  const current = countCache.get(kv);
  if (!current || current.version <= version) countCache.set(kv, snap);
  return snap;
}

/** Withdraws every point of an account (erasure), 8 at a time, each with its count. */
export async function withdrawAll(kv: Deno.Kv, accountId: number): Promise<number> {
  const slugs = await pointsOf(kv, accountId);
  let n = 0;
  for (let i = 0; i < slugs.length; i += 8) {
    const batch = slugs.slice(i, i + 8);
    n += await transact(async () => {
      const got = await kv.getMany<true[]>(batch.map((s) => pointKey(s, accountId)));
      const op = atomic(kv);
      const shards = new Set<number>();
      let k = 0;
      for (const [j, entry] of got.entries()) {
        op.check(entry).delete(mineKey(accountId, batch[j]));
        if (entry.value === null) continue;
        op.delete(entry.key).sum(countKey(batch[j]), MINUS_ONE);
        shards.add(versionShard(batch[j]));
        k++;
      }
      for (const shard of shards) op.sum(pointsVersionKey(shard), ONE);
      return { op, result: k };
    });
  }
  return n;
}
