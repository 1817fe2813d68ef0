import type { Deps } from "../../lib/deps.ts";
import { type Learning, learningOf, learningProblem } from "../../lib/learning.ts";
import { conflict, forbidden, invalid, notFound } from "../../lib/errors.ts";
import { originSubject } from "../../lib/ip.ts";
import {
  type Chain,
  type ChainRecord,
  MAX_RECORDS_JSON,
  verifyRecordChain,
} from "../../lib/record_chain.ts";
import { proposalConfirmMail, proposalDecisionMail } from "../../mail/proposals.ts";
import {
  actorOf,
  type Caller,
  FRESH_REQUIRED,
  isOwnerCaller,
  isTeamCaller,
} from "../accounts/caller.ts";
import {
  ADMIT_FROM,
  createProposal,
  deleteProposal,
  getProposal,
  moveStatus,
  OPEN,
  type Proposal,
  type ProposalInput,
  type ProposalStatus,
  PUBLISH_FROM,
  REJECT_FROM,
  setAttribution,
  statusUrl,
} from "./proposals.ts";
import type { Gate } from "./gate.ts";
import { publishProposal, unpublishProposal } from "./publication.ts";
import { issueLink } from "../accounts/sign_in.ts";
import { RULES, spendUse } from "../store/rate_limit.ts";

/**
 * Who may do what to a proposal: the status table and its checks, used by the API and the
 * pages alike. Storage and the allowed source states are kv/catalogue/proposals.ts's; publication is
 * kv/catalogue/publication.ts's. Holds no KV keys.
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

const MIN_REASON = 3;

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
const isSubmitter = (c: Caller, p: Proposal) =>
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

/** Who may make a move: any reviewer or the owner (or the service token), the owner, the submitter. */
export type Mover = "team" | "owner" | "submitter";

/** One move of the status table above: the rule the API and the pages both follow. */
export interface ProposalMove {
  /** The move's name (the pages key their words by it). */
  name: "review" | "admit" | "reject" | "publish" | "take-back" | "withdraw";
  to: ProposalStatus;
  from: readonly ProposalStatus[];
  who: Mover;
  /** A reason of at least MIN_REASON characters is needed. */
  reason: boolean;
  /** The submitter is mailed (with the reason). */
  mails: boolean;
  /** Allowed only while the publication gate is open (kv/catalogue/gate.ts). */
  gate: boolean;
}

/** Every status move, in the workflow's order. */
export const MOVES: readonly ProposalMove[] = [
  {
    name: "review",
    to: "reviewing",
    from: ["confirmed"],
    who: "team",
    reason: false,
    mails: false,
    gate: false,
  },
  {
    name: "admit",
    to: "admitted",
    from: ADMIT_FROM,
    who: "team",
    reason: true,
    mails: true,
    gate: false,
  },
  {
    name: "reject",
    to: "rejected",
    from: REJECT_FROM,
    who: "team",
    reason: true,
    mails: true,
    gate: false,
  },
  {
    name: "publish",
    to: "published",
    from: PUBLISH_FROM,
    who: "owner",
    reason: false,
    mails: true,
    gate: true,
  },
  {
    name: "take-back",
    to: "admitted",
    from: ["published"],
    who: "owner",
    reason: false,
    mails: true,
    gate: false,
  },
  {
    name: "withdraw",
    to: "withdrawn",
    from: OPEN,
    who: "submitter",
    reason: true,
    mails: false,
    gate: false,
  },
];

/**
 * The move a change to `status` asks for: the one allowed from `current`, else the first to that
 * status (its `from` then refuses the change with 409, after the caller's role is checked).
 */
const moveFor = (status: ProposalStatus, current: ProposalStatus): ProposalMove | null =>
  MOVES.find((m) => m.to === status && m.from.includes(current)) ??
    MOVES.find((m) => m.to === status) ?? null;

/** Why `caller` may not make `move` on `p`, as the API says it (403), or null. */
function refusedMover(caller: Caller, p: Proposal, move: ProposalMove): string | null {
  if (move.who === "submitter") {
    return isSubmitter(caller, p) ? null : "only the submitter withdraws a proposal";
  }
  if (!isTeamCaller(caller)) return "this needs the reviewer or owner role";
  if (move.who === "owner" && !isOwnerCaller(caller)) {
    return move.name === "publish"
      ? "only the owner publishes"
      : "only the owner takes a published proposal back";
  }
  return null;
}

/** A move the proposal's state allows, and whether this caller may make it now. */
export interface OfferedMove {
  move: ProposalMove;
  /** null: allowed; "role": someone else's to make; "gate": waits for the gate's checks. */
  blocked: null | "role" | "gate";
}

/**
 * The moves `p`'s state allows, in the workflow's order, each with whether `caller` may make it
 * now: the same table and role checks `changeProposal` applies, and the gate as publication
 * checks it, so a page offers no move the API would refuse.
 */
export function movesOf(caller: Caller, p: Proposal, gate: Gate): OfferedMove[] {
  return MOVES.filter((m) => m.from.includes(p.status)).map((move) => ({
    move,
    blocked: refusedMover(caller, p, move) !== null
      ? "role"
      : move.gate && !gate.open
      ? "gate"
      : null,
  }));
}

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
  const move = moveFor(status, p.status);
  if (!move) return invalid(`status: a proposal cannot be moved to ${status}`, "status");
  const refused = refusedMover(caller, p, move);
  if (refused) forbidden(refused);
  if (move.reason) needReason(reason);
  if (move.name === "publish") return await publishProposal(deps, { id, actor, reason });
  if (move.name === "take-back") return await unpublishProposal(deps, { id, actor, reason });
  return await moveStatus(deps, id, {
    to: move.to,
    from: move.from,
    reason,
    actor,
    mail: move.mails
      ? (next) =>
        proposalDecisionMail(
          next,
          move.to,
          reason,
          statusUrl(deps.config.baseUrl, next.id),
        )
      : undefined,
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
