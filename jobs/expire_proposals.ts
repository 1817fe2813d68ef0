import { expireReceived } from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";

/**
 * Minutely: deletes received proposals whose confirmation link was not opened within seven
 * days. It reads only the index of received proposals, so running it often costs little and
 * the deletion is at most a minute late.
 */
export const expireProposalsJob = (deps: Deps) => expireReceived(deps);
