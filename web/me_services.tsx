/**
 * Watched services (/me/services, /me/services/<id>): the list with state, last result and
 * last beat; adding one of every kind; a heartbeat's hook address shown once (with a copy
 * button and a ready cron line); rotate, check now, edit, delete. The same functions as
 * /api/me/services (kv/service_changes.ts addService, editService, checkServiceNow).
 * Alert mails link to a service's page here. Kept in its own file: the monitoring pages
 * (events, history, status pages) extend it.
 */
import type { Child } from "hono/jsx";
import { isOwner } from "../kv/accounts.ts";
import {
  deleteService,
  getBeat,
  getService,
  GROUPS,
  INTERVALS,
  listServices,
  MAX_SERVICES,
  PLACES,
  rotateHook,
  type ServiceView,
  serviceView,
  THRESHOLDS,
} from "../kv/services.ts";
import { KINDS } from "../lib/targets.ts";
import type { Deps } from "../lib/deps.ts";
import { readSnapshot } from "../lib/machine.ts";
import { addService, checkServiceNow, editService, hookUrl } from "../kv/service_changes.ts";
import { CreateBody, PatchBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import {
  checked,
  emptyView,
  ErrorSummary,
  fields,
  type FormView,
  given,
  submitForm,
} from "./_form.tsx";
import { U } from "./_layout.tsx";
import { watchSection } from "./_watch.tsx";
import { MeNav, when } from "./_me.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";

const LABELS = {
  name: "Name",
  kind: "Kind",
  check: "Address to check",
  what: "What it is",
  group: "Group",
  place: "Place",
  interval: "Check every",
  alerts: "Alerts",
  threshold: "Failed checks before an alert",
  schedule: "Schedule (cron, heartbeats only)",
  tz: "Time zone of the schedule",
  grace: "Grace minutes",
};

const KIND_LABELS: Record<string, string> = {
  url: "Web address (url)",
  mcp: "MCP server (mcp)",
  tcp: "TCP port (tcp)",
  tls: "TLS certificate (tls)",
  webhook: "Heartbeat: it calls us (webhook)",
};

const INTERVAL_LABELS: Record<number, string> = {
  5: "5 minutes",
  15: "15 minutes",
  60: "hour",
  240: "4 hours",
  1440: "day",
};

const intervalOptions = INTERVALS.map((i) =>
  [String(i), INTERVAL_LABELS[i] ?? `${i} min`] as [
    string,
    string,
  ]
);
const placeOptions: [string, string][] = [
  ["", "Not given"],
  ...PLACES.map((p) => [p, p] as [string, string]),
];

const STATE_TEXT: Record<string, string> = {
  ok: "OK",
  warn: "Warning",
  off: "Off",
  wait: "Waiting",
};

export function StateBadge(props: { state: string }) {
  return <span class={`tag state-${props.state}`}>{STATE_TEXT[props.state] ?? props.state}</span>;
}

const at = (s: string | null) => (s ? when(Date.parse(s)) : "never");

/** The shared fields of the add and edit forms. */
function CommonFields(props: { view: FormView }) {
  const F = fields(props.view, LABELS);
  return (
    <>
      <F.Field name="name" maxlength={80} required />
      <F.TextArea name="what" rows={2} maxlength={160} />
      <F.Select name="group" options={GROUPS} />
      <F.Select name="place" options={placeOptions} />
      <F.Select name="interval" options={intervalOptions} />
      <F.Select name="threshold" options={THRESHOLDS.map(String)} />
      <F.Checkbox name="alerts" label="Mail me when it goes off and comes back" />
      <details>
        <summary>Heartbeat schedule (optional)</summary>
        <F.Field
          name="schedule"
          hint="Five fields, e.g. 0 3 * * * for 03:00 daily. Empty: the interval above."
        />
        <F.Field name="tz" hint="With a schedule; e.g. Europe/Berlin. Empty: UTC." />
        <F.Field name="grace" type="number" hint="With a schedule. Empty: 60 minutes." />
      </details>
    </>
  );
}

/**
 * The form's text fields as the API's body (shared by add and edit). A time zone or grace
 * without a schedule goes to the API as given, which answers it beside the field.
 */
function commonInput(f: Record<string, string>) {
  const schedule = given(f.schedule);
  const tz = given(f.tz);
  const grace = given(f.grace);
  return {
    name: f.name ?? "",
    what: f.what ?? "",
    group: f.group,
    place: given(f.place) ?? null,
    interval: Number(f.interval),
    alerts: checked(f.alerts),
    threshold: Number(f.threshold ?? 1),
    ...(schedule !== undefined ? { schedule } : {}),
    ...(tz !== undefined ? { tz } : {}),
    ...(grace !== undefined ? { grace: Number(grace) } : {}),
  };
}

function AddForm(props: { view: FormView }) {
  const { view } = props;
  const F = fields(view, LABELS);
  return (
    <form method="post" action="/me/services" novalidate>
      <F.Summary />
      <F.Select
        name="kind"
        options={KINDS.map((k) => [k, KIND_LABELS[k] ?? k] as [string, string])}
      />
      <F.Field
        name="check"
        hint="url/mcp: https://example.org/health · tcp: host:port · tls: host[:port] · heartbeat: leave empty"
      />
      <CommonFields view={view} />
      <button type="submit">Add service</button>
    </form>
  );
}

function ServiceTable(props: { items: ServiceView[]; link: (s: ServiceView) => string | null }) {
  return (
    <table>
      <caption>Watched services</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Kind</th>
          <th scope="col">State</th>
          <th scope="col">Last result</th>
          <th scope="col">Last check or beat</th>
        </tr>
      </thead>
      <tbody>
        {props.items.map((s) => {
          const href = props.link(s);
          return (
            <tr>
              <td>
                {href
                  ? (
                    <a href={href}>
                      <U>{s.name}</U>
                    </a>
                  )
                  : <U>{s.name}</U>}
                <br />
                <span class="meta">
                  <U>{s.group}</U>
                  {s.place
                    ? (
                      <>
                        {" · "}
                        <U>{s.place}</U>
                      </>
                    )
                    : null}
                </span>
              </td>
              <td>{s.kind}</td>
              <td>
                <StateBadge state={s.state} />
              </td>
              <td>
                <U>{s.status}</U>
                {s.ms !== null ? ` (${s.ms} ms)` : ""}
              </td>
              <td>{s.kind === "webhook" ? at(s.beat) : at(s.checked)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export { ServiceTable };

/** The hook address of a heartbeat, shown once, with a copy button and a cron line. */
function HookShown(props: { url: string; intro: Child }) {
  const curl = `curl -fsS -m 10 --retry 3 ${props.url}`;
  return (
    <section aria-labelledby="hook-h" class="notice">
      <h2 id="hook-h">Hook address</h2>
      <p>{props.intro} It is shown only now: copy it.</p>
      <div class="field">
        <label for="hook-url">Hook address</label>
        <input id="hook-url" type="text" readonly value={props.url} />
        <button type="button" data-copy="#hook-url" hidden>Copy hook address</button>
      </div>
      <div class="field">
        <label for="hook-curl">Line for cron (after your job)</label>
        <input id="hook-curl" type="text" readonly value={curl} />
        <button type="button" data-copy="#hook-curl" hidden>Copy cron line</button>
      </div>
      <p class="hint">For example in crontab: 0 3 * * * /usr/local/bin/backup && {curl}</p>
    </section>
  );
}

const serviceId = (c: WebCtx) => Number(c.req.param("id")!);

const listPage = async (deps: Deps, c: WebCtx, view: FormView) => {
  const me = requireAccount(c);
  const now = deps.clock.now();
  const items = (await listServices(deps.kv, me.id)).map(({ service, beat }) =>
    serviceView(service, beat, now)
  );
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Watched services</h1>
      {items.length
        ? <ServiceTable items={items} link={(s) => `/me/services/${s.id}`} />
        : <p>No services watched yet.</p>}
      <h2>Add a service</h2>
      <p class="hint">Up to {MAX_SERVICES} services.</p>
      <p>
        <a href="/me/channels">Alert channels</a> · <a href="/me/status-page">Status page</a>
      </p>
      <AddForm view={view} />
      {isOwner(me) ? <MachinePart deps={deps} /> : null}
    </>
  );
};

const MachinePart = async ({ deps }: { deps: Deps }) => {
  const snap = await readSnapshot(deps.config);
  if (!snap) return <p>No machine snapshot configured.</p>;
  return (
    <section aria-labelledby="machine-h">
      <h2 id="machine-h">This machine</h2>
      <p class="meta">
        <U>{snap.host}</U> · read {at(snap.read)}
      </p>
      <ul>
        {snap.services.map((s) => (
          <li>
            <U>{s.name}</U> · <U>{s.state}</U> · <U>{s.status}</U>
          </li>
        ))}
      </ul>
    </section>
  );
};

async function getMeServices(deps: Deps, c: WebCtx) {
  const view = emptyView({
    kind: "url",
    group: "Public",
    interval: "60",
    threshold: "1",
    alerts: "on",
  });
  return c.render(await listPage(deps, c, view), { title: "Watched services", noindex: true });
}

async function postMeServices(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  let hook: string | null = null;
  let added: ServiceView | null = null;
  const res = await submitForm(c, {
    schema: CreateBody,
    input: (f) => ({
      ...commonInput(f),
      check: f.kind === "webhook" ? "webhook:" : `${f.kind ?? ""}:${(f.check ?? "").trim()}`,
    }),
    act: async (input) => {
      const r = await addService(deps, me, input);
      hook = r.hook_url;
      added = r.item;
      return `/me/services/${r.item.id}`;
    },
    show: (view) => listPage(deps, c, view),
    page: { title: "Watched services" },
  });
  // A heartbeat's hook address is shown once, on the answer itself (never in an address).
  if (hook && added) {
    const s = added as ServiceView;
    c.header("Location", undefined);
    c.status(200);
    c.header("Cache-Control", "no-store");
    return await c.render(
      <>
        <MeNav here="/me/services" viewer={me} />
        <h1>
          Added <U>{s.name}</U>
        </h1>
        <HookShown url={hook} intro="Call this address when your job has run." />
        <p>
          <a href={`/me/services/${s.id}`}>Go to the service</a>
        </p>
      </>,
      { title: "Service added", noindex: true },
    );
  }
  return res;
}

const servicePage = async (deps: Deps, c: WebCtx, view?: FormView, shown?: Child) => {
  const me = requireAccount(c);
  const found = (await getService(deps.kv, me.id, serviceId(c))).value;
  if (!found) fail(404, "no such service");
  const s = serviceView(found, await getBeat(deps.kv, found), deps.clock.now());
  const v = view ?? emptyView({
    name: s.name,
    what: s.what,
    group: s.group,
    place: s.place ?? "",
    interval: String(s.interval),
    threshold: String(s.threshold),
    alerts: s.alerts ? "on" : "",
    schedule: s.schedule ?? "",
    tz: s.tz ?? "",
    grace: s.grace === null ? "" : String(s.grace),
  });
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>
        <U>{s.name}</U>
      </h1>
      {shown}
      <dl>
        <dt>State</dt>
        <dd>
          <StateBadge state={s.state} />
        </dd>
        <dt>Last result</dt>
        <dd>
          <U>{s.status}</U>
          {s.ms !== null ? ` (${s.ms} ms)` : ""}
        </dd>
        <dt>{s.kind === "webhook" ? "Last beat" : "Last checked"}</dt>
        <dd>{s.kind === "webhook" ? at(s.beat) : at(s.checked)}</dd>
        <dt>Kind</dt>
        <dd>{KIND_LABELS[s.kind] ?? s.kind}</dd>
        {s.target_hint
          ? (
            <>
              <dt>Target</dt>
              <dd>
                <U>{s.target_hint}</U>
              </dd>
            </>
          )
          : null}
        {s.cert_expires
          ? (
            <>
              <dt>Certificate expires</dt>
              <dd>{at(s.cert_expires)}</dd>
            </>
          )
          : null}
        <dt>Added</dt>
        <dd>{at(s.created)}</dd>
      </dl>
      {await watchSection(deps, found, s)}
      <ul class="inline actions">
        {s.kind === "webhook"
          ? (
            <li>
              <form
                method="post"
                action={`/me/services/${s.id}/rotate`}
                data-confirm="The old hook address stops at once. Continue?"
              >
                <button type="submit" class="secondary">New hook address</button>
              </form>
            </li>
          )
          : (
            <li>
              <form method="post" action={`/me/services/${s.id}/check`}>
                <button type="submit" class="secondary">Check now</button>
              </form>
            </li>
          )}
        <li>
          <form
            method="post"
            action={`/me/services/${s.id}/delete`}
            data-confirm="Stop watching this service?"
          >
            <button type="submit" class="danger">Delete service</button>
          </form>
        </li>
      </ul>
      <h2>Change it</h2>
      <form method="post" action={`/me/services/${s.id}`} novalidate>
        <ErrorSummary view={v} labels={LABELS} />
        <CommonFields view={v} />
        {s.schedule ? <input type="hidden" name="had_schedule" value="1" /> : null}
        <button type="submit">Save changes</button>
      </form>
      <p>
        <a href="/me/services">All services</a>
      </p>
    </>
  );
};

async function getMeServicesId(deps: Deps, c: WebCtx) {
  return c.render(await servicePage(deps, c), { title: "Service", noindex: true });
}

async function postMeServicesId(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = serviceId(c);
  return await submitForm(c, {
    schema: PatchBody,
    input: (f) => {
      const common = commonInput(f);
      if (given(f.schedule) !== undefined) return common;
      // An emptied schedule field goes back to the interval; the time zone and grace shown
      // with the schedule the service had go with it.
      if (f.had_schedule !== "1") return { ...common, schedule: null };
      const { tz: _tz, grace: _grace, ...rest } = common;
      return { ...rest, schedule: null };
    },
    act: async (patch) => {
      await editService(deps, me, id, patch);
      return `/me/services/${id}`;
    },
    show: (view) => servicePage(deps, c, view),
    page: { title: "Service" },
  });
}

async function postMeServicesIdCheck(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = serviceId(c);
  await checkServiceNow(deps, me, id);
  return seeOther(c, `/me/services/${id}`);
}

async function postMeServicesIdRotate(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const key = await rotateHook(deps, me.id, serviceId(c));
  if (!key) fail(404, "no such service");
  c.header("Cache-Control", "no-store");
  return c.render(
    await servicePage(
      deps,
      c,
      undefined,
      <HookShown url={hookUrl(deps, key)} intro="The old address no longer works." />,
    ),
    { title: "Service", noindex: true },
  );
}

async function postMeServicesIdDelete(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  if (!await deleteService(deps, me.id, serviceId(c))) fail(404, "no such service");
  return seeOther(c, "/me/services");
}

export function servicePages(deps: Deps) {
  const app = webRouter();

  // The machine snapshot, for the owner only.
  app.get("/me/services", (c) => getMeServices(deps, c));

  app.post("/me/services", (c) => postMeServices(deps, c));

  app.get("/me/services/:id{[0-9]{1,15}}", (c) => getMeServicesId(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}", (c) => postMeServicesId(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/check", (c) => postMeServicesIdCheck(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/rotate", (c) => postMeServicesIdRotate(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/delete", (c) => postMeServicesIdDelete(deps, c));

  return app;
}
