/**
 * The settings of an account's status page, stored apart from kv/status/page.ts (which reads
 * services to show them) so that modules the services area imports (kv/status/followers.ts) can read
 * them without an import cycle. Key layout:
 *   ["status_pages", account_id]      -> StatusPage {enabled, title, services: [{id, note}],
 *                                        link?, logo?}
 */
import { atomic, commit } from "../_atomic.ts";

export interface StatusPage {
  enabled: boolean;
  title: string;
  services: { id: number; note: string }[];
  /** A link to the owner's own site in the page's header ("" or absent: none). */
  link?: string;
  /** Show the owner's profile picture as the page's logo. */
  logo?: boolean;
}

const pageKey = (account: number) => ["status_pages", account] as const;

export async function getStatusPage(kv: Deno.Kv, account: number): Promise<StatusPage | null> {
  return (await kv.get<StatusPage>(pageKey(account))).value;
}

/** Stores the settings as given: kv/status/page.ts `saveStatusPage` checks them first. */
export async function putStatusPage(kv: Deno.Kv, account: number, page: StatusPage) {
  await commit(atomic(kv).set(pageKey(account), page));
}

/** Removes the account's status page (erasure). Badges go with their services. */
export async function eraseStatusPage(kv: Deno.Kv, account: number): Promise<void> {
  await commit(atomic(kv).delete(pageKey(account)));
}
