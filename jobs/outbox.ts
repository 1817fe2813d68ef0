import { retryOutbox } from "../kv/outbox.ts";
import type { Deps } from "../lib/deps.ts";

/** Minutely: delivers mail whose earlier attempt failed, with backoff. */
export const outboxJob = (deps: Deps) => retryOutbox(deps);
