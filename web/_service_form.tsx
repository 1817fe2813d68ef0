/**
 * What the pages of watched services share (web/me_services.tsx: the list, adding one, the hook
 * address; web/me_service.tsx: one service's page and its changes): the form's labels and
 * fields (add and edit), its fields as the API's body, the lines a job calls, the hook address
 * kept for the session that made it.
 */
import { GROUPS, INTERVALS, PLACES, THRESHOLDS } from "../kv/service/commands.ts";
import { fieldProblems } from "../kv/service/rules.ts";
import type { Deps } from "../lib/deps.ts";
import { CreateBody } from "../http/services_inputs.ts";
import { checked, type FormView, nonBlank } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { CopyField } from "./_layout.tsx";
import { type WebCtx } from "./_web.tsx";
import { putSessionFlash } from "./_session.ts";
import { HTTP_LABELS, httpInput, HttpOptionsFieldset } from "./_http_options.tsx";

/** The units of the form's number fields, for their refusals ("a whole number of minutes"). */
const NUMBER_UNITS = {
  grace: "minutes",
  period_seconds: "seconds",
  grace_seconds: "seconds",
  min_duration: "seconds",
};

/** The form's labels, in the order its fields stand on the page (the error summary's order). */
export const LABELS = {
  kind: "Kind",
  check: "Address to check",
  name: "Name",
  what: "What it is",
  interval: "Check every",
  schedule: "Schedule (cron)",
  tz: "Time zone of the schedule",
  grace: "Grace minutes",
  period_seconds: "Exact period (seconds)",
  grace_seconds: "Exact grace (seconds)",
  ...HTTP_LABELS,
  threshold: "Failed checks or runs before an alert",
  alerts: "Alerts",
  remind: "Remind while off",
  group: "Group",
  place: "Place",
  tags: "Tags",
  min_duration: "Shortest run (seconds)",
  depends_on: "Depends on",
};

export const REMIND_OPTIONS: [string, string][] = [
  ["", "No reminders"],
  ...[1, 2, 4, 8, 12, 24].map((h): [string, string] => [String(h), `Every ${h} h`]),
];

export const KIND_LABELS: Record<string, string> = {
  url: "Web address (url)",
  mcp: "MCP server (mcp)",
  tcp: "TCP port (tcp)",
  tls: "TLS certificate (tls)",
  webhook: "Heartbeat: it calls us (webhook)",
};

export const INTERVAL_LABELS: Record<number, string> = {
  5: "5 minutes",
  15: "15 minutes",
  60: "hour",
  240: "4 hours",
  1440: "day",
};

export const intervalOptions = INTERVALS.map((i) =>
  [String(i), INTERVAL_LABELS[i] ?? `${i} min`] as [
    string,
    string,
  ]
);
export const placeOptions: [string, string][] = [
  ["", "Not given"],
  ...PLACES.map((p) => [p, p] as [string, string]),
];

/** A message about one tag ("tags.2") stands beside the tags field. */
const tagsField = (path: string) => (path.startsWith("tags.") ? "tags" : path);

/**
 * How the add and the settings form's answer is refused, for `submitForm`: the domain's checks
 * run with the schema's (kv/service/rules.ts `fieldProblems`), a tag's message beside the tags
 * field, a number's unit in its message.
 */
export const SERVICE_REFUSALS = { also: fieldProblems, fieldOf: tagsField, units: NUMBER_UNITS };

/** The shared fields of the add and edit forms; a heartbeat's timing only for a heartbeat. */
export function CommonFields(props: { view: FormView; kind: string }) {
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
      <F.Checkbox
        name="alerts"
        label="Alert me when it goes off and comes back"
        hint="By mail and on its alert channels. Unticked: no alert at all, on no channel either; it is still watched and its state shown."
      />
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
            open={!!(props.view.errors.min_duration || nonBlank(props.view.values.min_duration))}
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
export function HeartbeatTiming(props: { view: FormView }) {
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
export function commonInput(f: Record<string, string>) {
  const schedule = nonBlank(f.schedule);
  const tz = nonBlank(f.tz);
  const grace = nonBlank(f.grace);
  const min = nonBlank(f.min_duration);
  const period = nonBlank(f.period_seconds);
  const graceSeconds = nonBlank(f.grace_seconds);
  const http = httpInput(f);
  return {
    name: f.name ?? "",
    what: f.what ?? "",
    group: f.group,
    place: nonBlank(f.place) ?? null,
    interval: Number(f.interval),
    alerts: checked(f.alerts),
    threshold: Number(f.threshold ?? 1),
    remind: nonBlank(f.remind) === undefined ? null : Number(f.remind),
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

/**
 * The signals a job sends to its hook address, each a line to copy: the same lines as
 * docs/operations.md "Heartbeats from cron jobs" (tests/first_minutes_test.ts compares them), with
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
export function SignalLines(props: { hook: string; only?: number[] }) {
  return (
    <>
      {SIGNALS.map((s, i) =>
        props.only && !props.only.includes(i) ? null : (
          <CopyField
            id={`signal-${i}`}
            label={s.what}
            value={s.line(props.hook)}
            copy="Copy this line"
            copyLabel={`Copy this line: ${s.what}`}
          />
        )
      )}
    </>
  );
}

/** The hook address of a heartbeat with every signal's line, shown after adding or renewing. */

/** What the hook page shows, kept for the session that added or renewed it (kv/accounts/flash.ts). */
export interface HookFlash {
  url: string;
  made: "added" | "renewed";
}

export const hookFlash = (id: number) => `hook:${id}`;

export async function keepHook(deps: Deps, c: WebCtx, id: number, hook: HookFlash) {
  await putSessionFlash(deps, c, hookFlash(id), hook);
}
