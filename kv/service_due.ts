/**
 * The runner's due index of watched services. Key layout:
 *   ["service_due", due_ms, id] -> account id
 * kv/services.ts keeps one entry per service (named by `Service.due`) and moves it when a
 * check is claimed or done; kv/hooks.ts adds nudges for heartbeats (a failure now, a
 * started run at its grace's end), which the runner takes as an early look.
 */
export const dueKey = (due: number, id: number) => ["service_due", due, id] as const;

/** Due entries up to `now`, earliest first. */
export const dueRange = (now: number) => ({
  start: ["service_due"] as Deno.KvKey,
  end: ["service_due", now + 1] as Deno.KvKey,
});
