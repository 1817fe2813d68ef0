/**
 * The team's proposal pages: the queue (/team) and a proposal with its gate checks, its moves and
 * their reasons (publication for the owner only), its records and its files' link checks.
 */
import { getAccount, isOwner } from "../kv/accounts/accounts.ts";
import { type Gate, gateOf } from "../kv/catalogue/gate.ts";
import {
  changeProposal,
  type Mover,
  movesOf,
  type OfferedMove,
  type ProposalMove,
} from "../kv/catalogue/proposal_changes.ts";
import { checkProposalLinks } from "../kv/catalogue/proposal_links.ts";
import {
  type Decision,
  getData,
  getLinkChecks,
  getProposal,
  listProposals,
  MAX_REASON,
  type Proposal,
  STATUSES,
} from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import { ProposalPatch } from "../http/catalogue_inputs.ts";
import { callerOf } from "../http/guards.ts";
import { fail } from "../http/errors.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { ErrorSummary, Select } from "./_form_controls.tsx";
import { UserText } from "./_layout.tsx";
import { when } from "./_me.tsx";
import {
  DecisionHistory,
  FileLinks,
  GateChecks,
  ProposalFields,
  proposalRows,
  RecordTrail,
  STATUS_NAMES,
  STATUS_WORDS,
} from "./_proposal.tsx";
import { Table } from "./_table.tsx";
import { requireTeamPage, routeId, seeOther, type WebCtx } from "./_web.tsx";
import { renderTeamPage, TeamNav } from "./_team.tsx";

export async function getTeam(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const wanted = c.req.query("status");
  const status = (STATUSES as readonly string[]).includes(wanted ?? "")
    ? wanted as typeof STATUSES[number]
    : undefined;
  const list = await listProposals(deps.kv, status);
  return renderTeamPage(
    c,
    "/team",
    "Proposal queue",
    <>
      <form method="get" action="/team" class="filters">
        <Select
          name="status"
          label="Status"
          view={emptyView({ status: status ?? "" })}
          options={[
            ["", "Every status"],
            ...STATUSES.map((s) => [s, STATUS_NAMES[s]] as [string, string]),
          ]}
        />
        <button type="submit">Show</button>
      </form>
      <Table
        caption="Proposals, newest first"
        rows={list}
        empty={<p>No proposals.</p>}
        columns={[
          {
            label: "Title",
            cell: (p) => (
              <a href={`/team/proposals/${p.id}`}>
                #{p.id} <UserText>{p.title}</UserText>
              </a>
            ),
          },
          { label: "Status", cell: (p) => STATUS_WORDS[p.status] },
          { label: "From", cell: (p) => <UserText>{p.name}</UserText> },
          { label: "Updated", cell: (p) => when(p.updated) },
        ]}
      />
    </>,
  );
}

/** What each move does, in the words of its button and its consequence. */
const MOVE_WORDS: Record<ProposalMove["name"], { button: string; consequence: string }> = {
  review: {
    button: "Start the review",
    consequence: "The proposal is under review: it can then be admitted, rejected or published. " +
      "The submitter is not mailed.",
  },
  admit: {
    button: "Admit",
    consequence: "The proposal is admitted and waits for the owner to publish it. The submitter " +
      "is mailed the reason.",
  },
  reject: {
    button: "Reject",
    consequence: "The proposal is rejected and leaves the queue. The submitter is mailed the " +
      "reason.",
  },
  publish: {
    button: "Publish",
    consequence: "The module appears in the catalogue under the submitter's name, and the " +
      "submitter is mailed its address (with the note, if you write one).",
  },
  "take-back": {
    button: "Take it back from the catalogue",
    consequence: "The module leaves the catalogue and the proposal is admitted again. The " +
      "submitter is mailed (with the note, if you write one).",
  },
  withdraw: {
    button: "Withdraw",
    consequence: "The submitter withdraws the proposal; it stays withdrawn.",
  },
};

const WHO_WORDS: Record<Mover, string> = {
  team: "any reviewer or the owner",
  owner: "the owner only",
  submitter: "the submitter only",
};

/** A move's reason field: required where the rule needs one, else an optional note. */
function MoveReason(props: { move: ProposalMove; view: FormView }) {
  const { move, view } = props;
  const id = `reason-${move.name}`;
  const mine = view.values.status === move.to;
  const error = mine ? view.errors.reason ?? view.error : undefined;
  const label = move.reason
    ? `Reason to ${MOVE_WORDS[move.name].button.toLowerCase()} (mailed to the submitter)`
    : `Note to the submitter (optional)`;
  return (
    <div class={error ? "field invalid" : "field"}>
      <label for={id}>{label}</label>
      {error ? <p class="error" id={`${id}-error`}>{error}</p> : null}
      <textarea
        id={id}
        name="reason"
        rows={3}
        maxlength={MAX_REASON}
        required={move.reason}
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      >
        {mine ? view.values.reason ?? "" : ""}
      </textarea>
    </div>
  );
}

/** Why a move the state allows is not this person's to make now. */
function blockedWords(o: OfferedMove, gate: Gate): string {
  if (o.blocked === "gate") {
    return `Not yet: the gate is closed (${gate.failed.join(", ")}); it opens when every check ` +
      "passes.";
  }
  return `Only ${WHO_WORDS[o.move.who].replace(/ only$/, "")} may do this.`;
}

/** The moves the proposal's state allows, in the workflow's order (kv/catalogue/proposal_changes.ts). */
function Moves(props: { p: Proposal; offered: OfferedMove[]; gate: Gate; view: FormView }) {
  const { p, gate, view } = props;
  const offered = props.offered.filter((o) => o.move.who !== "submitter");
  if (offered.length === 0) {
    return (
      <p>
        {p.status === "received"
          ? "Nothing to decide yet: the submitter has not confirmed the address."
          : `Nothing more to decide: a proposal that is ${p.status} stays so.`}
      </p>
    );
  }
  return (
    <ul class="moves">
      {offered.map((o) => {
        const words = MOVE_WORDS[o.move.name];
        return (
          <li>
            <h3>{words.button}</h3>
            <p>
              {words.consequence} <span class="meta">Who may: {WHO_WORDS[o.move.who]}.</span>
            </p>
            {o.blocked
              ? <p class="hint">{blockedWords(o, gate)}</p>
              : (
                <form method="post" action={`/team/proposals/${p.id}`} novalidate>
                  <input type="hidden" name="status" value={o.move.to} />
                  {o.move.name === "review" ? null : <MoveReason move={o.move} view={view} />}
                  <button type="submit">{words.button}</button>
                </form>
              )}
          </li>
        );
      })}
    </ul>
  );
}

/** Who an actor of the trail is, in words ("account:<id>" by its name or address). */
async function actorNames(deps: Deps, decisions: Decision[]): Promise<Map<string, string>> {
  const names = new Map<string, string>([
    ["public", "the submitter, through the public form"],
    ["service", "the team's service token"],
    ["system", "the service itself"],
    ["owner", "the owner's command"],
  ]);
  for (const d of decisions) {
    const m = d.actor.match(/^account:(\d+)$/);
    if (!m || names.has(d.actor)) continue;
    const a = (await getAccount(deps.kv, Number(m[1]))).value;
    names.set(d.actor, a ? a.name || a.email : "an erased account");
  }
  return names;
}

export const proposalPage = async (deps: Deps, c: WebCtx, view: FormView) => {
  const me = requireTeamPage(c);
  const p = (await getProposal(deps.kv, routeId(c))).value;
  if (!p) fail(404, "no such proposal");
  const [gate, data, links, names] = await Promise.all([
    gateOf(deps.kv, p),
    getData(deps.kv, p.id),
    getLinkChecks(deps.kv, p.id),
    actorNames(deps, p.decisions),
  ]);
  const offered = movesOf(callerOf(deps, c), p, gate);
  const checks = new Map((links?.links ?? []).map((l) => [l.url, l]));
  // A refused move says why above the page too (a 409 has no field to stand beside).
  return (
    <>
      <TeamNav here="/team" />
      <h1>
        #{p.id} <UserText>{p.title}</UserText>
      </h1>
      <ErrorSummary view={view} labels={{ reason: "Reason", status: "Decision" }} />
      <ProposalFields rows={proposalRows(p)} />
      <h2>Summary</h2>
      <p class="text">
        <UserText>{p.summary}</UserText>
      </p>
      <h2 id="files">Files</h2>
      <FileLinks files={p.files} checks={checks} />
      {p.files.length
        ? (
          <form method="post" action={`/team/proposals/${p.id}/links`}>
            <p class="hint">
              The service opens each https link from its own network, public addresses only (no
              address of a private network, none with a name and password in it), at most 10 s each,
              and shows what it found. Nothing is fetched until a reviewer asks.
            </p>
            <button type="submit" class="secondary">Check the links now</button>
          </form>
        )
        : null}
      <h2>Record trail</h2>
      <RecordTrail p={p} data={data} />
      <h2>Gate</h2>
      <GateChecks gate={gate} />
      <h2>History</h2>
      <DecisionHistory decisions={p.decisions} names={names} />
      <h2>Decide</h2>
      <p class="meta">
        You are{" "}
        {isOwner(me) ? "the owner" : "a reviewer"}. Only the moves this proposal's state allows are
        listed, in the workflow's order.
      </p>
      <Moves p={p} offered={offered} gate={gate} view={view} />
    </>
  );
};

export async function postTeamProposalsId(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const id = routeId(c);
  return await submitForm(c, {
    schema: ProposalPatch,
    input: (f) => ({ status: f.status, reason: f.reason ?? "" }),
    act: async (change) => {
      await changeProposal(deps, callerOf(deps, c), id, change);
      return `/team/proposals/${id}`;
    },
    show: (view) => proposalPage(deps, c, view),
    page: { title: "Proposal" },
  });
}

export async function postTeamProposalLinks(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const id = routeId(c);
  await checkProposalLinks(deps, callerOf(deps, c), id);
  return seeOther(c, `/team/proposals/${id}#files`);
}
