/**
 * Maintenance windows (/me/maintenance): the list with what runs now and what comes next, a
 * form to add one (once, in a time zone, or on a cron schedule) and a delete button each. The
 * same domain functions as /api/me/maintenance (kv/service/windows.ts, kv/service/maintenance.ts).
 */
import { WindowBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { listWindows } from "../kv/service/maintenance.ts";
import { GROUPS, listServices, PLACES, type Service } from "../kv/service/commands.ts";
import {
  createWindow,
  deleteWindow,
  windowFieldProblems,
  windowView,
} from "../kv/service/windows.ts";
import type { Deps } from "../lib/deps.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { zonedTime } from "../lib/maintenance.ts";
import { validTimeZone } from "../lib/schedule.ts";
import { emptyView, fields, type FormView, submitForm } from "./_form.tsx";
import { U } from "./_layout.tsx";
import { MeNav, PostButton, when } from "./_me.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";

const LABELS: Record<string, string> = {
  name: "Name of the window",
  kind: "When it runs",
  from: "Starts",
  to: "Ends",
  cron: "Schedule (cron)",
  minutes: "Length of each run (minutes)",
  tz: "Time zone",
  group: "Every service of the group",
  place: "Every service of the place",
  services: "Services",
};

const KINDS = ["once", "schedule"];

/** The form's field of an input's: one select each for the lists groups and places. */
const formField = (name: string) => name.replace(/^groups$/, "group").replace(/^places$/, "place");

/** A domain error about groups or places, told of the form's field so it shows beside it. */
function besideFormField(err: unknown): unknown {
  if (!(err instanceof DomainError) || typeof err.extra.field !== "string") return err;
  const field = formField(err.extra.field);
  if (field === err.extra.field) return err;
  const message = err.message.replace(new RegExp(`^${err.extra.field}: `), `${field}: `);
  return new DomainError(err.kind, message, { ...err.extra, field });
}

/** The form's fields as WindowBody's input: local times in the time zone, lists of one. */
function formInput(f: Record<string, string>, ids: number[]) {
  const tz = f.tz?.trim() || "UTC";
  // A zone that is not one is said beside its field; the times are read as UTC meanwhile.
  const zone = validTimeZone(tz) ? tz : "UTC";
  const at = (v: string | undefined) => {
    if (!v) return null;
    const t = zonedTime(v, zone);
    // Not a time: passed on as it is, so the schema says so beside the field.
    return t === null ? v : new Date(t).toISOString();
  };
  const once = f.kind !== "schedule";
  return {
    name: f.name ?? "",
    services: ids.filter((id) => f[`s-${id}`] === "on"),
    groups: f.group ? [f.group] : [],
    places: f.place ? [f.place] : [],
    from: once ? at(f.from) : null,
    to: once ? at(f.to) : null,
    cron: once ? null : f.cron ?? "",
    tz,
    minutes: once ? null : Number(f.minutes || "0"),
  };
}

type WindowShown = ReturnType<typeof windowView>;

async function maintenancePage(
  deps: Deps,
  c: WebCtx,
  view: FormView = emptyView({ tz: "UTC", kind: "once" }),
) {
  const me = requireAccount(c);
  const now = deps.clock.now();
  const windows = (await listWindows(deps.kv, me.id)).map((w) => windowView(w, now));
  const services = (await listServices(deps.kv, me.id)).map((x) => x.service);
  const names = new Map(services.map((s) => [s.id, s.name]));
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Maintenance windows</h1>
      <p>
        While a window runs, failures of the services it covers alert nobody (mail, channels,
        followers); their state reads maintenance on their page, badge and status page, and their
        history leaves those hours out of uptime. A failure that lasts past the window's end alerts
        then.
      </p>
      {windows.length
        ? (
          <ul class="cards">
            {windows.map((w) => <WindowCard w={w} names={names} />)}
          </ul>
        )
        : <p>No maintenance windows.</p>}
      <h2>Add a window</h2>
      <WindowForm view={view} services={services} />
      <p>
        <a href="/me/services">All services</a>
      </p>
    </>
  );
}

/** What a window covers, as a list of names. */
function covered(w: WindowShown, names: Map<number, string>) {
  return [
    ...w.services.map((id) => names.get(id) ?? `service ${id}`),
    ...w.groups.map((g) => `group ${g}`),
    ...w.places.map((p) => `place ${p}`),
  ].join(", ");
}

function WindowCard({ w, names }: { w: WindowShown; names: Map<number, string> }) {
  return (
    <li>
      <h2>
        <U>{w.name}</U>
      </h2>
      <p>
        Covers <U>{covered(w, names)}</U>. {w.cron
          ? (
            <>
              On the schedule <code>{w.cron}</code> ({w.tz}), {w.minutes} minutes each.
            </>
          )
          : <>Once, from {when(Date.parse(w.from!))} to {when(Date.parse(w.to!))}.</>}
      </p>
      <p>
        {w.running_until
          ? <strong>Running now, until {when(Date.parse(w.running_until))}.</strong>
          : w.next_start
          ? `Next start: ${when(Date.parse(w.next_start))}.`
          : "Over."}
      </p>
      <PostButton
        action={`/me/maintenance/${w.id}/delete`}
        kind="danger"
        confirm="Delete this maintenance window?"
      >
        Delete window
      </PostButton>
    </li>
  );
}

function WindowForm({ view, services }: { view: FormView; services: Service[] }) {
  const F = fields(view, LABELS);
  return (
    <form method="post" action="/me/maintenance" novalidate>
      <F.Summary />
      <F.Field name="name" maxlength={80} required />
      <fieldset id="f-services">
        <legend>What it covers</legend>
        {services.map((s) => <F.Checkbox name={`s-${s.id}`} label={s.name} />)}
        {view.errors.services
          ? <p class="error" id="f-services-error">{view.errors.services}</p>
          : null}
        <F.Select name="group" options={[["", "No group"], ...GROUPS]} />
        <F.Select name="place" options={[["", "No place"], ...PLACES]} />
      </fieldset>
      <F.Select
        name="kind"
        options={[["once", "Once"], ["schedule", "On a schedule"]]}
      />
      <F.Field name="tz" maxlength={64} hint="An IANA name, e.g. Europe/Berlin" />
      <fieldset>
        <legend>Once</legend>
        <F.Field name="from" type="datetime-local" hint="In the time zone above" />
        <F.Field name="to" type="datetime-local" />
      </fieldset>
      <fieldset>
        <legend>On a schedule</legend>
        <F.Field name="cron" maxlength={100} hint="5 fields, e.g. 0 2 * * 0 (Sundays 02:00)" />
        <F.Field name="minutes" type="number" />
      </fieldset>
      <button type="submit">Add window</button>
    </form>
  );
}

export function maintenancePages(deps: Deps) {
  const app = webRouter();
  const page = (c: WebCtx, view?: FormView) => maintenancePage(deps, c, view);

  app.get("/me/maintenance", async (c) => {
    return c.render(await page(c), { title: "Maintenance windows", noindex: true });
  });

  app.post("/me/maintenance", async (c) => {
    const me = requireAccount(c);
    const ids = (await listServices(deps.kv, me.id)).map((x) => x.service.id);
    return await submitForm(c, {
      schema: WindowBody,
      input: (f) => formInput(f, ids),
      also: (input) =>
        Object.fromEntries(
          Object.entries(windowFieldProblems(input)).map(([k, v]) => [formField(k), v]),
        ),
      fieldOf: (path) => formField(path.replace(/\.\d+$/, "")),
      act: async (input, form) => {
        // Read as "once" otherwise: a kind the form does not offer is said beside it instead.
        if (!KINDS.includes(form.kind)) invalid("kind: choose Once or On a schedule", "kind");
        try {
          await createWindow(deps, me.id, input);
        } catch (err) {
          throw besideFormField(err);
        }
        return "/me/maintenance";
      },
      show: (view) => page(c, view),
      page: { title: "Maintenance windows" },
    });
  });

  app.post("/me/maintenance/:id{[0-9]{1,15}}/delete", async (c) => {
    const me = requireAccount(c);
    if (!await deleteWindow(deps, me.id, Number(c.req.param("id")))) fail(404, "no such window");
    return seeOther(c, "/me/maintenance");
  });

  return app;
}
