/**
 * The team's pages (reviewers and the owner), under /team: the proposal queue with gate
 * checks and every transition with its reason (publication for the owner only), applications
 * (approve or decline with a reason), requests (mark handled), accounts, invitations, and
 * every account's watched services (with the machine snapshot for the owner). The same
 * domain functions as the team's API routes; team mails link here.
 */
import type { Child } from "hono/jsx";
import {
  type Account,
  eachAccount,
  getAccount,
  isOwner,
  type Role,
  ROLES,
  standingOf,
} from "../kv/accounts/accounts.ts";
import { decideApplication, listApplications } from "../kv/accounts/applications.ts";
import { type Gate, gateOf } from "../kv/catalogue/gate.ts";
import { allInvites } from "../kv/accounts/invites.ts";
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
import { listRequests, setHandled } from "../kv/forms/requests.ts";
import { listAllServices, serviceView } from "../kv/service/commands.ts";
import { shownState } from "../kv/service/state.ts";
import type { Deps } from "../lib/deps.ts";
import { readSnapshot, type Snapshot } from "../lib/machine.ts";
import { DecisionBody } from "../http/account_inputs.ts";
import { ProposalPatch } from "../http/catalogue_inputs.ts";
import { callerOf } from "../http/guards.ts";
import { fail } from "../http/errors.ts";
import {
  emptyView,
  ErrorSummary,
  type FormView,
  readForm,
  Select,
  submitForm,
  TextArea,
} from "./_form.tsx";
import { InviteTable } from "./_invites.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { standingName, when } from "./_me.tsx";
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
import { StateBadge } from "./_state.tsx";
import { Table } from "./_table.tsx";
import { requireTeamPage, seeOther, type WebCtx, webRouter } from "./_web.tsx";

const TEAM_PAGES: [path: string, label: string][] = [
  ["/team", "Proposals"],
  ["/team/applications", "Applications"],
  ["/team/requests", "Requests"],
  ["/team/accounts", "Accounts"],
  ["/team/invitations", "Invitations"],
  ["/team/services", "All services"],
];

function TeamNav(props: { here: string }) {
  return (
    <nav aria-label="Team" class="subnav">
      <ul class="inline">
        {TEAM_PAGES.map(([path, label]) => (
          <li>
            <a href={path} aria-current={path === props.here ? "page" : undefined}>{label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

const idOf = (c: WebCtx) => Number(c.req.param("id")!);

const render = (c: WebCtx, here: string, title: string, body: Child) =>
  c.render(
    <>
      <TeamNav here={here} />
      <h1>{title}</h1>
      {body}
    </>,
    { title, noindex: true },
  );

async function getTeam(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const wanted = c.req.query("status");
  const status = (STATUSES as readonly string[]).includes(wanted ?? "")
    ? wanted as typeof STATUSES[number]
    : undefined;
  const list = await listProposals(deps.kv, status);
  return render(
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

const proposalPage = async (deps: Deps, c: WebCtx, view: FormView) => {
  const me = requireTeamPage(c);
  const p = (await getProposal(deps.kv, idOf(c))).value;
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

async function postTeamProposalsId(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const id = idOf(c);
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

async function postTeamProposalLinks(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const id = idOf(c);
  await checkProposalLinks(deps, callerOf(deps, c), id);
  return seeOther(c, `/team/proposals/${id}#files`);
}

const applicationsPage = async (deps: Deps, c: WebCtx, failed?: { id: number; view: FormView }) => {
  requireTeamPage(c);
  const apps = await listApplications(deps.kv, c.req.query("all") === "1");
  const rows = [];
  for (const a of apps) rows.push({ a, who: (await getAccount(deps.kv, a.account)).value });
  // A decision on an application with no form here (unknown, or decided meanwhile) says why
  // above the list, since there is no form to put it beside.
  const formless = failed && !rows.some(({ a }) => a.id === failed.id && !a.outcome);
  return (
    <>
      <TeamNav here="/team/applications" />
      <h1>Applications</h1>
      {formless
        ? <ErrorSummary view={failed.view} formless="Your decision was not recorded" />
        : null}
      <p>
        <a href="/team/applications?all=1">Show decided ones too</a>
      </p>
      {rows.length === 0 ? <p>No open applications.</p> : null}
      {rows.map(({ a, who }) => {
        const view = failed?.id === a.id ? failed.view : emptyView({ outcome: "approved" });
        const name = who?.name || who?.email || `account ${a.account}`;
        return (
          <section aria-labelledby={`app-${a.id}`}>
            <h2 id={`app-${a.id}`}>
              <UserText>{name}</UserText>
            </h2>
            <p class="meta">
              {when(a.created)} · {who ? standingName(standingOf(who.roles)) : "erased"}
            </p>
            <p class="text">
              <UserText>{a.text}</UserText>
            </p>
            {a.outcome
              ? (
                <p>
                  {a.outcome}: <UserText>{a.reason ?? ""}</UserText>
                </p>
              )
              : (
                <form method="post" action={`/team/applications/${a.id}`} novalidate>
                  <ErrorSummary view={view} />
                  <Select
                    name="outcome"
                    label={`Decision on ${name}`}
                    view={view}
                    options={[["approved", "Approve"], ["declined", "Decline"]]}
                  />
                  <TextArea
                    name="reason"
                    label={`Reason for ${name}`}
                    view={view}
                    rows={2}
                    maxlength={2000}
                    required
                  />
                  <button type="submit">Decide on {name}</button>
                </form>
              )}
          </section>
        );
      })}
    </>
  );
};

async function postTeamApplicationsId(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const id = idOf(c);
  return await submitForm(c, {
    schema: DecisionBody,
    act: async (input) => {
      await decideApplication(deps, callerOf(deps, c), id, input);
      return "/team/applications";
    },
    show: (view) => applicationsPage(deps, c, { id, view }),
    page: { title: "Applications" },
  });
}

async function getTeamRequests(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const all = c.req.query("all") === "1";
  const list = await listRequests(deps.kv, all);
  return render(
    c,
    "/team/requests",
    "Requests",
    <>
      <p>
        {all
          ? <a href="/team/requests">Open ones only</a>
          : <a href="/team/requests?all=1">Show handled ones too</a>}
      </p>
      {list.length === 0 ? <p>No open requests.</p> : null}
      {list.map((r) => (
        <section aria-labelledby={`req-${r.id}`}>
          <h2 id={`req-${r.id}`}>
            #{r.id} {r.kind} from <UserText>{r.name}</UserText>
          </h2>
          <p class="meta">
            <UserText>{r.email}</UserText>
            {r.org
              ? (
                <>
                  {" · "}
                  <UserText>{r.org}</UserText>
                </>
              )
              : null} · {when(r.created)}
            {r.module
              ? (
                <>
                  {" · "}
                  <a href={`/modules/${encodeURIComponent(r.module)}`}>
                    <UserText>{r.module}</UserText>
                  </a>
                </>
              )
              : null}
          </p>
          <p class="text">
            <UserText>{r.text}</UserText>
          </p>
          <PostButton
            action={`/team/requests/${r.id}`}
            kind="secondary"
            fields={{ handled: r.handled === null ? "true" : "false" }}
            block
          >
            {r.handled === null ? `Mark #${r.id} handled` : `Open #${r.id} again`}
          </PostButton>
        </section>
      ))}
    </>,
  );
}

async function postTeamRequestsId(deps: Deps, c: WebCtx) {
  const me = requireTeamPage(c);
  const form = await readForm(c);
  const done = await setHandled(deps, idOf(c), form.handled === "true", `account:${me.id}`);
  if (!done) fail(404, "no such request");
  return seeOther(c, "/team/requests");
}

/** The owner's command that grants or revokes `role` (cli/roles.ts), as it is typed. */
const roleCommand = (verb: "grant" | "revoke", email: string, role: Role) =>
  `deno task roles ${verb} ${email} ${role}`;

/** One account's commands, each copyable: a grant for every role it lacks, a revoke for each held. */
function RoleCommands(props: { a: Account }) {
  const { a } = props;
  return (
    <details>
      <summary>
        Commands for <UserText>{a.email}</UserText>
      </summary>
      <ul class="commands">
        {ROLES.map((role) => {
          const verb = a.roles.includes(role) ? "revoke" : "grant";
          const id = `cmd-${a.id}-${role}`;
          return (
            <li class="field">
              <label for={id}>
                {verb === "grant" ? "Grant" : "Revoke"} {role}
              </label>
              <input id={id} type="text" readonly value={roleCommand(verb, a.email, role)} />
              <button type="button" data-copy={`#${id}`} hidden>
                Copy: {verb} {role} for <UserText>{a.email}</UserText>
              </button>
            </li>
          );
        })}
      </ul>
    </details>
  );
}

async function getTeamAccounts(deps: Deps, c: WebCtx) {
  const me = requireTeamPage(c);
  const owner = isOwner(me);
  const rows: Account[] = [];
  for await (const e of eachAccount(deps.kv)) rows.push(e.value);
  return render(
    c,
    "/team/accounts",
    "Accounts and roles",
    <>
      <p>
        Roles are never given through this site. {owner ? "You give" : "The owner gives"} or{" "}
        {owner ? "take" : "takes"}{" "}
        one back with a command on the server machine, in the folder the server runs from and with
        its KV_PATH; each change is a line in the record trail (a public log of changes that anyone
        can check). {owner ? "Each account's exact commands are below, ready to copy." : ""}
      </p>
      <p>
        <code>deno task roles grant &lt;address&gt; &lt;role&gt;</code>,{" "}
        <code>deno task roles revoke &lt;address&gt; &lt;role&gt;</code>,{" "}
        <code>deno task roles list</code>. Roles: {ROLES.join(", ")}.
      </p>
      <Table
        caption="Every account"
        rows={rows}
        columns={[
          {
            label: "Name",
            cell: (a) =>
              a.slug && a.name
                ? (
                  <a href={`/people/${a.slug}`}>
                    <UserText>{a.name}</UserText>
                  </a>
                )
                : <UserText>{a.name || "(no name)"}</UserText>,
          },
          { label: "Address", cell: (a) => <UserText>{a.email}</UserText> },
          {
            label: "Roles",
            cell: (a) =>
              a.roles.length ? a.roles.join(", ") : `none (${standingName("collector")})`,
          },
          { label: "Since", cell: (a) => when(a.created) },
          owner ? { label: "Change its roles", cell: (a) => <RoleCommands a={a} /> } : null,
        ]}
      />
    </>,
  );
}

async function getTeamInvitations(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const now = deps.clock.now();
  const list = await allInvites(deps.kv);
  const names = new Map<number, string>();
  for (const i of list) {
    if (!names.has(i.inviter)) {
      names.set(i.inviter, (await getAccount(deps.kv, i.inviter)).value?.name ?? "(erased)");
    }
  }
  return render(
    c,
    "/team/invitations",
    "Invitations",
    <InviteTable
      caption="Every invitation, newest first"
      invites={list}
      now={now}
      empty="No invitations."
      inviters={names}
    />,
  );
}

async function getTeamServices(deps: Deps, c: WebCtx) {
  const me = requireTeamPage(c);
  const now = deps.clock.now();
  const all = await listAllServices(deps.kv);
  const names = new Map<number, string>();
  for (const { service } of all) {
    if (!names.has(service.account)) {
      const a = (await getAccount(deps.kv, service.account)).value;
      names.set(service.account, a?.name || a?.email || `account ${service.account}`);
    }
  }
  const snap = isOwner(me) ? await readSnapshot(deps.config) : null;
  return render(
    c,
    "/team/services",
    "All watched services",
    <>
      <AllServices all={all} names={names} now={now} />
      {isOwner(me) ? <MachineSnapshot snap={snap} /> : null}
    </>,
  );
}

type Listed = Awaited<ReturnType<typeof listAllServices>>;

function AllServices(
  { all, names, now }: { all: Listed; names: Map<number, string>; now: number },
) {
  // The state (paused shows as such) and status: no maintenance windows are read here (one read
  // per account), so a service in a window shows what its checks say.
  const rows = all.map(({ service, beat }) => ({
    service,
    v: serviceView(service, beat, now, []),
  }));
  return (
    <Table
      caption="Every account's services"
      rows={rows}
      empty={<p>No services.</p>}
      columns={[
        {
          label: "Account",
          cell: ({ service }) => <UserText>{names.get(service.account) ?? ""}</UserText>,
        },
        { label: "Name", cell: ({ v }) => <UserText>{v.name}</UserText> },
        { label: "Target", cell: ({ service }) => <UserText>{service.check}</UserText> },
        { label: "State", cell: ({ v }) => <StateBadge state={shownState(v)} /> },
        { label: "Last result", cell: ({ v }) => <UserText>{v.status}</UserText> },
      ]}
    />
  );
}

/** The owner's view of the machine's own services (lib/machine.ts), when configured. */
function MachineSnapshot({ snap }: { snap: Snapshot | null }) {
  return (
    <section aria-labelledby="machine-h">
      <h2 id="machine-h">This machine</h2>
      {snap
        ? (
          <>
            <p class="meta">
              <UserText>{snap.host}</UserText> · read {snap.read}
            </p>
            <ul>
              {snap.services.map((s) => (
                <li>
                  <UserText>{s.group}</UserText> · <UserText>{s.name}</UserText> ·{" "}
                  <UserText>{s.state}</UserText> · <UserText>{s.status}</UserText>
                </li>
              ))}
            </ul>
          </>
        )
        : <p>No machine snapshot is configured.</p>}
    </section>
  );
}

export function teamPages(deps: Deps) {
  const app = webRouter();
  // ---- proposals ----
  app.get("/team", (c) => getTeam(deps, c));

  app.get(
    "/team/proposals/:id{[0-9]{1,15}}",
    async (c) =>
      c.render(await proposalPage(deps, c, emptyView()), { title: "Proposal", noindex: true }),
  );

  app.post("/team/proposals/:id{[0-9]{1,15}}", (c) => postTeamProposalsId(deps, c));

  app.post("/team/proposals/:id{[0-9]{1,15}}/links", (c) => postTeamProposalLinks(deps, c));

  // ---- applications ----
  app.get(
    "/team/applications",
    async (c) =>
      c.render(await applicationsPage(deps, c), { title: "Applications", noindex: true }),
  );

  app.post("/team/applications/:id{[0-9]{1,15}}", (c) => postTeamApplicationsId(deps, c));

  // ---- requests ----
  app.get("/team/requests", (c) => getTeamRequests(deps, c));

  app.post("/team/requests/:id{[0-9]{1,15}}", (c) => postTeamRequestsId(deps, c));

  // ---- accounts ----
  app.get("/team/accounts", (c) => getTeamAccounts(deps, c));

  // ---- invitations ----
  app.get("/team/invitations", (c) => getTeamInvitations(deps, c));

  // ---- every account's services ----
  app.get("/team/services", (c) => getTeamServices(deps, c));

  return app;
}
