import { iso } from "../lib/clock.ts";
import { getManyValues } from "./_batch.ts";
import { GENESIS, lineHash } from "../lib/trail_hash.ts";

/**
 * The record trail: an append-only chain of lines, each holding the hash of the one before.
 * Lines carry ids, actions and field names, never personal content. Key layout:
 *   ["trail", seq]          -> TrailLine (seq from 1)
 *   ["trail_head"]          -> {seq, hash} of the last line (absent: empty trail)
 *   ["trail_checkpoint"]    -> {seq, hash} of the last line a verification proved
 *   ["trail_by_account", account_id, seq] -> true, for lines whose actor or subject is
 *                              that account (the data export reads these)
 * A line is appended in the same atomic as the change it records: the head is checked, so
 * two writers never both take the same seq.
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

export interface TrailAppend {
  lines: TrailLine[];
  apply(op: Deno.AtomicOperation): Deno.AtomicOperation;
}

/** Prepares lines to append; `apply` adds them and the head check to the caller's atomic. */
export async function trailAppend(
  kv: Deno.Kv,
  entries: TrailEntry[],
  now: number,
): Promise<TrailAppend> {
  const head = await kv.get<Head>(["trail_head"]);
  let seq = head.value?.seq ?? 0;
  let prev = head.value?.hash ?? GENESIS;
  const lines: TrailLine[] = [];
  for (const e of entries) {
    seq++;
    const base = { seq, at: iso(now), ...e };
    const hash = await lineHash(prev, base);
    lines.push({ ...base, prev, hash });
    prev = hash;
  }
  return {
    lines,
    apply(op) {
      if (lines.length === 0) return op;
      op.check(head);
      for (const l of lines) {
        op.set(["trail", l.seq], l);
        for (const id of accountsOf(l)) op.set(["trail_by_account", id, l.seq], true);
      }
      const last = lines[lines.length - 1];
      return op.set(["trail_head"], { seq: last.seq, hash: last.hash });
    },
  };
}

export interface TrailVerdict {
  ok: boolean;
  lines: number;
  head: string;
  /** Lines this call read; earlier ones were proved by a checkpoint. */
  checked: number;
  from: number;
  broken: { seq: number; reason: string } | null;
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
    await kv.atomic().check(cp).delete(cp.key).commit();
  }
  return v;
}

async function walkTrail(kv: Deno.Kv, checkpoint: Head | null): Promise<TrailVerdict> {
  const head = await kv.get<Head>(["trail_head"]);
  const total = head.value?.seq ?? 0;
  const start = checkpoint && checkpoint.seq <= total ? checkpoint : null;
  let prev = start?.hash ?? GENESIS;
  let expected = (start?.seq ?? 0) + 1;
  const from = expected;
  let checked = 0;
  const verdict = (broken: TrailVerdict["broken"]): TrailVerdict => ({
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
    await kv.set(["trail_checkpoint"], { seq: total, hash: prev });
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
  let op = kv.atomic();
  let n = 0;
  for await (const e of kv.list({ prefix: ["trail_by_account", accountId] })) {
    op.delete(e.key);
    if (++n % 500 === 0) {
      await op.commit();
      op = kv.atomic();
    }
  }
  await op.commit();
}
