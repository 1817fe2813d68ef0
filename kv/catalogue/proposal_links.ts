import { runCheck } from "../../lib/checks/mod.ts";
import type { Deps } from "../../lib/deps.ts";
import { forbidden } from "../../lib/errors.ts";
import { type Caller, isTeamCaller } from "../accounts/caller.ts";
import { visibleProposal } from "./proposal_changes.ts";
import { type LinkCheck, saveLinkChecks } from "./proposals.ts";

/**
 * The reachability of a proposal's file links, checked when a reviewer asks (the reviewer's
 * page, "Check the links now"), never when the public form is sent: an anonymous form never
 * makes the server fetch anything. Each link is checked as a watched service's `url:` target is
 * (lib/checks/mod.ts `runCheck`, lib/targets.ts): https only, no name and password in the
 * address, every resolved address public (private, loopback, link-local... are refused, for the
 * owner too), the connection made to the address checked, at most 5 redirects each checked the
 * same way, 10 s per link. The result is stored with the proposal (kv/catalogue/proposals.ts
 * `saveLinkChecks`). Holds no KV keys of its own.
 */

/** One link's check: refused without a connection unless it is a well-formed https address. */
async function checkLink(deps: Deps, url: string, at: number): Promise<LinkCheck> {
  if (!/^https:\/\//i.test(url) || !URL.canParse(url)) {
    return { url, state: "refused", status: "not an https address", at };
  }
  const u = new URL(url);
  if (u.username || u.password) {
    return { url, state: "refused", status: "a name and password inside the address", at };
  }
  const r = await runCheck(deps, `url:${url}`, false);
  const refused = /refused: private address|refused address/.test(r.status);
  return { url, state: refused ? "refused" : r.state, status: r.status, at };
}

/** Checks every file link of proposal `id` at once; the team only. */
export async function checkProposalLinks(
  deps: Deps,
  caller: Caller,
  id: number,
): Promise<LinkCheck[]> {
  if (!isTeamCaller(caller)) forbidden("this needs the reviewer or owner role");
  const p = await visibleProposal(deps, caller, id);
  const at = deps.clock.now();
  const urls = [...new Set(p.files.map((f) => f.url))];
  const links = await Promise.all(urls.map((url) => checkLink(deps, url, at)));
  await saveLinkChecks(deps.kv, id, links, at);
  return links;
}
