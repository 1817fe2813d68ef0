import { DAY, iso } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { type Atomic, atomic, commit, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { deliver, enqueueFollowers } from "../alerts/outbox.ts";
import { claimId } from "../store/ids.ts";
import { rateInto, RULES } from "../store/rate_limit.ts";

/**
 * Incident notes of an account's status page: short, timestamped, shown newest first on
 * /status/<slug> and mailed to its followers (kv/status/followers.ts). Key layout:
 *   ["status_notes", account_id, id]  -> Note; ids grow with time; expires after 91 days
 * Notes older than NOTES_KEPT_MS are neither shown nor exported (the value's `at` decides; expireIn
 * only cleans up). The single per-service note of the page's settings is another thing.
 */

export const NOTE_KINDS = ["investigating", "identified", "resolved", "note"] as const;
export type NoteKind = typeof NOTE_KINDS[number];
export const MAX_NOTE_TEXT = 500;
export const NOTES_KEPT_MS = 90 * DAY;

export interface Note {
  id: number;
  account: number;
  kind: NoteKind;
  text: string;
  at: number;
}

const noteKey = (account: number, id: number) => ["status_notes", account, id] as const;

export const noteView = (n: Note) => ({ id: n.id, kind: n.kind, text: n.text, at: iso(n.at) });

/**
 * Posts a note and queues its mail to the followers in one atomic (at most RULES.notes an
 * hour: each note mails every follower).
 */
export async function postNote(
  deps: Deps,
  account: number,
  input: { kind: NoteKind; text: string },
): Promise<Note> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { note, fanout } = await transact(async () => {
    const claim = await claimId(kv, "status_note", (id) => noteKey(account, id));
    const rate = await rateInto(kv, RULES.notes, `${RULES.notes.name}:${account}`, now);
    const note: Note = { id: claim.id, account, kind: input.kind, text: input.text, at: now };
    const op = rate.apply(claim.apply(atomic(kv)))
      .set(noteKey(account, note.id), note, { expireIn: NOTES_KEPT_MS + DAY });
    const fanout = enqueueFollowers(
      op,
      account,
      { kind: "note", note: note.kind, text: note.text },
      now,
    );
    return { op, result: { note, fanout } };
  });
  await deliver(deps, [fanout]);
  return note;
}

/** The account's notes of the last 90 days, newest first. */
export async function listNotes(kv: Deno.Kv, account: number, now: number): Promise<Note[]> {
  const out: Note[] = [];
  for await (const e of kv.list<Note>({ prefix: ["status_notes", account] }, { reverse: true })) {
    if (e.value.at > now - NOTES_KEPT_MS) out.push(e.value);
  }
  return out;
}

/** Deletes one note; false when there is none. */
export async function deleteNote(kv: Deno.Kv, account: number, id: number): Promise<boolean> {
  const entry = await kv.get<Note>(noteKey(account, id));
  if (!entry.value) return false;
  const res = await commit(atomic(kv).check(entry).delete(entry.key));
  return res.ok;
}

/** Every note of every account, oldest first per account (the move to incidents). */
export function eachNote(kv: Deno.Kv): Deno.KvListIterator<Note> {
  return kv.list<Note>({ prefix: ["status_notes"] });
}

/** Deletes a note in the caller's atomic, checked (kv/status/incidents.ts `moveNotes`). */
export function dropNoteInto(op: Atomic, entry: Deno.KvEntry<Note>): Atomic {
  return op.check(entry).delete(noteKey(entry.value.account, entry.value.id));
}

/** Deletes every note of the account (erasure). */
export async function eraseNotes(kv: Deno.Kv, account: number): Promise<number> {
  return await deleteKeys(kv, keysOf(kv, { prefix: ["status_notes", account] }));
}
