import { iso } from "../../lib/clock.ts";
import { deleteInChunks, getManyValues, keysOf } from "../_batch.ts";
import { retryLocked } from "../_locked.ts";
import { sleep } from "../../lib/timers.ts";
import { GENESIS, lineHash } from "../../lib/trail_hash.ts";

/**
 * The record trail: an append-only chain of lines, each holding the hash of the one before.
 * Lines carry ids, actions and field names, never personal content. Key layout:
 *   ["trail", seq]          -> TrailLine (seq from 1)
 *   ["trail_head"]          -> {seq, hash} of the last chained line (absent: empty trail)
 *   ["trail_checkpoint"]    -> {seq, hash} of the last line a verification proved
 *   ["trail_by_account", account_id, seq] -> true, for lines whose actor or subject is
 *                              that account (the data export reads these)
 *   ["trail_queue", qid, i] -> QueuedLine, a line written with its change, not chained yet
 *
 * Two steps, so that unrelated changes never conflict on the trail:
 * 1. A change queues its lines in its own atomic (a crash cannot separate them), under a key
 *    of their own: nothing shared is checked.
 * 2. The sequencer (`chainTrail`) takes queued lines in commit order (their versionstamps),
 *    gives them the next seqs and hashes, writes them to ["trail", seq], deletes them from
 *    the queue and moves the head, all in one atomic that checks the head: two sequencers
 *    (two processes, or a request and the minutely job) never both chain, the loser reads
 *    again. The commit of any atomic that queued a line runs the sequencer before it returns
 *    (kv/_atomic.ts `commit` calls `kickTrail`), one run at a time per process, so a line
 *    waits for a commit or two; the minutely job chains whatever a crash left queued.
 *
 * This module's own atomics write only trail keys, which nothing follows: they commit here,
 * with kv/_locked.ts `retryLocked`, below the commit path that runs the sequencer.
 */

export interface TrailEntry {
  /** Who acted: "account:<id>", "owner", "service", "system". */
  actor: string;
  /** What happened, dotted: "account.create", "profile.update", "role.grant". */
  action: string;
  /** What it happened to: "account:<id>", "module:<slug>", ... */
  subject?: string;
  /** Names of the changed fields, never their content. */
  fields?: string[];
}

export interface TrailLine extends TrailEntry {
  seq: number;
  at: string;
  prev: string;
  hash: string;
}

interface Head {
  seq: number;
  hash: string;
}

export { GENESIS, lineHash };

/** Anything lines can be queued in: kv/_atomic.ts `Atomic` (this module is below it). */
interface Writes {
  set(key: Deno.KvKey, value: unknown): unknown;
}

interface TrailAppend {
  apply<Op extends Writes>(op: Op): Op;
}

/** A line as queued: everything but its place in the chain. */
interface QueuedLine extends TrailEntry {
  at: string;
}

export const QUEUE = "trail_queue";
let lastQid = 0;

/** Queue keys: time-ordered and distinct within a process (commit order decides anyway). */
function nextQid(now: number): number {
  lastQid = Math.max(now * 1024 + Math.floor(Math.random() * 1024), lastQid + 1);
  return lastQid;
}

/**
 * Prepares lines to append at `now` (the caller's clock); `apply` queues them in the
 * caller's atomic. Kept async (and taking the KV) for its callers; it reads nothing.
 */
export function trailAppend(
  _kv: Deno.Kv,
  entries: TrailEntry[],
  now: number,
): Promise<TrailAppend> {
  const at = iso(now);
  return Promise.resolve({
    apply(op) {
      if (entries.length === 0) return op;
      const qid = nextQid(now);
      for (const [i, e] of entries.entries()) {
        op.set([QUEUE, qid, i], { ...e, at } satisfies QueuedLine);
      }
      return op;
    },
  });
}

/** Lines one sequencer atomic chains at most: 4 mutations each, under KV's 1000. */
const CHAIN_BATCH = 200;

/**
 * Chains queued lines until the queue is empty; answers how many this call chained. Safe with
 * any number of sequencers at once: each batch checks the head it extends.
 */
export async function chainTrail(kv: Deno.Kv): Promise<number> {
  let chained = 0;
  const started = performance.now();
  for (let attempt = 0;; attempt++) {
    const [head, queued] = await Promise.all([
      kv.get<Head>(["trail_head"]),
      Array.fromAsync(kv.list<QueuedLine>({ prefix: [QUEUE] }, { limit: CHAIN_BATCH })),
    ]);
    if (queued.length === 0) return chained;
    // Commit order: a change's lines share its versionstamp and keep their index order.
    queued.sort((a, b) =>
      a.versionstamp < b.versionstamp ? -1 : a.versionstamp > b.versionstamp ? 1 : cmpKey(a, b)
    );
    let seq = head.value?.seq ?? 0;
    let prev = head.value?.hash ?? GENESIS;
    const op = kv.atomic().check(head);
    for (const q of queued) {
      seq++;
      const { at, actor, action, subject, fields } = q.value;
      const base: Omit<TrailLine, "hash" | "prev"> = { seq, at, actor, action };
      if (subject !== undefined) base.subject = subject;
      if (fields !== undefined) base.fields = fields;
      const hash = await lineHash(prev, base);
      const l: TrailLine = { ...base, prev, hash };
      op.check(q).delete(q.key).set(["trail", seq], l);
      for (const id of accountsOf(l)) op.set(["trail_by_account", id, seq], true);
      prev = hash;
    }
    op.set(["trail_head"], { seq, hash: prev });
    if ((await retryLocked(() => op.commit())).ok) {
      chained += queued.length;
      attempt = -1;
      continue;
    }
    // Another sequencer moved the head: read again, after a short random pause.
    if (performance.now() - started > 10_000) return chained;
    await sleep(Math.random() * Math.min(50, 2 ** attempt));
  }
}

function cmpKey(a: Deno.KvEntry<unknown>, b: Deno.KvEntry<unknown>): number {
  const [qa, ia] = [a.key[1] as number, a.key[2] as number];
  const [qb, ib] = [b.key[1] as number, b.key[2] as number];
  return qa - qb || ia - ib;
}

const running = new WeakMap<Deno.Kv, { run: Promise<void>; again: boolean }>();

/**
 * Runs the sequencer for this process: one run at a time; a call during a run is served by
 * one more run after it (which chains everything queued meanwhile). Never throws: what it
 * could not chain waits for the next call or the minutely job.
 */
export function kickTrail(kv: Deno.Kv): Promise<void> {
  const now = running.get(kv);
  if (now) {
    now.again = true;
    return now.run;
  }
  const state = { run: Promise.resolve(), again: false };
  state.run = (async () => {
    try {
      do {
        state.again = false;
        await chainTrail(kv).catch(() => {});
      } while (state.again);
    } finally {
      running.delete(kv);
    }
  })();
  running.set(kv, state);
  return state.run;
}

/** Lines queued and not chained yet (up to `max`, counted by one bounded list). */
async function waitingLines(kv: Deno.Kv, max = 10_000): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: [QUEUE] }, { limit: max, batchSize: 1000 })) n++;
  return n;
}

export interface TrailVerdict {
  ok: boolean;
  lines: number;
  head: string;
  /** Lines this call read; earlier ones were proved by a checkpoint. */
  checked: number;
  from: number;
  broken: { seq: number; reason: string } | null;
  /** Lines written with their changes that the sequencer has not chained yet. */
  waiting: number;
}

/**
 * Walks the chain from the last checkpoint (or from the start with `full`). A break found at
 * or before the checkpoint (only `full` can see one) drops the checkpoint, so that every later
 * verification walks from the start again and keeps reporting the break.
 */
export async function verifyTrail(kv: Deno.Kv, full = false): Promise<TrailVerdict> {
  const cp = await kv.get<Head>(["trail_checkpoint"]);
  const v = await walkTrail(kv, full ? null : cp.value);
  if (v.broken && cp.value && v.broken.seq <= cp.value.seq) {
    await retryLocked(() => kv.atomic().check(cp).delete(cp.key).commit());
  }
  return { ...v, waiting: await waitingLines(kv) };
}

async function walkTrail(
  kv: Deno.Kv,
  checkpoint: Head | null,
): Promise<Omit<TrailVerdict, "waiting">> {
  const head = await kv.get<Head>(["trail_head"]);
  const total = head.value?.seq ?? 0;
  const start = checkpoint && checkpoint.seq <= total ? checkpoint : null;
  let prev = start?.hash ?? GENESIS;
  let expected = (start?.seq ?? 0) + 1;
  const from = expected;
  let checked = 0;
  const verdict = (broken: TrailVerdict["broken"]) => ({
    ok: broken === null,
    lines: total,
    head: head.value?.hash ?? GENESIS,
    checked,
    from,
    broken,
  });
  for await (
    const entry of kv.list<TrailLine>({ start: ["trail", expected], end: ["trail", total + 1] }, {
      batchSize: 500,
    })
  ) {
    const l = entry.value;
    checked++;
    if (entry.key[1] !== expected || l.seq !== expected) {
      return verdict({ seq: expected, reason: "line missing or out of order" });
    }
    if (l.prev !== prev) return verdict({ seq: l.seq, reason: "previous hash does not match" });
    if (await lineHash(prev, l) !== l.hash) {
      return verdict({ seq: l.seq, reason: "line content does not match its hash" });
    }
    prev = l.hash;
    expected++;
  }
  if (expected !== total + 1) return verdict({ seq: expected, reason: "line missing" });
  if (total > 0 && prev !== head.value!.hash) {
    return verdict({ seq: total, reason: "head does not match the last line" });
  }
  // A public GET should not cost a write when nothing new was proved.
  if (total > 0 && checkpoint?.seq !== total) {
    await retryLocked(() => kv.set(["trail_checkpoint"], { seq: total, hash: prev }));
  }
  return verdict(null);
}

function accountsOf(l: TrailEntry): Set<number> {
  const ids = new Set<number>();
  for (const ref of [l.actor, l.subject]) {
    const m = ref?.match(/^account:(\d+)$/);
    if (m) ids.add(Number(m[1]));
  }
  return ids;
}

/** Lines whose actor or subject is the given account, for the data export. */
export async function trailLinesOf(kv: Deno.Kv, accountId: number): Promise<TrailLine[]> {
  const seqs: number[] = [];
  for await (const e of kv.list({ prefix: ["trail_by_account", accountId] })) {
    seqs.push(e.key[2] as number);
  }
  return await getManyValues<TrailLine>(kv, seqs.map((s) => ["trail", s]));
}

/** Deletes an account's index of trail lines (erasure); the lines themselves stay. */
export async function dropTrailIndex(kv: Deno.Kv, accountId: number): Promise<void> {
  await deleteInChunks(
    keysOf(kv, { prefix: ["trail_by_account", accountId] }),
    () => kv.atomic(),
    (op) => retryLocked(() => op.commit()),
  );
}
