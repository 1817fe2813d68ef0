import { z } from "zod";
import { GENESIS, lineHash } from "./trail_hash.ts";

/**
 * Verification of the record trail a proposal may carry as data (`records`, `chain`). It
 * uses the rule of the service's own trail (lib/trail_hash.ts `lineHash`), so a trail exported
 * from this service (GET /api/me/export, `trail` lines) verifies as it is:
 *
 *   hash_i = SHA-256 hex of `prev_i + "\n" + JSON([seq, at, actor, action, subject|null, fields|[]])`
 *   prev_1 = the first record's `prev` when sent, else 64 zeros (then its seq must be 1)
 *   prev_i = hash_(i-1); seq_i = seq_(i-1) + 1
 *
 * `records`: the lines in order, `{seq, at, actor, action, subject?, fields?, prev?, hash?}`;
 * a line that carries `prev` or `hash` must carry the computed value.
 * `chain`: the head hash (hash of the last record) as a string, or the array of every
 * record's hash in order. Without `chain`, every record must carry its `hash`.
 */

const HEX64 = /^[0-9a-f]{64}$/;
export const MAX_RECORDS = 500;
/** Records and chain together, as JSON text: keeps the stored value well under 64 KiB. */
export const MAX_RECORDS_JSON = 16_000;

const hex64 = z.string().regex(HEX64, "must be 64 lower-case hex digits");

export const RecordSchema = z.object({
  seq: z.number().int().min(1),
  at: z.string().max(40),
  actor: z.string().max(120),
  action: z.string().max(120),
  subject: z.string().max(200).nullable().optional(),
  fields: z.array(z.string().max(60)).max(50).optional(),
  prev: hex64.optional(),
  hash: hex64.optional(),
}).meta({ id: "ChainRecord" });

export const ChainSchema = z.union([hex64, z.array(hex64).max(MAX_RECORDS)]).meta({ id: "Chain" });

export type ChainRecord = z.infer<typeof RecordSchema>;
export type Chain = z.infer<typeof ChainSchema>;

interface ChainVerdict {
  ok: boolean;
  /** Plain words: what was verified or the first thing that failed. */
  detail: string;
}

export async function verifyRecordChain(
  records: ChainRecord[] | undefined,
  chain: Chain | undefined,
): Promise<ChainVerdict> {
  const list = records ?? [];
  if (list.length === 0) {
    return chain === undefined || (Array.isArray(chain) && chain.length === 0)
      ? { ok: true, detail: "no record chain sent" }
      : { ok: false, detail: "a chain was sent without records" };
  }
  if (Array.isArray(chain) && chain.length !== list.length) {
    return { ok: false, detail: `chain has ${chain.length} hashes for ${list.length} records` };
  }
  let prev = list[0].prev ?? GENESIS;
  if (list[0].prev === undefined && list[0].seq !== 1) {
    return { ok: false, detail: "record 1: without prev the chain must start at seq 1" };
  }
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    const n = i + 1;
    if (i > 0 && r.seq !== list[i - 1].seq + 1) {
      return { ok: false, detail: `record ${n}: seq ${r.seq} does not follow ${list[i - 1].seq}` };
    }
    if (r.prev !== undefined && r.prev !== prev) {
      return { ok: false, detail: `record ${n}: prev does not match the record before` };
    }
    const hash = await lineHash(prev, {
      seq: r.seq,
      at: r.at,
      actor: r.actor,
      action: r.action,
      subject: r.subject ?? undefined,
      fields: r.fields,
    });
    if (r.hash !== undefined && r.hash !== hash) {
      return { ok: false, detail: `record ${n}: content does not match its hash` };
    }
    if (chain === undefined && r.hash === undefined) {
      return { ok: false, detail: `record ${n}: no hash to verify (send hash or chain)` };
    }
    if (Array.isArray(chain) && chain[i] !== hash) {
      return { ok: false, detail: `record ${n}: chain hash does not match` };
    }
    prev = hash;
  }
  if (typeof chain === "string" && chain !== prev) {
    return { ok: false, detail: "chain head does not match the last record" };
  }
  return { ok: true, detail: `${list.length} records verified` };
}
