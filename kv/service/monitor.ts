import { DAY, MINUTE } from "../../lib/clock.ts";
import { atomic, transact } from "../_atomic.ts";

/**
 * The monitor's own downtime: the stretches when no process of this server was running on
 * its KV (no minutely look, nothing to receive a ping). Every minutely run (and every start)
 * leaves its pulse; a pulse older than GAP_MS when the next comes means nobody ran in
 * between, and that stretch is stored as a gap. History and reports read a gap as "no data
 * (monitor down)": neither up nor down (lib/history.ts `gaps`), and a heartbeat whose
 * deadline fell in one says so in its alert (kv/service/looks.ts).
 * Key layout (owned here):
 *   ["monitor_pulse"] -> {at}       the latest minutely run or start of any process
 *   ["monitor_gaps", from_ms] -> {to}  a stretch [from, to) with no process running; kept
 *                                   as long as the history (KEEP_DAYS + 1)
 * One key a minute per process, on no request path.
 */

/**
 * A pulse older than this at the next one is a gap: the minutely cron runs every minute, a
 * run may wait for the previous one (45 s of checks at most) and the cron may be late by a
 * few seconds; three minutes without any run is a stop.
 */
export const GAP_MS = 3 * MINUTE;
/** As long as the history it explains (kv/service/history.ts KEEP_DAYS + 1). */
const EXPIRE = 91 * DAY;

const PULSE_KEY = ["monitor_pulse"] as const;
const gapKey = (from: number) => ["monitor_gaps", from] as const;

interface Gap {
  from: number;
  to: number;
}

/**
 * Leaves this run's pulse; answers the gap it closes (stored in the same atomic), or null
 * when the last pulse is recent, absent (a new server) or later (another process's clock).
 */
export async function notePulse(kv: Deno.Kv, now: number): Promise<Gap | null> {
  return await transact(async () => {
    const entry = await kv.get<{ at: number }>(PULSE_KEY);
    const last = entry.value?.at ?? null;
    if (last !== null && last >= now) return { op: null, result: null };
    const op = atomic(kv).check(entry).set(PULSE_KEY, { at: now });
    const gap = last !== null && now - last > GAP_MS ? { from: last, to: now } : null;
    if (gap) op.set(gapKey(gap.from), { to: gap.to }, { expireIn: EXPIRE });
    return { op, result: gap };
  });
}

/** The gaps that overlap [from, to), oldest first, as spans cut to [from, to). */
export async function listGaps(kv: Deno.Kv, from: number, to: number): Promise<[number, number][]> {
  const out: [number, number][] = [];
  // A gap starting before `from` may reach into it: the list starts a retention earlier.
  for await (
    const e of kv.list<{ to: number }>({
      start: gapKey(Math.max(0, from - EXPIRE)),
      end: gapKey(to),
    })
  ) {
    const start = e.key[1] as number;
    if (e.value.to <= from) continue;
    out.push([Math.max(from, start), Math.min(to, e.value.to)]);
  }
  return out;
}

/**
 * The gap holding `at`, or null: a stored one, or the stretch since the last pulse when that
 * is more than GAP_MS before `now` (a look right after a return may come before the return's
 * pulse stores it).
 */
export async function gapAt(kv: Deno.Kv, at: number, now: number): Promise<Gap | null> {
  for await (
    const e of kv.list<{ to: number }>({ start: gapKey(0), end: gapKey(at + 1) }, {
      reverse: true,
      limit: 1,
    })
  ) {
    const from = e.key[1] as number;
    if (e.value.to > at) return { from, to: e.value.to };
  }
  const last = (await kv.get<{ at: number }>(PULSE_KEY)).value?.at ?? null;
  return last !== null && last <= at && now - last > GAP_MS && at < now
    ? { from: last, to: now }
    : null;
}
