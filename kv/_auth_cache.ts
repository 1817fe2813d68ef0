/**
 * A per-process cache of live sessions and their accounts, so an authenticated request
 * usually costs no KV read (one Deno KV read costs more CPU than the rest of a request).
 *
 * It must never answer with a session that was ended or an account that changed. Three rules
 * keep it exact:
 *
 * 1. Writes in this process: every write goes through kv/_atomic.ts `commit`, which calls
 *    `authWriteBegins` and `authWriteEnds` here, by name, for each atomic that writes a
 *    `sessions` or `accounts` key (set, sum, mutate or delete), before and after its commit;
 *    the entries it names are dropped at once. A read that was in flight meanwhile is not
 *    stored (the `invalidations` counter moved).
 * 2. Writes by other processes on the same KV file (the owner command, a second server):
 *    every such write also adds 1 to the KV counter `["auth_epoch"]` in the same atomic.
 *    Before serving from the cache, the KV file's write-ahead log is stat()ed; when
 *    they changed since the last check, the counter is read once and, if it moved by more
 *    than this process's own writes, the whole cache is dropped. A file changed so recently
 *    that a second write could still carry the same timestamp is not trusted, so the cache
 *    waits: two seconds on a file system whose timestamps have whole seconds (FAT keeps two),
 *    250 ms once the log's timestamps have shown milliseconds (Linux stamps files from a clock
 *    that moves every 1-10 ms, and may lag a little more on a busy virtual machine). Every
 *    signed-in session writes `last_used` once a minute, so on a busy server the two-second
 *    wait kept the cache off most of the time. Both assume the file is stamped by this
 *    machine's clock: a local file system, not a network share (docs/operations.md).
 * 3. A KV on the network (KV Connect, Deno Deploy) gives no cheap signal of other writers:
 *    the cache is off there, and every request reads. Its reads do not read the epoch, and of
 *    its writes only those that may end or narrow access count in it (a session deleted, an
 *    account changed; not sign-ins and `last_used` touches): on a distributed KV, one key
 *    that every sign-in and every signed-in request goes through is a ceiling for the whole
 *    service. So a server caching on a KV file that writers also reach over KV Connect (a
 *    denokv in front of the same file) still hears of every ended session; docs/operations.md
 *    advises against that setup all the same.
 *
 * Key layout owned here: ["auth_epoch"] -> Deno.KvU64, the count of session and account
 * writes from every process on a KV file (never read by anything else).
 */

export const EPOCH_KEY = ["auth_epoch"] as const;
const AUTH_PREFIXES = new Set<unknown>(["sessions", "accounts"]);
const MAX_ENTRIES = 10_000;
/** File timestamps this recent may hide a second write within the same tick. */
export const SETTLE_MS = 2_000;
/** The same, once the file system has shown timestamps finer than a second. */
export const FINE_SETTLE_MS = 250;

/**
 * A session (kv/sessions.ts) with its account (kv/accounts.ts) and token hash. The cache
 * needs only the account id; the sessions module reads its entries back with its own types,
 * so this module imports neither (no import cycle with kv/sessions.ts).
 */
export interface CachedAuth {
  session: unknown;
  account: { id: number };
  hash: string;
}

export type KvSource = "memory" | "file" | "remote";

interface State {
  source: KvSource;
  /** The KV file's write-ahead log (file source only). */
  files: string[];
  entries: Map<string, CachedAuth>;
  byAccount: Map<number, Set<string>>;
  invalidations: number;
  /** Whether a timestamp of the log has shown milliseconds (see rule 2). */
  fineTimes: boolean;
  /** File signature last proven free of other processes' auth writes. */
  validSig: string | null;
  /** The epoch counter at the last check, and this process's writes that landed since. */
  epoch: bigint | null;
  own: bigint;
  /**
   * This process's session and account writes between their start and the moment their
   * commit returns. One may already be in the file (and in an epoch read) before it counts in
   * `own`: no baseline is taken while any is pending, else a foreign write could hide behind it.
   */
  pending: number;
}

const states = new WeakMap<Deno.Kv, State>();

/** The cache's state for a KV `openKv` opened (registered there); none for another KV. */
function stateOf(kv: Deno.Kv): State | undefined {
  return states.get(kv);
}

export function isAuthKey(key: Deno.KvKey): boolean {
  return AUTH_PREFIXES.has(key[0]);
}

/**
 * Whether a write may end or narrow someone's access: a session deleted (signed out, ended,
 * erased) or an account written (roles, erasure; a new account counts too, as the keys do
 * not tell it apart). Sign-ins and `last_used` touches only set sessions: they are the
 * frequent writes, and they never take access away.
 */
function endsAccess(keys: Deno.KvKey[], deleted: Deno.KvKey[]): boolean {
  return deleted.some((k) => k[0] === "sessions") || keys.some((k) => k[0] === "accounts");
}

/**
 * Whether this handle is a KV file, whose session and account writes count in the epoch and
 * whose session reads take the epoch along (rules 2 and 3).
 */
export function countsEpoch(kv: Deno.Kv): boolean {
  return stateOf(kv)?.source === "file";
}

/**
 * Where the KV lives decides how the cache learns of other writers. kv/_atomic.ts `openKv`
 * calls it; tests call it for a KV they opened themselves.
 */
export function registerKv(kv: Deno.Kv, path: string | undefined): void {
  const source: KvSource = path === ":memory:"
    ? "memory"
    : path && !/^https?:/.test(path)
    ? "file"
    : "remote";
  states.set(kv, {
    source,
    // The write-ahead log alone: in WAL mode (Deno KV's) every write of any process goes into
    // it first, so its size or time moves; the KV file itself changes only when a checkpoint
    // copies pages already in the log. One stat per lookup, not two (each costs ~3 µs of CPU).
    files: source === "file" ? [`${path}-wal`] : [],
    entries: new Map(),
    byAccount: new Map(),
    invalidations: 0,
    fineTimes: false,
    validSig: null,
    epoch: null,
    own: 0n,
    pending: 0,
  });
}

function drop(st: State, hash: string): void {
  const e = st.entries.get(hash);
  if (!e) return;
  st.entries.delete(hash);
  const set = st.byAccount.get(e.account.id);
  set?.delete(hash);
  if (set?.size === 0) st.byAccount.delete(e.account.id);
}

function dropAll(st: State): void {
  st.entries.clear();
  st.byAccount.clear();
  st.invalidations++;
}

/**
 * Every session or account key a write touches: once before its commit (`landed` undefined),
 * once after it returned or threw (`landed` says whether it committed).
 */
function authWrite(kv: Deno.Kv, keys: Deno.KvKey[], landed?: boolean): void {
  const st = stateOf(kv);
  if (!st) return;
  if (landed === undefined) st.pending++;
  else st.pending--;
  st.invalidations++;
  for (const key of keys) {
    if (key[0] === "sessions") drop(st, String(key[1]));
    else if (key[0] === "accounts") {
      for (const hash of st.byAccount.get(Number(key[1])) ?? []) drop(st, hash);
    }
  }
  if (landed && st.source === "file") st.own++;
}

/** Drops everything and the baseline: the next read sets a new one, nothing served before. */
function forget(st: State): void {
  dropAll(st);
  st.epoch = null;
  st.own = 0n;
  st.validSig = null;
}

function signature(st: State): { sig: string; settled: boolean } {
  let sig = "";
  let newest = 0;
  for (const f of st.files) {
    try {
      const s = Deno.statSync(f);
      const m = s.mtime?.getTime() ?? 0;
      if (m % 1000 !== 0) st.fineTimes = true;
      newest = Math.max(newest, m);
      sig += `${s.ino}:${s.size}:${m};`;
    } catch (err) {
      // Only a file that is not there has a known state. One that cannot be stat()ed (no read
      // permission for the -wal, say) may change unseen: the cache cannot vouch for anything.
      if (!(err instanceof Deno.errors.NotFound)) return { sig: "", settled: false };
      sig += "-;";
    }
  }
  return { sig, settled: Date.now() - newest > (st.fineTimes ? FINE_SETTLE_MS : SETTLE_MS) };
}

/** Proves (or refutes) that no other process wrote a session or account since the last proof. */
async function revalidate(kv: Deno.Kv, st: State, sig: string): Promise<void> {
  const own = st.own;
  const inv = st.invalidations;
  const busy = st.pending > 0;
  const got = await kv.get<Deno.KvU64>(EPOCH_KEY);
  const epoch = got.value?.value ?? 0n;
  if (busy || st.pending > 0) {
    // A write of ours may be in this read without counting in `own` yet: no sound baseline.
    forget(st);
    return;
  }
  if (st.epoch === null || epoch !== st.epoch + own) dropAll(st);
  st.epoch = epoch;
  st.own -= own;
  // The stat came first: a later write changes the file again, so the next request checks.
  st.validSig = inv === st.invalidations ? sig : null;
}

/** The cached session of a token hash, when the cache can vouch that it is current. */
export async function cachedAuth<T extends CachedAuth>(
  kv: Deno.Kv,
  hash: string,
): Promise<T | null> {
  const st = stateOf(kv);
  if (!st || st.source === "remote") return null;
  if (st.source === "file") {
    const { sig, settled } = signature(st);
    // A file written this instant cannot vouch for anything yet: read as if uncached.
    if (!settled) return null;
    if (sig !== st.validSig) {
      await revalidate(kv, st, sig);
      if (st.validSig !== sig) return null;
    }
  }
  const e = st.entries.get(hash);
  if (!e) return null;
  // Most recently used last, so eviction takes the coldest.
  st.entries.delete(hash);
  st.entries.set(hash, e);
  // Only kv/sessions.ts stores entries, with its own types: it reads back what it stored.
  return e as T;
}

/** A mark taken before reading a session, so a read that raced a write is not stored. */
export function readMark(kv: Deno.Kv): number {
  return stateOf(kv)?.invalidations ?? -1;
}

/**
 * The epoch read in the same snapshot as a session: the first one becomes the baseline; one
 * that moved beyond this process's own writes means another process wrote, so all goes.
 * Answers whether the session read may be stored.
 */
function epochSeen(st: State, epoch: bigint): boolean {
  if (st.epoch !== null && epoch === st.epoch + st.own) return true;
  if (st.pending > 0) {
    // A write of ours may be in this snapshot without counting in `own` yet: taking the
    // snapshot as baseline would count it twice and hide the next foreign write.
    forget(st);
    return false;
  }
  if (st.epoch !== null) dropAll(st);
  // The read is current to this epoch, which becomes the baseline; the file is proven anew
  // before anything is served.
  st.epoch = epoch;
  st.own = 0n;
  st.validSig = null;
  return true;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/**
 * Stores what a read found, unless a write touched sessions or accounts since `mark`. `epoch`
 * is `["auth_epoch"]` from the same snapshot: on a shared KV file it tells whether the read
 * is current to what the cache knows of other processes.
 */
export function rememberAuth(kv: Deno.Kv, mark: number, found: CachedAuth, epoch: bigint): void {
  const st = stateOf(kv);
  if (!st || st.source === "remote") return;
  if (st.source === "file" && !epochSeen(st, epoch)) return;
  if (st.invalidations !== mark) return;
  // Handlers get the cached objects themselves: frozen, so none can change them in place.
  const e = deepFreeze({ ...found });
  st.entries.set(found.hash, e);
  let set = st.byAccount.get(found.account.id);
  if (!set) st.byAccount.set(found.account.id, set = new Set());
  set.add(found.hash);
  if (st.entries.size > MAX_ENTRIES) drop(st, st.entries.keys().next().value!);
}

/**
 * kv/_atomic.ts `commit`, before committing an atomic that writes session or account keys
 * (`deleted`: those it deletes): the write counts in the epoch where it must (rules 2 and 3),
 * and the cache drops what it names.
 */
export function authWriteBegins(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  keys: Deno.KvKey[],
  deleted: Deno.KvKey[],
): void {
  const source = stateOf(kv)?.source;
  if (source === "file" || (source === "remote" && endsAccess(keys, deleted))) {
    op.sum(EPOCH_KEY, 1n);
  }
  authWrite(kv, keys);
}

/** kv/_atomic.ts `commit`, once that commit returned or threw: whether it landed. */
export function authWriteEnds(kv: Deno.Kv, keys: Deno.KvKey[], landed: boolean): void {
  authWrite(kv, keys, landed);
}
