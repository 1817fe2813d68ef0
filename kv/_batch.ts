/**
 * Reading many keys: Deno KV's getMany takes at most 10 keys, so longer lists are read in
 * batches of ten, a few batches at a time. Holds no keys of its own.
 */

const BATCH = 10;
/** Batches in flight at once: enough to hide KV latency, few enough for a long list. */
const PARALLEL = 8;

/** The entries of `keys`, in their order (missing keys as entries with a null value). */
export async function getManyEntries<T>(
  kv: Deno.Kv,
  keys: Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const out: Deno.KvEntryMaybe<T>[] = [];
  for (let i = 0; i < keys.length; i += BATCH * PARALLEL) {
    const reads = [];
    for (let j = i; j < Math.min(keys.length, i + BATCH * PARALLEL); j += BATCH) {
      reads.push(kv.getMany<T[]>(keys.slice(j, j + BATCH)));
    }
    for (const got of await Promise.all(reads)) out.push(...got);
  }
  return out;
}

/** The values of the keys that exist, in the order of `keys`. */
export async function getManyValues<T>(kv: Deno.Kv, keys: Deno.KvKey[]): Promise<T[]> {
  const out: T[] = [];
  for (const e of await getManyEntries<T>(kv, keys)) if (e.value !== null) out.push(e.value);
  return out;
}

/** Keys deleted per atomic: KV takes at most 1000 mutations in one. */
const DELETE_CHUNK = 500;

/**
 * Deletes `keys` in atomics of DELETE_CHUNK, each made by `newOp` and committed by `write`
 * (kv/_atomic.ts `deleteKeys` passes the commit path); no atomic without a delete. Answers
 * how many keys went.
 */
export async function deleteInChunks<Op extends { delete(key: Deno.KvKey): unknown }>(
  keys: Iterable<Deno.KvKey> | AsyncIterable<Deno.KvKey>,
  newOp: () => Op,
  write: (op: Op) => Promise<unknown>,
): Promise<number> {
  let op = newOp();
  let n = 0;
  for await (const key of keys) {
    op.delete(key);
    if (++n % DELETE_CHUNK === 0) {
      await write(op);
      op = newOp();
    }
  }
  if (n % DELETE_CHUNK !== 0) await write(op);
  return n;
}

/** The keys of the entries a list selector finds, for `deleteInChunks`. */
export async function* keysOf(
  kv: Deno.Kv,
  selector: Deno.KvListSelector,
): AsyncIterable<Deno.KvKey> {
  for await (const e of kv.list(selector)) yield e.key;
}
