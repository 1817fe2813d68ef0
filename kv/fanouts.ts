import { DAY } from "../lib/clock.ts";
import { randomToken } from "../lib/crypto.ts";
import { type Atomic, atomic, commit } from "./_atomic.ts";

/**
 * What a status page's followers are to be told, queued in the atomic of the change it
 * reports (an off/back alert in kv/service_results.ts, a note in kv/status_notes.ts), so none is
 * lost when the process stops between the change and the mails. kv/followers.ts turns a
 * queued item into one mail per follower, a batch per atomic, moving `cursor` along. Key
 * layout:
 *   ["follow_fanout", id] -> Fanout   (id sorts by time; expires after 8 days)
 * Nothing here names a follower: the item holds the account and what happened.
 */

export type FanoutEvent =
  | { kind: "service"; service: number; name: string; state: "off" | "back" }
  | { kind: "note"; note: string; text: string }
  | {
    kind: "incident";
    incident: number;
    title: string;
    note: string;
    text: string;
    /** The services it affects: a page's followers hear of it when the page shows it. */
    services: number[];
  }
  | {
    kind: "group";
    label: string;
    services: { service: number; name: string; state: "off" | "back" }[];
  };

export interface Fanout {
  id: string;
  account: number;
  event: FanoutEvent;
  at: number;
  /** The last follower (address hash) mailed, or null before the first batch. */
  cursor: string | null;
}

const MAX_AGE = 8 * DAY;
export const fanoutKey = (id: string) => ["follow_fanout", id] as const;

/** Adds the item to the caller's atomic; answers its id for kv/followers.ts `runFanout`. */
export function queueFanout(
  op: Atomic,
  account: number,
  event: FanoutEvent,
  now: number,
): string {
  const id = `${now.toString(36).padStart(9, "0")}-${randomToken(9)}`;
  const item: Fanout = { id, account, event, at: now, cursor: null };
  op.set(fanoutKey(id), item, { expireIn: MAX_AGE });
  return id;
}

export async function getFanout(kv: Deno.Kv, id: string) {
  return await kv.get<Fanout>(fanoutKey(id));
}

/** Moves the item on past `cursor` in the caller's atomic (checked by the caller). */
export function advanceFanout(op: Atomic, item: Fanout, cursor: string) {
  return op.set(fanoutKey(item.id), { ...item, cursor }, { expireIn: MAX_AGE });
}

export function dropFanout(op: Atomic, id: string) {
  return op.delete(fanoutKey(id));
}

/** Ids of every queued item (the minutely job runs those a process left). */
export async function listFanouts(kv: Deno.Kv, limit = 200): Promise<Fanout[]> {
  const out: Fanout[] = [];
  for await (const e of kv.list<Fanout>({ prefix: ["follow_fanout"] }, { limit })) {
    out.push(e.value);
  }
  return out;
}

/** Deletes the account's queued items (erasure). */
export async function eraseFanouts(kv: Deno.Kv, account: number): Promise<void> {
  for (const item of await listFanouts(kv, 10_000)) {
    if (item.account === account) await commit(atomic(kv).delete(fanoutKey(item.id)));
  }
}
