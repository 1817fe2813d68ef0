/**
 * The team's pages (reviewers and the owner), under /team: the proposal queue with gate
 * checks and every transition with its reason (publication for the owner only), applications
 * (approve or decline with a reason), requests (mark handled), accounts, invitations, and
 * every account's watched services (with the machine snapshot for the owner). The same
 * domain functions as the team's API routes; team mails link here.
 */
import type { Child } from "hono/jsx";
import { type Account, eachAccount, getAccount, isOwner, standingOf } from "../kv/accounts.ts";
import { decideApplication, listApplications } from "../kv/applications.ts";
import { type Gate, gateOf } from "../kv/gate.ts";
import { allInvites } from "../kv/invites.ts";
import { changeProposal } from "../kv/proposal_changes.ts";
import { getProposal, listProposals, type Proposal, STATUSES } from "../kv/proposals.ts";
import { listRequests, setHandled } from "../kv/requests.ts";
import { listAllServices, serviceView } from "../kv/services.ts";
import { shownState } from "../kv/service_state.ts";
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
import { U } from "./_layout.tsx";
import { when } from "./_me.tsx";
import { StateBadge } from "./_state.tsx";
import { requireTeamPage, seeOther, type WebCtx, webRouter } from "./_web.tsx";

export const TEAM_PAGES: [path: string, label: string][] = [
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
          options={[["", "Every status"], ...STATUSES.map((s) => [s, s] as [string, string])]}
        />
        <button type="submit">Show</button>
      </form>
      {list.length === 0 ? <p>No proposals.</p> : (
        <table class="stack">
          <caption>Proposals, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Status</th>
              <th scope="col">From</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.map((p) => (
              <tr>
                <td data-label="Title">
                  <a href={`/team/proposals/${p.id}`}>
                    #{p.id} <U>{p.title}</U>
                  </a>
                </td>
                <td data-label="Status">{p.status}</td>
                <td data-label="From">
                  <U>{p.name}</U>
                </td>
                <td data-label="Updated">{when(p.updated)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>,
  );
}

const proposalPage = async (deps: Deps, c: WebCtx, view: FormView) => {
  const me = requireTeamPage(c);
  const p = (await getProposal(deps.kv, idOf(c))).value;
  if (!p) fail(404, "no such proposal");
  const gate = await gateOf(deps.kv, p);
  const moves: [string, string][] = [
    ["reviewing", "Start review (reviewing)"],
    ["admitted", "Admit"],
    ["rejected", "Reject"],
    ...(isOwner(me) ? [["published", "Publish"] as [string, string]] : []),
  ];
  return (
    <>
      <TeamNav here="/team" />
      <h1>
        #{p.id} <U>{p.title}</U>
      </h1>
      <ProposalFacts p={p} />
      <h2>Summary</h2>
      <p class="text">
        <U>{p.summary}</U>
      </p>
      {p.files.length
        ? (
          <>
            <h2>Files</h2>
            <ul>
              {p.files.map((f) => (
                <li>
                  <U>{JSON.stringify(f)}</U>
                </li>
              ))}
            </ul>
          </>
        )
        : null}
      <GateChecks gate={gate} />
      <Decisions p={p} />
      <h2>Change its status</h2>
      <form method="post" action={`/team/proposals/${p.id}`} novalidate>
        <ErrorSummary view={view} labels={{ status: "New status", reason: "Reason" }} />
        <Select name="status" label="New status" view={view} options={moves} />
        <TextArea
          name="reason"
          label="Reason"
          hint="Needed to admit or reject; mailed to the submitter."
          view={view}
          rows={3}
          maxlength={1000}
        />
        <button type="submit">Change status</button>
      </form>
    </>
  );
};

function ProposalFacts({ p }: { p: Proposal }) {
  return (
    <dl>
      <dt>Status</dt>
      <dd>{p.status}</dd>
      <dt>Submitted by</dt>
      <dd>
        <U>{p.name}</U> {p.email
          ? (
            <>
              (<U>{p.email}</U>)
            </>
          )
          : null}
      </dd>
      <dt>Area</dt>
      <dd>{p.area}</dd>
      <dt>Attribution</dt>
      <dd>{p.attribution}</dd>
      <dt>Received</dt>
      <dd>{when(p.created)}</dd>
      {p.slug && p.status === "published"
        ? (
          <>
            <dt>Module</dt>
            <dd>
              <a href={`/modules/${p.slug}`}>/modules/{p.slug}</a>
            </dd>
          </>
        )
        : null}
    </dl>
  );
}

/** Whether the gate is open, and each of its checks. */
function GateChecks({ gate }: { gate: Gate }) {
  return (
    <>
      <h2>Gate checks</h2>
      <p>{gate.open ? "The gate is open: it can be published." : "The gate is closed."}</p>
      <ul class="gate">
        {gate.checks.map((g) => (
          <li>
            <strong>{g.ok ? "passed" : "failed"}</strong> {g.name}: <U>{g.detail}</U>
          </li>
        ))}
      </ul>
    </>
  );
}

/** The proposal's decisions so far, oldest first. */
function Decisions({ p }: { p: Proposal }) {
  return (
    <>
      <h2>Decisions</h2>
      {p.decisions.length === 0 ? <p>None yet.</p> : (
        <ol>
          {p.decisions.map((d) => (
            <li>
              {when(d.at)}: {d.from} → {d.status}
              {d.reason
                ? (
                  <>
                    {" — "}
                    <U>{d.reason}</U>
                  </>
                )
                : null}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

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
              <U>{name}</U>
            </h2>
            <p class="meta">
              {when(a.created)} · {who ? standingOf(who.roles) : "erased"}
            </p>
            <p class="text">
              <U>{a.text}</U>
            </p>
            {a.outcome
              ? (
                <p>
                  {a.outcome}: <U>{a.reason ?? ""}</U>
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
            #{r.id} {r.kind} from <U>{r.name}</U>
          </h2>
          <p class="meta">
            <U>{r.email}</U>
            {r.org
              ? (
                <>
                  {" · "}
                  <U>{r.org}</U>
                </>
              )
              : null} · {when(r.created)}
            {r.module
              ? (
                <>
                  {" · "}
                  <a href={`/modules/${encodeURIComponent(r.module)}`}>
                    <U>{r.module}</U>
                  </a>
                </>
              )
              : null}
          </p>
          <p class="text">
            <U>{r.text}</U>
          </p>
          <form method="post" action={`/team/requests/${r.id}`}>
            <input type="hidden" name="handled" value={r.handled === null ? "true" : "false"} />
            <button type="submit" class="secondary">
              {r.handled === null ? `Mark #${r.id} handled` : `Open #${r.id} again`}
            </button>
          </form>
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

async function getTeamAccounts(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const rows: Account[] = [];
  for await (const e of eachAccount(deps.kv)) rows.push(e.value);
  return render(
    c,
    "/team/accounts",
    "Accounts",
    <table class="stack">
      <caption>Every account</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Address</th>
          <th scope="col">Standing</th>
          <th scope="col">Since</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((a) => (
          <tr>
            <td data-label="Name">
              {a.slug && a.name
                ? (
                  <a href={`/people/${a.slug}`}>
                    <U>{a.name}</U>
                  </a>
                )
                : <U>{a.name || "(no name)"}</U>}
            </td>
            <td data-label="Address">
              <U>{a.email}</U>
            </td>
            <td data-label="Standing">{standingOf(a.roles)}</td>
            <td data-label="Since">{when(a.created)}</td>
          </tr>
        ))}
      </tbody>
    </table>,
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
    list.length === 0 ? <p>No invitations.</p> : (
      <table class="stack">
        <caption>Every invitation, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Address</th>
            <th scope="col">Invited by</th>
            <th scope="col">Sent</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {list.map((i) => (
            <tr>
              <td data-label="Address">
                <U>{i.email}</U>
              </td>
              <td data-label="Invited by">
                <U>{names.get(i.inviter) ?? ""}</U>
              </td>
              <td data-label="Sent">{when(i.created)}</td>
              <td data-label="Outcome">
                {i.accepted !== null ? "accepted" : i.expires <= now ? "expired" : "open"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    ),
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
  return all.length === 0 ? <p>No services.</p> : (
    <table class="stack">
      <caption>Every account's services</caption>
      <thead>
        <tr>
          <th scope="col">Account</th>
          <th scope="col">Name</th>
          <th scope="col">Target</th>
          <th scope="col">State</th>
          <th scope="col">Last result</th>
        </tr>
      </thead>
      <tbody>
        {all.map(({ service, beat }) => {
          // The state (paused shows as such) and status: no maintenance windows are read here
          // (one read per account), so a service in a window shows what its checks say.
          const v = serviceView(service, beat, now, []);
          return (
            <tr>
              <td data-label="Account">
                <U>{names.get(service.account) ?? ""}</U>
              </td>
              <td data-label="Name">
                <U>{v.name}</U>
              </td>
              <td data-label="Target">
                <U>{service.check}</U>
              </td>
              <td data-label="State">
                <StateBadge state={shownState(v)} />
              </td>
              <td data-label="Last result">
                <U>{v.status}</U>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
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
              <U>{snap.host}</U> · read {snap.read}
            </p>
            <ul>
              {snap.services.map((s) => (
                <li>
                  <U>{s.group}</U> · <U>{s.name}</U> · <U>{s.state}</U> · <U>{s.status}</U>
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
