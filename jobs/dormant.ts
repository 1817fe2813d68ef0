import { noticeDormant } from "../kv/accounts/dormant.ts";
import type { Deps } from "../lib/deps.ts";

/** Daily: mails a notice to accounts with no sign-in for a year (kv/accounts/dormant.ts). */
export const dormantJob = (deps: Deps) => noticeDormant(deps);
