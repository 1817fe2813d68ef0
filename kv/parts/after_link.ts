import type { Deps } from "../../lib/deps.ts";
import type { Account } from "../accounts/accounts.ts";
import type { Link } from "../accounts/links.ts";

/**
 * What the parts do once a mailed link has signed `account` in (each part's `afterVerify`):
 * answers how many proposals they confirmed. The parts, and through them most of kv/, load
 * with the first link completed, not with the sign-in page that links to them.
 *
 * @example
 * ```ts
 * const { confirmed } = await afterLinkOpened(deps, done.account, done.link);
 * ```
 */
export async function afterLinkOpened(
  deps: Deps,
  account: Account,
  link: Link,
): Promise<{ confirmed: number }> {
  const { accountParts } = await import("./mod.ts");
  let confirmed = 0;
  for (const part of accountParts) {
    confirmed += (await part.afterVerify?.(deps, account, link))?.confirmed ?? 0;
  }
  return { confirmed };
}
