import { MINUTE } from "../../lib/clock.ts";
import { type Account, isOwner } from "./accounts.ts";

/**
 * Who calls a domain function, as the API's guards (and the pages' session) found it. Domain
 * functions that decide by who acts take it as their second argument, after `deps`. Holds no
 * KV keys.
 */
export interface Caller {
  /** The signed-in account; null without a valid sign-in. */
  account: Account | null;
  /** Acting for the team: by the service token, or by a reviewer's or owner's account. */
  team: "service" | "account" | null;
  /** The sign-in is younger than FRESH_AGE (docs/api.md "Limits", "Token"). */
  fresh: boolean;
}

/** A sign-in younger than this is "fresh" (docs/api.md "Limits", "Token"). */
export const FRESH_AGE = 15 * MINUTE;

export const FRESH_REQUIRED =
  "this needs a fresh sign-in: request a new link, open it and repeat the call";

/** "account:<id>" for the trail, "service" for the team token, "system" for nobody. */
export function actorOf(c: Caller): string {
  if (c.team === "service") return "service";
  return c.account ? `account:${c.account.id}` : "system";
}

export const isTeamCaller = (c: Caller) => c.team !== null;
export const isOwnerCaller = (c: Caller) =>
  c.team === "account" && c.account !== null && isOwner(c.account);
