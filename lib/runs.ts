/**
 * Pairs heartbeat events into runs: an end (success or failure) takes the duration since the
 * latest earlier start with the same run id (events without `rid` pair with each other), as
 * Healthchecks does. Pure; events newest first in and out.
 */

interface RunEvent {
  at: number;
  kind: "success" | "start" | "fail" | "log";
  rid: string | null;
}

export function withDurations<T extends RunEvent>(newestFirst: T[]): (T & {
  duration_ms: number | null;
})[] {
  const open = new Map<string, number>();
  const out: (T & { duration_ms: number | null })[] = [];
  for (let i = newestFirst.length - 1; i >= 0; i--) {
    const e = newestFirst[i];
    const id = e.rid ?? "";
    let duration: number | null = null;
    if (e.kind === "start") open.set(id, e.at);
    else if (e.kind === "success" || e.kind === "fail") {
      const began = open.get(id);
      if (began !== undefined) {
        duration = e.at - began;
        open.delete(id);
      }
    }
    out.push({ ...e, duration_ms: duration });
  }
  return out.reverse();
}
