/**
 * The owner's incidents (/me/incidents): the open ones and the history as visitors see them,
 * the form that opens one (title, affected services, impact, state, first words), and one
 * incident's page (/me/incidents/<id>) with the form of its next update (resolved resolves it)
 * and its delete button. The same domain functions as /api/me/incidents (kv/status/incidents.ts).
 */
import { IncidentBody, IncidentUpdateBody } from "../http/incident_inputs.ts";
import { fail } from "../http/errors.ts";
import {
  deleteIncident,
  getIncident,
  IMPACT_WORDS,
  IMPACTS,
  INCIDENT_STATES,
  listIncidents,
  openIncident,
  postIncidentUpdate,
  STATE_WORDS,
} from "../kv/status/incidents.ts";
import { incidentExplained } from "../kv/status/reports.ts";
import { listServices } from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { IncidentCard, IncidentsPart } from "./_incidents.tsx";
import { PostButton } from "./_layout.tsx";
import { CrumbTitle, MeNav } from "./_me.tsx";
import { requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";

const LABELS: Record<string, string> = {
  title: "Title",
  impact: "Impact",
  state: "State",
  text: "What people should know",
  services: "Affected services",
};

const STATE_OPTIONS = INCIDENT_STATES.map((s): [string, string] => [s, STATE_WORDS[s]]);
const IMPACT_OPTIONS = IMPACTS.map((s): [string, string] => [s, IMPACT_WORDS[s]]);

/** The ticked services of the form (`s-<id>`). */
const servicesInput = (f: Record<string, string>) =>
  Object.keys(f).filter((k) => /^s-\d+$/.test(k) && f[k] === "on").map((k) => Number(k.slice(2)));

async function namesOf(deps: Deps, account: number) {
  const list = (await listServices(deps.kv, account)).map((x) => x.service);
  return { list, names: new Map(list.map((s) => [s.id, s.name])) };
}

async function incidentsPage(deps: Deps, c: WebCtx, view?: FormView) {
  const me = requireAccount(c);
  const [incidents, { list, names }] = await Promise.all([
    listIncidents(deps.kv, me.id, deps.clock.now()),
    namesOf(deps, me.id),
  ]);
  const v = view ?? emptyView({ impact: "minor", state: "investigating" });
  const F = fields(v, LABELS);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Incidents</h1>
      <p>
        What visitors of your status pages read when something goes wrong: open an incident, post an
        update as you learn more (investigating, identified, monitoring, resolved), and resolve it.
        Each update is mailed to the pages' followers. An incident shows on every status page that
        lists one of its services (with none chosen, on every page).
      </p>
      <section aria-labelledby="open-one" class="panel">
        <h2 id="open-one">Open an incident</h2>
        <form method="post" action="/me/incidents" novalidate>
          <F.Summary />
          <F.Field name="title" maxlength={120} required />
          <fieldset id="f-services">
            <legend>{LABELS.services}</legend>
            {v.errors.services
              ? <p class="error" id="f-services-error">{v.errors.services}</p>
              : null}
            {list.length
              ? list.map((s) => <F.Checkbox name={`s-${s.id}`} label={s.name} />)
              : <p>No services yet.</p>}
          </fieldset>
          <F.Select name="impact" options={IMPACT_OPTIONS} />
          <F.Select name="state" options={STATE_OPTIONS} />
          <F.TextArea name="text" rows={4} maxlength={2000} required />
          <button type="submit">Open the incident</button>
        </form>
      </section>
      <IncidentsPart list={incidents} names={names} link={(i) => `/me/incidents/${i.id}`} />
      <p>
        <a href="/me/status-page">Status page</a> · <a href="/me/services">All services</a>
      </p>
    </>
  );
}

async function incidentPage(deps: Deps, c: WebCtx, view?: FormView) {
  const me = requireAccount(c);
  const i = await getIncident(deps.kv, me.id, routeId(c));
  if (!i) fail(404, "no such incident");
  const { list, names } = await namesOf(deps, me.id);
  const explained = await incidentExplained(deps, me.id, i, list);
  const next = i.state === "resolved"
    ? "resolved"
    : i.state === "investigating"
    ? "identified"
    : i.state === "identified"
    ? "monitoring"
    : "resolved";
  const v = view ?? emptyView({ state: next });
  const F = fields(v, LABELS);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <CrumbTitle up={["/me/incidents", "Incidents"]} title={i.title} />
      <IncidentCard i={i} names={names} level={3} explained={explained} untitled />
      <section aria-labelledby="post-update" class="panel">
        <h2 id="post-update">Post an update</h2>
        <form method="post" action={`/me/incidents/${i.id}/updates`} novalidate>
          <F.Summary />
          <F.Select name="state" options={STATE_OPTIONS} hint="Resolved resolves the incident" />
          <F.TextArea name="text" rows={4} maxlength={2000} required />
          <button type="submit">Post the update</button>
        </form>
      </section>
      <PostButton
        action={`/me/incidents/${i.id}/delete`}
        kind="danger"
        confirm="Delete this incident and its updates?"
      >
        Delete incident
      </PostButton>
      <p>
        <a href="/me/incidents">All incidents</a>
      </p>
    </>
  );
}

export function incidentPages(deps: Deps) {
  const app = webRouter();

  app.get(
    "/me/incidents",
    async (c) => c.render(await incidentsPage(deps, c), { title: "Incidents", noindex: true }),
  );

  app.post("/me/incidents", async (c) => {
    const me = requireAccount(c);
    return await submitForm(c, {
      schema: IncidentBody,
      input: (f) => ({
        title: f.title ?? "",
        services: servicesInput(f),
        impact: f.impact,
        state: f.state,
        text: f.text ?? "",
      }),
      act: async (input) => `/me/incidents/${(await openIncident(deps, me.id, input)).id}`,
      show: (view) => incidentsPage(deps, c, view),
      page: { title: "Incidents" },
    });
  });

  app.get(
    "/me/incidents/:id{[0-9]{1,15}}",
    async (c) => c.render(await incidentPage(deps, c), { title: "Incident", noindex: true }),
  );

  app.post("/me/incidents/:id{[0-9]{1,15}}/updates", async (c) => {
    const me = requireAccount(c);
    const id = routeId(c);
    return await submitForm(c, {
      schema: IncidentUpdateBody,
      input: (f) => ({ state: f.state, text: f.text ?? "" }),
      act: async (input) => {
        await postIncidentUpdate(deps, me.id, id, input);
        return `/me/incidents/${id}`;
      },
      show: (view) => incidentPage(deps, c, view),
      page: { title: "Incident" },
    });
  });

  app.post("/me/incidents/:id{[0-9]{1,15}}/delete", async (c) => {
    const me = requireAccount(c);
    if (!await deleteIncident(deps, me.id, routeId(c))) fail(404, "no such incident");
    return seeOther(c, "/me/incidents");
  });

  return app;
}
