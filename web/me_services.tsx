/**
 * Watched services (/me/services, /me/services/<id>): the list with state, last result and
 * last beat; adding one of every kind; a heartbeat's hook address shown once (with a copy
 * button and a ready cron line); rotate, check now, edit, delete. The same functions as
 * /api/me/services (kv/service/rules.ts addService, editService, checkServiceNow).
 * Alert mails link to a service's page here. Kept in its own file: the monitoring pages
 * (events, history, status pages) extend it.
 */
import type { Child } from "hono/jsx";
import { z } from "zod";
import { boardVersion, parentsOff } from "../kv/service/dashboard.ts";
import { unreachableWords } from "../kv/service/dependencies.ts";
import { isOwner } from "../kv/accounts/accounts.ts";
import {
  deleteService,
  getBeat,
  getService,
  GROUPS,
  INTERVALS,
  listServices,
  MAX_SERVICES,
  pingKeyMade,
  PLACES,
  rotateHook,
  type ServiceView,
  serviceView,
  THRESHOLDS,
} from "../kv/service/commands.ts";
import { shownState } from "../kv/service/state.ts";
import { channelChoices } from "../kv/alerts/channels.ts";
import { KINDS as CHANNEL_KINDS } from "../lib/channels/mod.ts";
import { KINDS } from "../lib/targets.ts";
import type { Deps } from "../lib/deps.ts";
import { readSnapshot } from "../lib/machine.ts";
import {
  addService,
  checkServiceNow,
  editService,
  fieldProblems,
  hookUrl,
} from "../kv/service/rules.ts";
import { CreateBody, PatchBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import {
  Checkbox,
  checked,
  emptyView,
  ErrorSummary,
  fields,
  type FormView,
  given,
  submitForm,
} from "./_form.tsx";
import { U } from "./_layout.tsx";
import { type Range, RANGES, settingsSection, watchSection } from "./_watch.tsx";
import { StateBadge } from "./_state.tsx";
import { CompatSection } from "./_compat.tsx";
import { Ago, MeNav, PostButton, Purpose, when } from "./_me.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { webToken } from "./_session.ts";
import { putFlash, readFlash } from "../kv/accounts/flash.ts";
import { HTTP_LABELS, httpInput, HttpOptionsFieldset, httpValues } from "./_http_options.tsx";
import { listWindows } from "../kv/service/maintenance.ts";

const LABELS = {
  name: "Name",
  kind: "Kind",
  check: "Address to check",
  what: "What it is",
  group: "Group",
  place: "Place",
  interval: "Check every",
  alerts: "Alerts",
  threshold: "Failed checks or runs before an alert",
  schedule: "Schedule (cron)",
  tz: "Time zone of the schedule",
  grace: "Grace minutes",
  remind: "Remind while off",
  min_duration: "Shortest run (seconds)",
  period_seconds: "Exact period (seconds)",
  grace_seconds: "Exact grace (seconds)",
  ...HTTP_LABELS,
  tags: "Tags",
  depends_on: "Depends on",
};

const REMIND_OPTIONS: [string, string][] = [
  ["", "No reminders"],
  ...[1, 2, 4, 8, 12, 24].map((h): [string, string] => [String(h), `Every ${h} h`]),
];

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

export { StateBadge };

const at = (s: string | null) => (s ? when(Date.parse(s)) : "never");
const ms = (s: string | null) => (s ? Date.parse(s) : null);

/** A message about one tag ("tags.2") stands beside the tags field. */
const tagsField = (path: string) => (path.startsWith("tags.") ? "tags" : path);

/** The shared fields of the add and edit forms; a heartbeat's timing only for a heartbeat. */
function CommonFields(props: { view: FormView; kind: string }) {
  const F = fields(props.view, LABELS, CreateBody);
  const hb = props.kind === "webhook";
  return (
    <>
      <F.Field name="name" maxlength={80} required />
      <F.TextArea name="what" rows={2} maxlength={160} />
      {hb ? <HeartbeatTiming view={props.view} /> : (
        <F.Select
          name="interval"
          options={intervalOptions}
          hint="How often this site checks it."
        />
      )}
      {props.kind === "url" ? <HttpOptionsFieldset view={props.view} /> : null}
      <F.Select
        name="threshold"
        options={THRESHOLDS.map(String)}
        hint={hb
          ? "Failed and missing runs in a row before you are alerted; fewer read Warning and alert nobody."
          : "Failed checks in a row before you are alerted; fewer read Warning and alert nobody."}
      />
      <F.Checkbox name="alerts" label="Mail me when it goes off and comes back" />
      <F.Select
        name="remind"
        options={REMIND_OPTIONS}
        hint="Repeats the off alert (mail and channels) while it stays off"
      />
      <F.Select
        name="group"
        options={GROUPS}
        hint="Public (reached from the internet), LAN and tailnet (reached only inside your own network), Data, Jobs. It groups your list and status page, and alerts: services of one group other than Public that go off within two minutes of each other come in one follow-up alert. A maintenance window can cover a whole group."
      />
      <F.Select
        name="place"
        options={placeOptions}
        hint="Where it runs, e.g. cloudflared (behind a Cloudflare tunnel), oneshot (a job that runs and ends), container only, on site. A shared cause: services of one place that go off together come in one follow-up alert, and one summary when they are back. A maintenance window can cover a place."
      />
      <F.Field
        name="tags"
        maxlength={1050}
        hint="Words separated by spaces, e.g. backup prod; Healthchecks clients filter by them"
      />
      {hb
        ? (
          <details
            open={!!(props.view.errors.min_duration || given(props.view.values.min_duration))}
          >
            <summary>Heartbeat runs (optional)</summary>
            <F.Field
              name="min_duration"
              type="number"
              hint="A run your job reports with a start and then a success sooner than this counts as failed, e.g. 300 for a backup that takes at least 5 minutes. Empty: no minimum."
            />
          </details>
        )
        : null}
    </>
  );
}

/** When a heartbeat is expected: every interval, or at the times a cron line names. */
function HeartbeatTiming(props: { view: FormView }) {
  const F = fields(props.view, LABELS, CreateBody);
  return (
    <fieldset>
      <legend>When your job runs</legend>
      <ScheduleHelp />
      <F.Select
        name="interval"
        label="Expected every"
        options={intervalOptions}
        hint="Used when no schedule is given below."
      />
      <F.Field
        name="schedule"
        hint="Or a cron line as in your crontab, five fields, e.g. 0 3 * * * for 03:00 daily. Empty: the interval above."
      />
      <F.Field name="tz" hint="With a schedule; e.g. Europe/Berlin. Empty: UTC." />
      <F.Field
        name="grace"
        type="number"
        hint="With a schedule: minutes a run may be late before you are alerted. Empty: 60 minutes."
      />
      <F.Field
        name="period_seconds"
        type="number"
        hint="Instead of the interval above: any period from 60 seconds to 365 days, e.g. 600 for ten minutes or 604800 for a week (Healthchecks' timeout). Empty: the interval."
      />
      <F.Field
        name="grace_seconds"
        type="number"
        hint="Seconds a run may be late before you are alerted, 60 to 31536000 (Healthchecks' grace); with a schedule it replaces the grace minutes. Empty: the grace minutes, or one period."
      />
    </fieldset>
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
  const min = given(f.min_duration);
  const period = given(f.period_seconds);
  const graceSeconds = given(f.grace_seconds);
  const http = httpInput(f);
  return {
    name: f.name ?? "",
    what: f.what ?? "",
    group: f.group,
    place: given(f.place) ?? null,
    interval: Number(f.interval),
    alerts: checked(f.alerts),
    threshold: Number(f.threshold ?? 1),
    remind: given(f.remind) === undefined ? null : Number(f.remind),
    tags: (f.tags ?? "").split(/\s+/).filter((t) => t !== ""),
    ...(schedule !== undefined ? { schedule } : {}),
    ...(tz !== undefined ? { tz } : {}),
    ...(grace !== undefined ? { grace: Number(grace) } : {}),
    // Sent only when given (or to clear one shown): a checked kind has none.
    ...(min !== undefined ? { min_duration: Number(min) } : {}),
    ...(min === undefined && f.had_min === "1" ? { min_duration: null } : {}),
    ...(period !== undefined ? { period_seconds: Number(period) } : {}),
    ...(graceSeconds !== undefined ? { grace_seconds: Number(graceSeconds) } : {}),
    ...(http !== undefined ? { http } : {}),
  };
}

/** What each kind watches, and what it asks for, on the add page. */
const KIND_CHOICES: Record<string, { what: string; check?: [label: string, hint: string] }> = {
  url: {
    what: "A website or an HTTP endpoint: it is up when it answers with a success status.",
    check: ["Address to check", "e.g. https://example.org/health"],
  },
  mcp: {
    what: "An MCP server: it is up when it answers the protocol's initialize request.",
    check: ["Address of the MCP server", "e.g. https://example.org/mcp"],
  },
  tcp: {
    what: "A port of a server (a database, a mail server): up when it accepts a connection.",
    check: ["Host and port", "e.g. db.example.org:5432"],
  },
  tls: {
    what: "A certificate: warns two weeks before it expires, down when it is invalid.",
    check: ["Host", "e.g. example.org, or example.org:8443 for another port"],
  },
  webhook: {
    what:
      "A cron job or a backup: it calls this site when it has run; you are alerted when a run fails or does not come.",
  },
};

/** A kind's defaults: a check every 5 minutes (a certificate's daily); a heartbeat daily. */
const KIND_DEFAULTS: Record<string, Record<string, string>> = {
  url: { interval: "5" },
  mcp: { interval: "5" },
  tcp: { interval: "5" },
  tls: { interval: "1440" },
  webhook: { interval: "1440" },
};

const isKind = (k: string | undefined): k is typeof KINDS[number] =>
  (KINDS as readonly string[]).includes(k ?? "");

/** Step one of adding: what to watch (a GET form, so it works without script). */
function KindChooser() {
  return (
    <form method="get" action="/me/services/new">
      <fieldset>
        <legend>What do you want to watch?</legend>
        {KINDS.map((k, i) => (
          <div class="field check">
            <input type="radio" id={`kind-${k}`} name="kind" value={k} checked={i === 0} />
            <label for={`kind-${k}`}>{KIND_LABELS[k]}</label>
            <p class="hint">{KIND_CHOICES[k].what}</p>
          </div>
        ))}
      </fieldset>
      <button type="submit">Next</button>
    </form>
  );
}

type Choices = Awaited<ReturnType<typeof channelChoices>>;

/** The form's name of a channel's box. */
const channelBox = (id: number) => `channel_${id}`;

/** The channels ticked on the add form as the API's `channels`; absent if the form had none. */
function channelsInput(f: Record<string, string>): { channels?: number[] } {
  if (f.channels_listed !== "1") return {};
  const ids = Object.keys(f).flatMap((k) => {
    const m = /^channel_([1-9][0-9]{0,14})$/.exec(k);
    return m && checked(f[k]) ? [Number(m[1])] : [];
  });
  return { channels: ids };
}

/** The account's channels on the add form, those marked for new services ticked. */
function ChannelChoices({ view, choices }: { view: FormView; choices: Choices }) {
  if (!choices.length) {
    return (
      <p class="hint">
        Alerts go by mail. <a href="/me/channels">Add an alert channel</a>{" "}
        to be told in a chat, on your phone or in an on-call tool as well.
      </p>
    );
  }
  return (
    <fieldset>
      <legend>Alert channels besides mail</legend>
      <p class="hint">
        Ticked: the channels marked for new services (<a href="/me/channels">Alert channels</a>).
      </p>
      <input type="hidden" name="channels_listed" value="1" />
      {choices.map((ch) => (
        <Checkbox
          name={channelBox(ch.id)}
          label={`${ch.name} (${CHANNEL_KINDS[ch.kind]?.label ?? ch.kind})`}
          view={view}
        />
      ))}
    </fieldset>
  );
}

/** Step two: the form of the chosen kind, posted to /me/services. */
function AddForm(props: { view: FormView; kind: typeof KINDS[number]; choices: Choices }) {
  const { view, kind } = props;
  const choice = KIND_CHOICES[kind];
  const labels = choice.check ? { ...LABELS, check: choice.check[0] } : LABELS;
  const F = fields(view, labels, CreateBody);
  return (
    <form method="post" action="/me/services" novalidate>
      <F.Summary />
      <input type="hidden" name="kind" value={kind} />
      <p>
        Kind: <strong>{KIND_LABELS[kind]}</strong>.{" "}
        <a href="/me/services/new">Choose another kind</a>
      </p>
      {choice.check ? <F.Field name="check" hint={choice.check[1]} required /> : null}
      <CommonFields view={view} kind={kind} />
      <ChannelChoices view={view} choices={props.choices} />
      <button type="submit">Add service</button>
    </form>
  );
}

function ServiceTable(props: { items: ServiceView[]; link: (s: ServiceView) => string | null }) {
  return (
    <table class="stack">
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
              <td data-label="Name">
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
              <td data-label="Kind">{s.kind}</td>
              <td data-label="State">
                <StateBadge state={shownState(s)} />
              </td>
              <td data-label="Last result">
                <U>{s.status}</U>
                {s.ms !== null ? ` (${s.ms} ms)` : ""}
              </td>
              <td data-label="Last check or beat">
                {s.kind === "webhook" ? at(s.beat) : at(s.checked)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export { ServiceTable };

/**
 * The signals a job sends to its hook address, each a line to copy: the same lines as
 * docs/operations.md "Heartbeats from cron jobs" (tests/flows_test.ts compares them), with
 * `$B/KEY` replaced by the address.
 */
export const SIGNALS: { what: string; line: (hook: string) => string }[] = [
  { what: "Success (the job ran)", line: (h) => `curl -fsS -m 10 --retry 5 "${h}"` },
  {
    what: "A run began (RID: a UUID, to measure how long it runs)",
    line: (h) => `curl -fsS -m 10 --retry 5 "${h}/start?rid=$RID"`,
  },
  {
    what: "Its end, with its log as the body (the first 10 KB are kept)",
    line: (h) => `curl -fsS -m 10 --retry 5 --data-binary @job.log "${h}?rid=$RID"`,
  },
  { what: "It failed: off at once", line: (h) => `curl -fsS -m 10 --retry 5 "${h}/fail"` },
  {
    what: "Its exit code: 0 is success, anything else a failure",
    line: (h) => `backup.sh; curl -fsS -m 10 --retry 5 "${h}/$?"`,
  },
  {
    what: "A message for the events list, with no change of state",
    line: (h) => `curl -fsS -m 10 --retry 5 --data-binary "disk 81 % full" "${h}/log"`,
  },
];

/** What schedule and grace mean, where a heartbeat's timing is set or shown. */
export function ScheduleHelp() {
  return (
    <p class="hint">
      A heartbeat is expected once per interval ("Check every"), or, with a schedule, at each time
      the cron line names in its time zone. Grace is how many minutes late a beat may come before
      the service turns off and you are alerted: a backup that starts at 03:00 and takes up to 40
      minutes needs a grace of at least 40.
    </p>
  );
}

/** The lines a job calls, each with a copy button; `hook` is the address or a stand-in. */
function SignalLines(props: { hook: string }) {
  return (
    <>
      {SIGNALS.map((s, i) => (
        <div class="field">
          <label for={`signal-${i}`}>{s.what}</label>
          <input id={`signal-${i}`} type="text" readonly value={s.line(props.hook)} />
          <button
            type="button"
            data-copy={`#signal-${i}`}
            aria-label={`Copy this line: ${s.what}`}
            hidden
          >
            Copy this line
          </button>
        </div>
      ))}
    </>
  );
}

/** The hook address of a heartbeat with every signal's line, shown after adding or renewing. */
function HookShown(props: { url: string; intro: Child }) {
  return (
    <section aria-labelledby="hook-h" class="notice">
      <h2 id="hook-h">Hook address</h2>
      <p>
        {props.intro}{" "}
        It is shown on this page for 15 minutes and never again: copy it now. Anyone who has it can
        report for this service.
      </p>
      <div class="field">
        <label for="hook-url">Hook address</label>
        <input id="hook-url" type="text" readonly value={props.url} />
        <button type="button" data-copy="#hook-url" hidden>Copy hook address</button>
      </div>
      <h3>Lines for your job</h3>
      <p class="hint">
        Call the first line when your job has run, e.g. in crontab:{" "}
        <code>0 3 * * * /usr/local/bin/backup.sh && {SIGNALS[0].line(props.url)}</code>. The others
        report more; use the ones you need.
      </p>
      <SignalLines hook={props.url} />
      <ScheduleHelp />
    </section>
  );
}

const serviceId = (c: WebCtx) => Number(c.req.param("id")!);

const listPage = async (deps: Deps, c: WebCtx) => {
  const me = requireAccount(c);
  const now = deps.clock.now();
  const windows = await listWindows(deps.kv, me.id);
  const items = (await listServices(deps.kv, me.id)).map(({ service, beat }) =>
    serviceView(service, beat, now, windows)
  );
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Watched services</h1>
      <Purpose here="/me/services" />
      {items.length
        ? <ServiceTable items={items} link={(s) => `/me/services/${s.id}`} />
        : <p>No services watched yet.</p>}
      <p>
        <a href="/me/services/new" class="button">Add a service</a>{" "}
        <span class="hint">(up to {MAX_SERVICES} services)</span>
      </p>
      <p>
        <a href="/me/channels">Alert channels</a> · <a href="/me/status-page">Status page</a> ·{" "}
        <a href="/me/maintenance">Maintenance windows</a> · <a href="/me/reports">Uptime report</a>
        {" "}
        · <a href="/me/api-keys">API keys</a> ·{" "}
        <a href="/me/services/import">Import from Healthchecks or Uptime Kuma</a> ·{" "}
        <a href="/me/ping-key">Ping key</a>
      </p>
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
  return c.render(await listPage(deps, c), { title: "Watched services", noindex: true });
}

/** The add page: the kind first, then its form (`?kind=`), or the form again with messages. */
async function addPage(deps: Deps, c: WebCtx, kind: string | undefined, view?: FormView) {
  const me = requireAccount(c);
  const choices = isKind(kind) ? await channelChoices(deps.kv, me.id) : [];
  const ticked = Object.fromEntries(
    choices.filter((ch) => ch.for_new_services).map((ch) => [channelBox(ch.id), "on"]),
  );
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Add a service</h1>
      {isKind(kind)
        ? (
          <AddForm
            kind={kind}
            choices={choices}
            view={view ??
              emptyView({
                kind,
                group: "Public",
                threshold: "1",
                alerts: "on",
                ...KIND_DEFAULTS[kind],
                ...ticked,
              })}
          />
        )
        : <KindChooser />}
      <p>
        <a href="/me/services/import">Import from Healthchecks or Uptime Kuma</a> ·{" "}
        <a href="/me/services">All services</a>
      </p>
    </>
  );
}

async function getMeServicesNew(deps: Deps, c: WebCtx) {
  return c.render(await addPage(deps, c, c.req.query("kind")), {
    title: "Add a service",
    noindex: true,
  });
}

async function postMeServices(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await submitForm(c, {
    schema: CreateBody,
    also: fieldProblems,
    fieldOf: tagsField,
    input: (f) => ({
      ...commonInput(f),
      ...channelsInput(f),
      check: f.kind === "webhook" ? "webhook:" : `${f.kind ?? ""}:${(f.check ?? "").trim()}`,
    }),
    act: async (input) => {
      const r = await addService(deps, me, input);
      if (!r.hook_url) return `/me/services/${r.item.id}`;
      // The hook address is shown after the redirect (never in an address), from a flash of
      // this session: a reload shows it again and adds nothing.
      await keepHook(deps, c, r.item.id, { url: r.hook_url, made: "added" });
      return `/me/services/${r.item.id}/hook`;
    },
    show: (view) => addPage(deps, c, isKind(view.values.kind) ? view.values.kind : "url", view),
    page: { title: "Add a service" },
  });
}

/** What the hook page shows, kept for the session that added or renewed it (kv/accounts/flash.ts). */
interface HookFlash {
  url: string;
  made: "added" | "renewed";
}

const hookFlash = (id: number) => `hook:${id}`;

async function keepHook(deps: Deps, c: WebCtx, id: number, hook: HookFlash) {
  const token = webToken(deps, c);
  if (token) await putFlash(deps.kv, token, hookFlash(id), hook, deps.clock.now());
}

/** The page after adding a heartbeat or renewing its address: the address and its lines. */
async function getMeServicesIdHook(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = serviceId(c);
  const found = (await getService(deps.kv, me.id, id)).value;
  if (!found) fail(404, "no such service");
  const token = webToken(deps, c);
  const hook = token
    ? await readFlash<HookFlash>(deps.kv, token, hookFlash(id), deps.clock.now())
    : null;
  c.header("Cache-Control", "no-store");
  return c.render(
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>
        {hook?.made === "renewed" ? "New hook address for " : "Added "}
        <U>{found.name}</U>
      </h1>
      {hook
        ? (
          <HookShown
            url={hook.url}
            intro={hook.made === "renewed"
              ? "The old address no longer works: put this one in your job."
              : "Your job calls this address when it has run."}
          />
        )
        : (
          <p>
            The hook address was shown for 15 minutes after it was made and is no longer kept. If
            you did not copy it, make a new one with "New hook address" on the service's page.
          </p>
        )}
      <p>
        <a href={`/me/services/${id}`}>Go to the service</a> ·{" "}
        <a href="/me/services">All services</a>
      </p>
    </>,
    { title: hook?.made === "renewed" ? "New hook address" : "Service added", noindex: true },
  );
}

/** The form's values from the service as it is (before any submitted ones). */
const serviceValues = (s: ServiceView) =>
  emptyView({
    name: s.name,
    what: s.what,
    group: s.group,
    place: s.place ?? "",
    interval: String(s.interval),
    threshold: String(s.threshold),
    remind: s.remind === null ? "" : String(s.remind),
    alerts: s.alerts ? "on" : "",
    schedule: s.schedule ?? "",
    tz: s.tz ?? "",
    // A grace without a schedule (set through Healthchecks' API) is not this form's.
    grace: s.schedule === null || s.grace === null ? "" : String(s.grace),
    min_duration: s.min_duration === null ? "" : String(s.min_duration),
    // The exact period and grace, when the interval and minutes do not say them already.
    period_seconds: s.period_seconds !== null && s.period_seconds !== s.interval * 60
      ? String(s.period_seconds)
      : "",
    grace_seconds: s.grace_seconds !== null &&
        s.grace_seconds !== (s.schedule ? (s.grace ?? 60) * 60 : s.period_seconds)
      ? String(s.grace_seconds)
      : "",
    ...httpValues(s.http),
    tags: s.tags.join(" "),
    ...Object.fromEntries(s.depends_on.map((id) => [`d-${id}`, "on"])),
  });

/**
 * The services this one depends on, one checkbox each (the other services of the account):
 * while one of them is off, this one's off alerts fold into its and it reads unreachable.
 */
function DependsFields(props: { view: FormView; others: { id: number; name: string }[] }) {
  const { view, others } = props;
  const F = fields(view, LABELS);
  const error = view.errors.depends_on;
  return (
    <fieldset
      id="f-depends_on"
      aria-describedby={error ? "f-depends_on-error" : "f-depends_on-hint"}
    >
      <legend>{LABELS.depends_on}</legend>
      <p class="hint" id="f-depends_on-hint">
        While a service it depends on is off (the LAN router for the NAS), this one's own off alert
        waits and goes into that one's, and it reads unreachable rather than down.
      </p>
      {error ? <p class="error" id="f-depends_on-error">{error}</p> : null}
      <input type="hidden" name="had_depends" value="1" />
      {others.length
        ? others.map((o) => <F.Checkbox name={`d-${o.id}`} label={o.name} />)
        : <p>No other services yet.</p>}
    </fieldset>
  );
}

/** A term and its description, shown only when there is something to say. */
const Fact = ({ term, value }: { term: string; value: unknown }) =>
  value
    ? (
      <>
        <dt>{term}</dt>
        <dd>{value}</dd>
      </>
    )
    : null;

/** What the service is and how it is doing. */
function ServiceFacts({ s, now, via }: { s: ServiceView; now: number; via: string[] }) {
  return (
    <dl class="facts">
      <dt>State</dt>
      <dd>
        <StateBadge state={via.length ? "unreachable" : shownState(s)} />
        {via.length ? <U>{` ${unreachableWords(via)}`}</U> : null}
      </dd>
      <Fact
        term="Last result"
        value={s.status
          ? (
            <>
              <U>{s.status}</U>
              {s.ms !== null ? ` (${s.ms} ms)` : ""}
            </>
          )
          : null}
      />
      <dt>{s.kind === "webhook" ? "Last beat" : "Last checked"}</dt>
      <dd>
        <Ago at={ms(s.kind === "webhook" ? s.beat : s.checked)} now={now} />
      </dd>
      <dt>Kind</dt>
      <dd>{KIND_LABELS[s.kind] ?? s.kind}</dd>
      <Fact term="Target" value={s.target_hint ? <U>{s.target_hint}</U> : null} />
      <Fact
        term="Certificate expires"
        value={s.cert_expires ? <Ago at={ms(s.cert_expires)} now={now} /> : null}
      />
      <Fact term="Group" value={<U>{s.group}</U>} />
      <Fact term="Place" value={s.place ? <U>{s.place}</U> : null} />
      <Fact term="Tags" value={s.tags.length ? <U>{s.tags.join(" ")}</U> : null} />
      <dt>Added</dt>
      <dd>
        <Ago at={ms(s.created)} now={now} />
      </dd>
    </dl>
  );
}

/** A heartbeat's lines for the job that calls it. */
const JobLines = () => (
  <details>
    <summary>Lines for your job</summary>
    <p class="hint">
      Set HOOK to the hook address shown when the service was added (or make a new one below) and
      call these lines from your job.
    </p>
    <SignalLines hook="$HOOK" />
    <ScheduleHelp />
  </details>
);

/**
 * What can be done to the service, in one place: check now or pause, maintenance, a new hook
 * address and the lines for a job (heartbeats), delete.
 */
function ServiceActions({ s }: { s: ServiceView }) {
  const hb = s.kind === "webhook";
  return (
    <section aria-labelledby="actions" class="panel">
      <h2 id="actions">Actions</h2>
      <ul class="inline actions">
        <PauseButton service={s} />
        {hb || s.paused ? null : (
          <li>
            <PostButton action={`/me/services/${s.id}/check`} kind="secondary">
              Check now
            </PostButton>
          </li>
        )}
        <li>
          <a href="/me/maintenance" class="button secondary">Plan maintenance</a>
        </li>
        <li>
          <a href={`/me/reports?service=${s.id}`} class="button secondary">Uptime report</a>
        </li>
        {hb
          ? (
            <li>
              <PostButton
                action={`/me/services/${s.id}/rotate`}
                kind="secondary"
                confirm="The old hook address stops at once. Continue?"
              >
                New hook address
              </PostButton>
            </li>
          )
          : null}
        <li>
          <PostButton
            action={`/me/services/${s.id}/delete`}
            kind="danger"
            confirm="Stop watching this service?"
          >
            Delete service
          </PostButton>
        </li>
      </ul>
      {hb ? <JobLines /> : null}
    </section>
  );
}

const RangeQuery = z.enum(Object.keys(RANGES) as [Range, ...Range[]]).catch("24h");

const servicePage = async (deps: Deps, c: WebCtx, view?: FormView) => {
  const me = requireAccount(c);
  const found = (await getService(deps.kv, me.id, serviceId(c))).value;
  if (!found) fail(404, "no such service");
  const now = deps.clock.now();
  const windows = await listWindows(deps.kv, me.id);
  const s = serviceView(found, await getBeat(deps.kv, found), now, windows);
  const v = view ?? serviceValues(s);
  const range = RangeQuery.parse(c.req.query("range"));
  const all = (await listServices(deps.kv, me.id)).map((x) => x.service);
  const others = all.filter((x) => x.id !== s.id).map((x) => ({ id: x.id, name: x.name }));
  const via = await parentsOff(deps, found, now, windows);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <p class="meta crumbs">
        <a href="/watch">Watching</a> › <U>{s.name}</U>
      </p>
      <h1>
        <U>{s.name}</U>
      </h1>
      {s.what
        ? (
          <p class="lede">
            <U>{s.what}</U>
          </p>
        )
        : null}
      <div
        data-live={`/watch/live?service=${s.id}`}
        data-version={await boardVersion(deps, me.id, s.id)}
      >
        <div id="service-now" data-live-part="">
          <ServiceFacts s={s} now={now} via={via} />
          {await watchSection(deps, found, s, range)}
        </div>
      </div>
      <ServiceActions s={s} />
      {s.kind === "webhook"
        ? (
          <CompatSection
            base={deps.config.baseUrl}
            id={s.id}
            uuid={s.uuid ?? ""}
            slug={s.slug ?? ""}
            post={s.methods === "POST"}
            keyMade={(await pingKeyMade(deps.kv, me.id)) !== null}
          />
        )
        : null}
      {await settingsSection(deps, found, s)}
      <section aria-labelledby="change" class="panel">
        <h2 id="change">Change it</h2>
        <form method="post" action={`/me/services/${s.id}`} novalidate>
          <ErrorSummary view={v} labels={LABELS} />
          <CommonFields view={v} kind={s.kind} />
          <DependsFields view={v} others={others} />
          {s.schedule ? <input type="hidden" name="had_schedule" value="1" /> : null}
          {s.min_duration !== null ? <input type="hidden" name="had_min" value="1" /> : null}
          {s.http ? <input type="hidden" name="had_http" value="1" /> : null}
          <button type="submit">Save changes</button>
        </form>
      </section>
      <p>
        <a href="/watch">All services</a>
      </p>
    </>
  );
};

/** Pause or resume a service of any kind: one button, what it does said beside it. */
function PauseButton({ service: s }: { service: ServiceView }) {
  const hb = s.kind === "webhook";
  const what = hb ? "heartbeat" : "checks";
  return (
    <li>
      <form method="post" action={`/me/services/${s.id}/${s.paused ? "resume" : "pause"}`}>
        <button type="submit" class="secondary" aria-describedby={`pause-${s.id}`}>
          {s.paused ? `Resume ${what}` : `Pause ${what}`}
        </button>
        <span class="hint" id={`pause-${s.id}`}>
          {s.paused
            ? hb
              ? " Watched again from now on: lateness counts from the resume."
              : " Checked again at once, then at its interval."
            : hb
            ? " While paused: no alerts, no lateness, no missing runs."
            : " While paused: not checked, no alerts."}
        </span>
      </form>
    </li>
  );
}

async function getMeServicesId(deps: Deps, c: WebCtx) {
  c.header("Cache-Control", "no-store");
  return c.render(await servicePage(deps, c), {
    title: "Service",
    noindex: true,
    scripts: ["live.js"],
  });
}

/** The ticked services of the dependency fieldset (`d-<id>`). */
const dependsInput = (f: Record<string, string>) =>
  Object.keys(f).filter((k) => /^d-\d+$/.test(k) && f[k] === "on").map((k) => Number(k.slice(2)));

async function postMeServicesId(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = serviceId(c);
  return await submitForm(c, {
    schema: PatchBody,
    also: fieldProblems,
    fieldOf: tagsField,
    input: (f) => {
      const common = {
        ...commonInput(f),
        ...(f.had_depends === "1" ? { depends_on: dependsInput(f) } : {}),
      };
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
    page: { title: "Service", scripts: ["live.js"] },
  });
}

async function postMeServicesIdCheck(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = serviceId(c);
  await checkServiceNow(deps, me, id);
  return seeOther(c, `/me/services/${id}`);
}

/** POST /me/services/<id>/pause and /resume: the PATCH's `paused`, then the page again. */
async function postMeServicesIdPause(deps: Deps, c: WebCtx, paused: boolean) {
  const me = requireAccount(c);
  const id = serviceId(c);
  await editService(deps, me, id, { paused });
  return seeOther(c, `/me/services/${id}`);
}

async function postMeServicesIdRotate(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = serviceId(c);
  const key = await rotateHook(deps, me.id, id);
  if (!key) fail(404, "no such service");
  await keepHook(deps, c, id, { url: hookUrl(deps, key), made: "renewed" });
  return seeOther(c, `/me/services/${id}/hook`);
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

  app.get("/me/services/new", (c) => getMeServicesNew(deps, c));

  app.get("/me/services/:id{[0-9]{1,15}}", (c) => getMeServicesId(deps, c));

  app.get("/me/services/:id{[0-9]{1,15}}/hook", (c) => getMeServicesIdHook(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}", (c) => postMeServicesId(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/check", (c) => postMeServicesIdCheck(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/rotate", (c) => postMeServicesIdRotate(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/pause", (c) => postMeServicesIdPause(deps, c, true));

  app.post("/me/services/:id{[0-9]{1,15}}/resume", (c) => postMeServicesIdPause(deps, c, false));

  app.post("/me/services/:id{[0-9]{1,15}}/delete", (c) => postMeServicesIdDelete(deps, c));

  return app;
}
