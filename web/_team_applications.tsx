/**
 * The team's applications page (/team/applications): each application for contributor standing,
 * approved or declined with a reason.
 */
import { getAccount, standingOf } from "../kv/accounts/accounts.ts";
import { decideApplication, listApplications } from "../kv/accounts/applications.ts";
import type { Deps } from "../lib/deps.ts";
import { DecisionBody } from "../http/account_inputs.ts";
import { callerOf } from "../http/guards.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { ErrorSummary, Select, TextArea } from "./_form_controls.tsx";
import { UserText } from "./_layout.tsx";
import { standingName, when } from "./_me.tsx";
import { requireTeamPage, routeId, type WebCtx } from "./_web.tsx";
import { TeamNav } from "./_team.tsx";

export const applicationsPage = async (
  deps: Deps,
  c: WebCtx,
  failed?: { id: number; view: FormView },
) => {
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

export async function postTeamApplicationsId(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const id = routeId(c);
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
