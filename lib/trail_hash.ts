import { sha256hex } from "./crypto.ts";

/**
 * The hash rule of the record trail (kv/trail.ts) and of record chains sent with proposals
 * (lib/record_chain.ts): each line's hash covers the previous line's hash and its own fields.
 */

export const GENESIS = "0".repeat(64);

/** The fields of a trail line that its hash covers. */
export interface HashedLine {
  seq: number;
  at: string;
  actor: string;
  action: string;
  subject?: string;
  fields?: string[];
}

export function lineHash(prev: string, l: HashedLine): string {
  const body = JSON.stringify([l.seq, l.at, l.actor, l.action, l.subject ?? null, l.fields ?? []]);
  return sha256hex(`${prev}\n${body}`);
}
