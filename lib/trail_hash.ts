/**
 * The hash rule of the record trail (kv/store/trail.ts) and of record chains sent with proposals
 * (lib/record_chain.ts): each line's hash covers the previous line's hash and its own fields.
 */

export const GENESIS = "0".repeat(64);

/** The fields of a trail line that its hash covers. */
interface HashedLine {
  seq: number;
  at: string;
  actor: string;
  action: string;
  subject?: string;
  fields?: string[];
}

// SHA-256 (lib/crypto.ts, from @noble/hashes) is imported on the first hash: the server's start
// chains the trail but rarely has a line to hash, and the import would lengthen every start
// (docs/performance.md, "Start-up and the request path").
let sha256: Promise<(text: string) => string> | null = null;

export async function lineHash(prev: string, l: HashedLine): Promise<string> {
  const hex = await (sha256 ??= import("./crypto.ts").then((m) => m.sha256hex));
  const body = JSON.stringify([l.seq, l.at, l.actor, l.action, l.subject ?? null, l.fields ?? []]);
  return hex(`${prev}\n${body}`);
}
