/**
 * What the settings form of a service's page (/me/services/<id>, under "Edit settings") holds of
 * its own: the values from the service as it is, the services it depends on (one checkbox each),
 * and those ticked, read back from a sent form.
 */
import type { ServiceView } from "../kv/service/commands.ts";
import { emptyView, type FormView } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { httpValues } from "./_http_options.tsx";
import { LABELS } from "./_service_form.tsx";

/** The form's values from the service as it is (before any submitted ones). */
export const serviceValues = (s: ServiceView) =>
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
export function DependsFields(props: { view: FormView; others: { id: number; name: string }[] }) {
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

/** The ticked services of the dependency fieldset (`d-<id>`). */
export const dependsInput = (f: Record<string, string>) =>
  Object.keys(f).filter((k) => /^d-\d+$/.test(k) && f[k] === "on").map((k) => Number(k.slice(2)));
