import { expireRequests } from "../kv/forms/requests.ts";
import type { Deps } from "../lib/deps.ts";

/** Daily: removes requests older than 180 days (docs/api.md "Limits"). */
export const expireRequestsJob = (deps: Deps) => expireRequests(deps);
