/**
 * Integer identifiers, one sequence per kind. Key layout:
 *   ["ids", kind] -> Deno.KvU64, the last identifier handed out
 * An id is taken inside the atomic that writes its record (check on the counter), so an id
 * is never given twice and never skipped on a failed write.
 */
export type IdKind =
  | "account"
  | "session"
  | "journal"
  | "application"
  | "invite"
  | "service"
  | "file"
  | "request"
  | "proposal";

export interface IdClaim {
  id: number;
  /** Adds the counter check and increment to the atomic that writes the record. */
  apply(op: Deno.AtomicOperation): Deno.AtomicOperation;
}

export async function claimId(kv: Deno.Kv, kind: IdKind): Promise<IdClaim> {
  const entry = await kv.get<Deno.KvU64>(["ids", kind]);
  const id = Number(entry.value?.value ?? 0n) + 1;
  return {
    id,
    apply: (op) => op.check(entry).set(["ids", kind], new Deno.KvU64(BigInt(id))),
  };
}
