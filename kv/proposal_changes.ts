import type { Deps } from "../lib/deps.ts";
import { type Learning, learningOf, learningProblem } from "../lib/learning.ts";
import { conflict, forbidden, invalid, notFound } from "../lib/errors.ts";
import { originSubject } from "../lib/ip.ts";
import {
  type Chain,
  type ChainRecord,
  MAX_RECORDS_JSON,
  verifyRecordChain,
} from "../lib/record_chain.ts";
import { proposalConfirmMail, proposalDecisionMail } from "../mail/proposals.ts";
import { actorOf, type Caller, FRESH_REQUIRED, isOwnerCaller, isTeamCaller } from "./caller.ts";
import {
  ADMIT_FROM,
  createProposal,
  deleteProposal,
  getProposal,
  moveStatus,
  OPEN,
  type Proposal,
  type ProposalInput,
  REJECT_FROM,
  setAttribution,
  statusUrl,
} from "./proposals.ts";
import { publishProposal, unpublishProposal } from "./publication.ts";
import { issueLink } from "./sign_in.ts";
import { RULES, spendUse } from "./rate_limit.ts";

/**
 * Who may do what to a proposal: the status table and its checks, used by the API and the
 * pages alike. Storage and the allowed source states are kv/proposals.ts's; publication is
 * kv/publication.ts's. Holds no KV keys.
 *
 *   to          who                          from                          reason  mail
 *   reviewing   team                         confirmed                     -       -
 *   admitted    team                         reviewing                     yes     yes
 *   admitted    owner                        published (takes it back)     -       yes
 *   rejected    team                         confirmed, reviewing          yes     yes
 *   published   owner                        admitted, reviewing; gate     -       yes
 *   withdrawn   submitter                    received .. admitted          yes     -
 *   attribution submitter, fresh sign-in     any                           -       -
 */

export const MIN_REASON = 3;

export interface ProposalForm extends Omit<ProposalInput, "learning">, Partial<Learning> {
  trail: string;
  records?: ChainRecord[] | null;
  chain?: Chain | null;
}

/**
 * Stores a proposal sent through the form. Signed in with its address: confirmed at once and
 * the team is told. Otherwise received, and a confirmation link is mailed with the status
 * link (the only time its secret is known).
 */
export async function submitProposal(
  deps: Deps,
  caller: Caller,
  form: ProposalForm,
  /** The client's address: the form's per-origin limit. */
  origin: string,
): Promise<Proposal> {
  const records = form.records ?? [];
  const chain = form.chain ?? null;
  const learning = learningOf(form);
  const problem = learningProblem(learning);
  if (problem) invalid(problem.message, problem.field);
  if (JSON.stringify([records, chain]).length > MAX_RECORDS_JSON) {
    invalid(`records: records and chain over ${MAX_RECORDS_JSON} characters of JSON`, "records");
  }
  // Counted once the input is known good: a refused form does not use up the hour.
  const now = deps.clock.now();
  await spendUse(deps.kv, RULES.proposalByOrigin, originSubject(origin), now);
  await spendUse(deps.kv, RULES.proposalByAddress, originSubject(form.email), now);
  const me = caller.account;
  const submitter = me && me.email === form.email ? me : null;
  const sent = records.length > 0 || (chain !== null && chain.length > 0);
  const verdict = await verifyRecordChain(records, chain ?? undefined);
  const { proposal, key } = await createProposal(
    deps,
    {
      name: form.name,
      email: form.email,
      title: form.title,
      area: form.area,
      summary: form.summary,
      files: form.files,
      attribution: form.attribution,
      who: form.who,
      learning,
    },
    {
      trail: form.trail,
      records,
      chain,
      verdict: { sent, ok: verdict.ok, detail: verdict.detail, count: records.length },
    },
    submitter,
    me ? `account:${me.id}` : "public",
  );
  if (proposal.status === "received") {
    await issueLink(
      deps,
      { purpose: "proposal", email: proposal.email, name: proposal.name },
      proposalConfirmMail(proposal, statusUrl(deps.config.baseUrl, proposal.id, key)),
    );
  }
  return proposal;
}

export interface ProposalChange {
  status?: "reviewing" | "admitted" | "rejected" | "published" | "withdrawn";
  reason: string;
  attribution?: "keep" | "remove";
}

/** The submitter: signed in with the proposal's address (never through the service token). */
export const isSubmitter = (c: Caller, p: Proposal) =>
  Boolean(c.account && p.email && c.account.email === p.email && c.team !== "service");

/** The proposal for a caller who may see it: team or submitter; anyone else not found. */
export async function visibleProposal(deps: Deps, caller: Caller, id: number): Promise<Proposal> {
  const p = (await getProposal(deps.kv, id)).value;
  if (!p || !(isTeamCaller(caller) || isSubmitter(caller, p))) notFound("no such proposal");
  return p;
}

const needReason = (reason: string) => {
  if ([...reason].length < MIN_REASON) {
    invalid(`reason: at least ${MIN_REASON} characters`, "reason");
  }
};

/** Changes a proposal's status or attribution, as the table above allows. */
export async function changeProposal(
  deps: Deps,
  caller: Caller,
  id: number,
  change: ProposalChange,
): Promise<Proposal> {
  const p = await visibleProposal(deps, caller, id);
  const submitter = isSubmitter(caller, p);
  const actor = actorOf(caller);
  const { status, reason, attribution } = change;
  if (status !== undefined && attribution !== undefined) {
    invalid("status: send either status or attribution, not both", "status");
  }
  if (attribution !== undefined) {
    if (!submitter) forbidden("only the submitter sets the attribution");
    if (!caller.fresh) conflict(FRESH_REQUIRED, { fresh_required: true });
    return await setAttribution(deps, id, attribution, actor);
  }
  if (status === undefined) return invalid("status: send status or attribution", "status");
  if (status === "withdrawn") {
    if (!submitter) forbidden("only the submitter withdraws a proposal");
    needReason(reason);
    return await moveStatus(deps, id, { to: "withdrawn", from: OPEN, reason, actor });
  }
  if (!isTeamCaller(caller)) forbidden("this needs the reviewer or owner role");
  if (status === "published") {
    if (!isOwnerCaller(caller)) forbidden("only the owner publishes");
    return await publishProposal(deps, { id, actor, reason });
  }
  if (status === "admitted" && p.status === "published") {
    if (!isOwnerCaller(caller)) forbidden("only the owner takes a published proposal back");
    return await unpublishProposal(deps, { id, actor, reason });
  }
  if (status === "reviewing") {
    return await moveStatus(deps, id, { to: "reviewing", from: ["confirmed"], reason, actor });
  }
  needReason(reason);
  return await moveStatus(deps, id, {
    to: status,
    from: status === "admitted" ? ADMIT_FROM : REJECT_FROM,
    reason,
    actor,
    mail: (next) =>
      proposalDecisionMail(next, status, reason, statusUrl(deps.config.baseUrl, next.id)),
  });
}

/** Deletes an unpublished proposal: its submitter or the owner. */
export async function removeProposal(deps: Deps, caller: Caller, id: number): Promise<void> {
  const p = await visibleProposal(deps, caller, id);
  if (!isSubmitter(caller, p) && !isOwnerCaller(caller)) {
    forbidden("only the submitter or the owner deletes a proposal");
  }
  await deleteProposal(deps, id, actorOf(caller));
}
