/**
 * Modules and proposals (/me/work): the modules you contribute to, each a link to its editing
 * page (web/_me_work_module_page.tsx), and your proposals with their status, withdrawal with a
 * reason and the attribution choice (kv/catalogue/proposal_changes.ts changeProposal, as PATCH
 * /api/contributions/{id}).
 */
import { loadModules, slugsOf } from "../kv/catalogue/modules.ts";
import { changeProposal } from "../kv/catalogue/proposal_changes.ts";
import { OPEN, type Proposal, proposalsOf } from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import { ProposalPatch } from "../http/catalogue_inputs.ts";
import { callerOf } from "../http/guards.ts";
import { type FormView, submitForm } from "./_form.tsx";
import { UserText } from "./_layout.tsx";
import { MeNav, Purpose, when } from "./_me.tsx";
import { requireAccount, routeId, type WebCtx } from "./_web.tsx";

/**
 * The reason field of one proposal's withdrawal form, with its message beside it when the
 * form came back (the ids carry the proposal's number: the page holds one form per proposal).
 */
function WithdrawReason(props: { id: number; view?: FormView }) {
  const id = `why-${props.id}`;
  const error = props.view?.errors.reason ?? props.view?.error;
  return (
    <div class={error ? "field invalid" : "field"}>
      <label for={id}>Why you withdraw #{props.id}</label>
      {error ? <p class="error" id={`${id}-error`}>{error}</p> : null}
      <textarea
        id={id}
        name="reason"
        rows={2}
        maxlength={1000}
        required
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      >
        {props.view?.values.reason ?? ""}
      </textarea>
    </div>
  );
}

/**
 * The list of modules and proposals; `withdraw` is a withdrawal form sent with an error,
 * shown again with the message beside its reason field.
 */
const workPage = async (deps: Deps, c: WebCtx, withdraw?: { id: number; view: FormView }) => {
  const me = requireAccount(c);
  const mods = (await loadModules(deps.kv, await slugsOf(deps.kv, me.id)))
    .filter((m) => m.contributors.includes(me.id));
  const proposals = await proposalsOf(deps.kv, me.email);
  return (
    <>
      <MeNav here="/me/work" viewer={me} />
      <h1>Modules and proposals</h1>
      <Purpose here="/me/work" />
      <h2>Your modules</h2>
      {mods.length === 0 ? <p>You are not a contributor of any module yet.</p> : (
        <ul>
          {mods.map((m) => (
            <li>
              <a href={`/me/work/modules/${m.slug}`}>
                Edit <UserText>{m.title}</UserText>
              </a>{" "}
              · <a href={`/modules/${m.slug}`}>public page</a>
            </li>
          ))}
        </ul>
      )}
      <h2>Your proposals</h2>
      {proposals.length === 0 ? <p>No proposals sent with this address.</p> : null}
      {proposals.map((p) => (
        <ProposalRow p={p} view={withdraw?.id === p.id ? withdraw.view : undefined} />
      ))}
    </>
  );
};

/** One of the person's proposals: its status, the name choice and, while open, withdrawal. */
function ProposalRow({ p, view }: { p: Proposal; view?: FormView }) {
  const last = p.decisions.findLast((d) => d.reason !== "");
  return (
    <section aria-labelledby={`p-${p.id}`}>
      <h3 id={`p-${p.id}`}>
        #{p.id} <UserText>{p.title}</UserText>
      </h3>
      <p>
        Status: <strong>{p.status}</strong> · sent {when(p.created)}
        {last
          ? (
            <>
              {" · reason: "}
              <UserText>{last.reason}</UserText>
            </>
          )
          : null}
        {p.slug && p.status === "published"
          ? (
            <>
              {" · "}
              <a href={`/modules/${p.slug}`}>the module</a>
            </>
          )
          : null}
      </p>
      <form method="post" action={`/me/work/proposals/${p.id}/attribution`}>
        <div class="field">
          <label for={`attr-${p.id}`}>Name on #{p.id}</label>
          <select id={`attr-${p.id}`} name="attribution">
            <option value="keep" selected={p.attribution === "keep"}>
              Keep my name on it
            </option>
            <option value="remove" selected={p.attribution === "remove"}>
              Take my name off
            </option>
          </select>
        </div>
        <button type="submit" class="secondary">Save the name choice of #{p.id}</button>
      </form>
      {OPEN.includes(p.status)
        ? (
          <form
            method="post"
            action={`/me/work/proposals/${p.id}/withdraw`}
            data-confirm="Withdraw this proposal?"
            novalidate
          >
            <WithdrawReason
              id={p.id}
              view={view}
            />
            <button type="submit" class="danger">Withdraw #{p.id}</button>
          </form>
        )
        : null}
    </section>
  );
}

export async function postMeWorkProposalsIdWithdraw(deps: Deps, c: WebCtx) {
  requireAccount(c);
  const caller = callerOf(deps, c);
  const id = routeId(c);
  return await submitForm(c, {
    schema: ProposalPatch,
    input: (f) => ({ status: "withdrawn", reason: f.reason ?? "" }),
    act: async (change) => {
      await changeProposal(deps, caller, id, change);
      return "/me/work";
    },
    show: (view) => workPage(deps, c, { id, view }),
    page: { title: "Modules and proposals" },
  });
}

export async function getMeWork(deps: Deps, c: WebCtx) {
  return c.render(await workPage(deps, c), { title: "Modules and proposals", noindex: true });
}
