/**
 * One watched service's page (/me/services/<id>): at the top whether it is fine and when it is
 * next due (state since when, timing and grace in words, last and next, the address to ping
 * with its lines, the ways it alerts); then its live figures and charts (web/_watch.tsx), the
 * actions, and the settings behind "Edit settings". Its changes: edit, check now, pause and
 * resume, a new hook address, delete; the same functions as /api/me/services/<id>.
 */
import { z } from "zod";
import { boardVersion, nextExpected, parentsOff } from "../kv/service/dashboard.ts";
import { channelChoices } from "../kv/alerts/channels.ts";
import { periodWords, timingSentence } from "../lib/timing_words.ts";
import { unreachableWords } from "../kv/service/dependencies.ts";
import {
  deleteService,
  getBeat,
  getService,
  listServices,
  pingKeyMade,
  rotateHook,
  type Service,
  type ServiceView,
  serviceView,
} from "../kv/service/commands.ts";
import { shownState } from "../kv/service/state.ts";
import type { Deps } from "../lib/deps.ts";
import { HOUR } from "../lib/clock.ts";
import { checkServiceNow, editService, fieldProblems, hookUrl } from "../kv/service/rules.ts";
import { PatchBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { emptyView, ErrorSummary, fields, type FormView, nonBlank, submitForm } from "./_form.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { type Range, RANGES, settingsSection, watchSection } from "./_watch.tsx";
import { AlertWays, NobodyTold, StateBadge } from "./_state.tsx";
import { CompatSection } from "./_compat.tsx";
import { Ago, Due, MeNav } from "./_me.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { httpValues } from "./_http_options.tsx";
import { listWindows } from "../kv/service/maintenance.ts";
import {
  CommonFields,
  commonInput,
  keepHook,
  KIND_LABELS,
  LABELS,
  NUMBER_UNITS,
  ScheduleHelp,
  SignalLines,
  tagsField,
} from "./_service_form.tsx";

const ms = (s: string | null) => (s ? Date.parse(s) : null);

const serviceId = (c: WebCtx) => Number(c.req.param("id")!);

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

/** The top of the page: is it fine, since when, and when is it next due. */
function ServiceTop(
  { s, found, now, via, next, channels }: {
    s: ServiceView;
    found: Service;
    now: number;
    via: string[];
    next: number | null;
    channels: { name: string; kind: string }[];
  },
) {
  const hb = s.kind === "webhook";
  const state = via.length ? "unreachable" : shownState(s);
  const last = ms(hb ? s.beat : s.checked);
  return (
    <dl class="top-facts">
      <div>
        <dt>State</dt>
        <dd>
          <StateBadge state={state} />{" "}
          <span class="since">
            since <Ago at={found.since ?? found.created} now={now} />
          </span>
          {via.length ? <UserText>{` ${unreachableWords(via)}`}</UserText> : null}
        </dd>
      </div>
      <div>
        <dt>{hb ? "Expected" : "Checked"}</dt>
        <dd>{hb ? timingSentence(s) : periodWords(s)}</dd>
      </div>
      <div>
        <dt>{hb ? "Last ping" : "Last check"}</dt>
        <dd>
          {last === null ? (hb ? "none yet" : "not checked yet") : <Ago at={last} now={now} />}
        </dd>
      </div>
      <div>
        <dt>{hb ? "Next expected" : "Next check"}</dt>
        <dd>
          {next !== null
            ? <Due at={next} now={now} />
            : s.paused
            ? "none while paused"
            : "one period after its first ping"}
        </dd>
      </div>
      <div>
        <dt>Alerts</dt>
        <dd>
          {s.alerts
            ? (
              <>
                <AlertWays alerts channels={channels} />{" "}
                <UserText>{["mail", ...channels.map((c) => c.name)].join(", ")}</UserText>
              </>
            )
            : <NobodyTold alerts={false} />}
        </dd>
      </div>
      {s.status
        ? (
          <div>
            <dt>Last result</dt>
            <dd>
              <UserText>{s.status}</UserText>
              {/* The check's words may say its time already, as the events show them. */}
              {s.ms !== null && !/\d ms\b/.test(s.status) ? ` (${s.ms} ms)` : ""}
            </dd>
          </div>
        )
        : null}
    </dl>
  );
}

/**
 * The one address a heartbeat's job pings (Healthchecks' `/ping/<uuid>`), with the lines for a
 * success, a start, a failure and an exit code. The hook address shown once at creation, the
 * ping key's slug address and Uptime Kuma's push reach the same service (their section below).
 */
function PingPart({ url }: { url: string }) {
  return (
    <section aria-labelledby="ping-h" class="panel ping">
      <h2 id="ping-h">Ping this address</h2>
      <p class="hint">
        Your job calls it when it has run. Add <code>/start</code> when it begins,{" "}
        <code>/fail</code> when it failed, or its exit code (<code>/0</code> is success).
      </p>
      <div class="field">
        <label for="ping-url">Ping address</label>
        <div class="copy-row">
          <input id="ping-url" type="text" readonly value={url} />
          <button type="button" data-copy="#ping-url" hidden>Copy</button>
        </div>
      </div>
      <details>
        <summary>Lines for your job</summary>
        <SignalLines hook={url} only={PING_LINES} />
        <ScheduleHelp />
      </details>
    </section>
  );
}

/** Success, a start, a failure and an exit code: SIGNALS' lines a ping address needs. */
const PING_LINES = [0, 1, 3, 4];

/** What the service is: its kind, target, group and the rest that does not change by itself. */
function ServiceFacts({ s, now }: { s: ServiceView; now: number }) {
  return (
    <dl class="facts">
      <dt>Kind</dt>
      <dd>{KIND_LABELS[s.kind] ?? s.kind}</dd>
      <Fact term="Target" value={s.target_hint ? <UserText>{s.target_hint}</UserText> : null} />
      <Fact
        term="Certificate expires"
        value={s.cert_expires ? <Ago at={ms(s.cert_expires)} now={now} /> : null}
      />
      <Fact term="Group" value={<UserText>{s.group}</UserText>} />
      <Fact term="Place" value={s.place ? <UserText>{s.place}</UserText> : null} />
      <Fact term="Tags" value={s.tags.length ? <UserText>{s.tags.join(" ")}</UserText> : null} />
      <dt>Added</dt>
      <dd>
        <Ago at={ms(s.created)} now={now} />
      </dd>
    </dl>
  );
}

/**
 * What can be done to the service, in one place: check now or pause, maintenance, a new hook
 * address (heartbeats), delete.
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
    </section>
  );
}

const RangeQuery = z.enum(Object.keys(RANGES) as [Range, ...Range[]]).optional().catch(undefined);

/** The chart's period unless one is chosen: the last hour for a service younger than that. */
const defaultRange = (created: number, now: number): Range => now - created < HOUR ? "1h" : "24h";

const servicePage = async (deps: Deps, c: WebCtx, view?: FormView) => {
  const me = requireAccount(c);
  const found = (await getService(deps.kv, me.id, serviceId(c))).value;
  if (!found) fail(404, "no such service");
  const now = deps.clock.now();
  const windows = await listWindows(deps.kv, me.id);
  const beat = await getBeat(deps.kv, found);
  const s = serviceView(found, beat, now, windows);
  const v = view ?? serviceValues(s);
  const range = RangeQuery.parse(c.req.query("range")) ?? defaultRange(found.created, now);
  const all = (await listServices(deps.kv, me.id)).map((x) => x.service);
  const others = all.filter((x) => x.id !== s.id).map((x) => ({ id: x.id, name: x.name }));
  const via = await parentsOff(deps, found, now, windows);
  const hb = s.kind === "webhook";
  const named = new Map((await channelChoices(deps.kv, me.id)).map((ch) => [ch.id, ch]));
  const chosen = s.channels.map((id) => named.get(id)).filter((ch) => ch !== undefined);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <p class="meta crumbs">
        <a href="/watch">Watching</a> › <UserText>{s.name}</UserText>
      </p>
      <h1>
        <UserText>{s.name}</UserText>
      </h1>
      {s.what
        ? (
          <p class="lede">
            <UserText>{s.what}</UserText>
          </p>
        )
        : null}
      <div
        data-live={`/watch/live?service=${s.id}`}
        data-version={await boardVersion(deps, me.id, s.id)}
      >
        <div id="service-top" data-live-part="">
          <ServiceTop
            s={s}
            found={found}
            now={now}
            via={via}
            next={nextExpected(found, s, beat, now)}
            channels={chosen}
          />
        </div>
        {hb ? <PingPart url={`${deps.config.baseUrl}/ping/${s.uuid ?? ""}`} /> : null}
        <div id="service-now" data-live-part="">
          {await watchSection(deps, found, s, range)}
        </div>
      </div>
      <ServiceActions s={s} />
      <details class="settings" open={view !== undefined}>
        <summary class="button secondary">Edit settings</summary>
        <ServiceFacts s={s} now={now} />
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
        {await settingsSection(deps, found, s)}
      </details>
      {hb
        ? (
          <details class="other-addresses">
            <summary>Other addresses: Healthchecks clients, Uptime Kuma, the ping key</summary>
            <CompatSection
              base={deps.config.baseUrl}
              id={s.id}
              uuid={s.uuid ?? ""}
              slug={s.slug ?? ""}
              post={s.methods === "POST"}
              keyMade={(await pingKeyMade(deps.kv, me.id)) !== null}
            />
          </details>
        )
        : null}
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
      <PostButton
        action={`/me/services/${s.id}/${s.paused ? "resume" : "pause"}`}
        kind="secondary"
        block
        hint={{
          id: `pause-${s.id}`,
          text: s.paused
            ? hb
              ? " Watched again from now on: lateness counts from the resume."
              : " Checked again at once, then at its interval."
            : hb
            ? " While paused: no alerts, no lateness, no missing runs."
            : " While paused: not checked, no alerts.",
        }}
      >
        {s.paused ? `Resume ${what}` : `Pause ${what}`}
      </PostButton>
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
    units: NUMBER_UNITS,
    input: (f) => {
      const common = {
        ...commonInput(f),
        ...(f.had_depends === "1" ? { depends_on: dependsInput(f) } : {}),
      };
      if (nonBlank(f.schedule) !== undefined) return common;
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

export function serviceOnePages(deps: Deps) {
  const app = webRouter();

  app.get("/me/services/:id{[0-9]{1,15}}", (c) => getMeServicesId(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}", (c) => postMeServicesId(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/check", (c) => postMeServicesIdCheck(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/rotate", (c) => postMeServicesIdRotate(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/pause", (c) => postMeServicesIdPause(deps, c, true));

  app.post("/me/services/:id{[0-9]{1,15}}/resume", (c) => postMeServicesIdPause(deps, c, false));

  app.post("/me/services/:id{[0-9]{1,15}}/delete", (c) => postMeServicesIdDelete(deps, c));

  return app;
}
