/**
 * Maintenance windows (/me/maintenance): the list with what runs now and what comes next, "End
 * now" on one running (a scheduled one's run ends, its schedule stays) and a delete button each; a form that starts one now for a chosen
 * time ("Start now") or plans one (once, in a time zone, the browser's offered by site.js, or
 * on a cron schedule). The same form sent again (Back and submit) adds nothing: its fields
 * make its token (kv/store/form_tokens.ts). The same domain functions as /api/me/maintenance (kv/service/windows.ts,
 * kv/service/maintenance.ts).
 */
import type { z } from "zod";
import { WindowBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { listWindows } from "../kv/service/maintenance.ts";
import { GROUPS, listServices, PLACES, type Service } from "../kv/service/commands.ts";
import {
  createWindow,
  deleteWindow,
  endWindow,
  windowFieldProblems,
  windowView,
} from "../kv/service/windows.ts";
import { DAY, MINUTE } from "../lib/clock.ts";
import { formToken } from "../kv/store/form_tokens.ts";
import type { Deps } from "../lib/deps.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { zonedTime } from "../lib/maintenance.ts";
import { validTimeZone } from "../lib/schedule.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { At, MeNav } from "./_me.tsx";
import { requireAccount, routeId, seeOther, SentAgain, type WebCtx, webRouter } from "./_web.tsx";

/** The form's labels, in the order its fields stand (the error summary's order). */
const LABELS: Record<string, string> = {
  name: "Name of the window",
  services: "Services",
  group: "Every service of the group",
  place: "Every service of the place",
  duration: "For",
  kind: "When it runs",
  tz: "Time zone",
  from: "Starts",
  to: "Ends",
  cron: "Schedule (cron)",
  minutes: "Length of each run (minutes)",
};

/** How long "Start now" lasts: minutes and their words. */
const DURATIONS: [string, string][] = [
  ["15", "15 minutes"],
  ["30", "30 minutes"],
  ["60", "1 hour"],
  ["120", "2 hours"],
  ["240", "4 hours"],
  ["480", "8 hours"],
  ["1440", "1 day"],
];

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

/**
 * The form's fields as WindowBody's input: local times in the time zone, lists of one; "Start
 * now" (`start`) from now for the chosen duration.
 */
function formInput(f: Record<string, string>, ids: number[], now: number) {
  const tz = f.tz?.trim() || "UTC";
  // A zone that is not one is said beside its field; the times are read as UTC meanwhile.
  const zone = validTimeZone(tz) ? tz : "UTC";
  const at = (v: string | undefined) => {
    if (!v) return null;
    const t = zonedTime(v, zone);
    // Not a time: passed on as it is, so the schema says so beside the field.
    return t === null ? v : new Date(t).toISOString();
  };
  const covers = {
    name: f.name ?? "",
    services: ids.filter((id) => f[`s-${id}`] === "on"),
    groups: f.group ? [f.group] : [],
    places: f.place ? [f.place] : [],
  };
  if (f.start === "now") {
    const minutes = DURATIONS.some(([m]) => m === f.duration) ? Number(f.duration) : 60;
    const from = Math.floor(now / 1000) * 1000;
    return {
      ...covers,
      from: new Date(from).toISOString(),
      to: new Date(from + minutes * MINUTE).toISOString(),
      cron: null,
      tz,
      minutes: null,
    };
  }
  const once = f.kind !== "schedule";
  return {
    ...covers,
    from: once ? at(f.from) : null,
    to: once ? at(f.to) : null,
    cron: once ? null : f.cron ?? "",
    tz,
    minutes: once ? null : Number(f.minutes || "0"),
  };
}

type WindowShown = ReturnType<typeof windowView>;
type NewWindowInput = z.output<typeof WindowBody>;

/**
 * The form's token: what it asks for. "Start now" leaves out the moment it was sent and counts
 * for as long as the window it started runs (the same again meanwhile is the same form); a
 * planned window, for a day.
 */
function sentOnce(account: number, input: NewWindowInput, form: Record<string, string>) {
  const now = form.start === "now";
  const covers = {
    name: input.name,
    services: [...input.services].sort(),
    groups: input.groups,
    places: input.places,
  };
  const asked = now ? { ...covers, start: "now", duration: form.duration ?? "" } : {
    ...covers,
    from: input.from,
    to: input.to,
    cron: input.cron,
    tz: input.tz,
    m: input.minutes,
  };
  const life = now && input.from != null && input.to != null ? input.to - input.from : DAY;
  return { token: formToken(account, "maintenance", asked), life };
}

async function maintenancePage(
  deps: Deps,
  c: WebCtx,
  view: FormView = emptyView({ tz: "UTC", kind: "once", duration: "60" }),
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
      <SentAgain c={c} made="its window was added once" />
      {windows.length
        ? (
          <ul class="cards">
            {windows.map((w) => <WindowCard w={w} names={names} />)}
          </ul>
        )
        : <p>No maintenance windows.</p>}
      <h2>Start or plan a window</h2>
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
        <UserText>{w.name}</UserText>
      </h2>
      <p>
        Covers <UserText>{covered(w, names)}</UserText>. {w.cron
          ? (
            <>
              On the schedule <code>{w.cron}</code> ({w.tz}), {w.minutes} minutes each.
            </>
          )
          : (
            <>
              Once, from <At at={Date.parse(w.from!)} /> to <At at={Date.parse(w.to!)} />.
            </>
          )}
      </p>
      <p>
        {w.running_until
          ? (
            <strong>
              Running now, until <At at={Date.parse(w.running_until)} />.
            </strong>
          )
          : w.next_start
          ? (
            <>
              Next start: <At at={Date.parse(w.next_start)} />.
            </>
          )
          : "Over."}
      </p>
      {w.running_until
        ? (
          <PostButton
            action={`/me/maintenance/${w.id}/end`}
            kind="secondary"
            label={`${w.cron ? "End this run now" : "End now"}: ${w.name}`}
          >
            {w.cron ? "End this run now" : "End now"}
          </PostButton>
        )
        : null}{" "}
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
  // The browser's own zone is offered by site.js while the field holds the default.
  const zoneDefault = (view.values.tz ?? "UTC") === "UTC" && !view.errors.tz;
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
      <fieldset>
        <legend>Now</legend>
        <F.Select name="duration" options={DURATIONS} hint="From the moment you start it" />
        <button type="submit" name="start" value="now">Start now</button>
      </fieldset>
      <h3>Or plan it</h3>
      <F.Select
        name="kind"
        options={[["once", "Once"], ["schedule", "On a schedule"]]}
      />
      <div class="field">
        <label for="f-tz">{LABELS.tz}</label>
        <input
          id="f-tz"
          name="tz"
          maxlength={64}
          value={view.values.tz ?? "UTC"}
          data-zone-default={zoneDefault ? "" : undefined}
          aria-describedby={view.errors.tz ? "f-tz-hint f-tz-error" : "f-tz-hint"}
          aria-invalid={view.errors.tz ? "true" : undefined}
        />
        <p class="hint" id="f-tz-hint">
          An IANA name, e.g. Europe/Berlin; the times below are in it
        </p>
        {view.errors.tz ? <p class="error" id="f-tz-error">{view.errors.tz}</p> : null}
      </div>
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
      <button type="submit">Plan a window</button>
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
      input: (f) => formInput(f, ids, deps.clock.now()),
      also: (input) =>
        Object.fromEntries(
          Object.entries(windowFieldProblems(input)).map(([k, v]) => [formField(k), v]),
        ),
      fieldOf: (path) => formField(path.replace(/\.\d+$/, "")),
      act: async (input, form) => {
        // Read as "once" otherwise: a kind the form does not offer is said beside it instead.
        if (!KINDS.includes(form.kind)) invalid("kind: choose Once or On a schedule", "kind");
        try {
          await createWindow(deps, me.id, input, sentOnce(me.id, input, form));
        } catch (err) {
          // The same form sent again: nothing added, and the page says so.
          if (err instanceof DomainError && err.extra.repeated) return "/me/maintenance?sent=again";
          throw besideFormField(err);
        }
        return "/me/maintenance";
      },
      show: (view) => page(c, view),
      page: { title: "Maintenance windows" },
    });
  });

  app.post("/me/maintenance/:id{[0-9]{1,15}}/end", async (c) => {
    const me = requireAccount(c);
    // Not running (over, or between a schedule's runs): the page shows it as it is.
    await endWindow(deps, me.id, routeId(c));
    return seeOther(c, "/me/maintenance");
  });

  app.post("/me/maintenance/:id{[0-9]{1,15}}/delete", async (c) => {
    const me = requireAccount(c);
    if (!await deleteWindow(deps, me.id, routeId(c))) fail(404, "no such window");
    return seeOther(c, "/me/maintenance");
  });

  return app;
}
