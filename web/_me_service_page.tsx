/**
 * One watched service's page (/me/services/<id>): the top and the ping address of a heartbeat
 * (web/_me_service_facts.tsx), its live figures (web/_me_service_live.tsx) with the chart
 * (web/_me_service_chart.tsx) and the incidents and events (web/_me_service_history.tsx), the
 * channels and the badge (web/_me_service_alerting.tsx), the actions
 * (web/_me_service_actions.tsx), and the settings behind "Edit settings"
 * (web/_me_service_settings.tsx) with the form's answer.
 */
import { z } from "zod";
import { boardVersion, nextExpected, parentsOff } from "../kv/service/dashboard.ts";
import { channelChoices } from "../kv/alerts/channels.ts";
import {
  getBeat,
  getService,
  listServices,
  pingKeyMade,
  serviceView,
} from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { HOUR } from "../lib/clock.ts";
import { editService } from "../kv/service/rules.ts";
import { PatchBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { type FormView, nonBlank, submitForm } from "./_form.tsx";
import { ErrorSummary } from "./_form_controls.tsx";
import { UserText } from "./_layout.tsx";
import { type Range, RANGES } from "./_me_service_chart.tsx";
import { liveSection } from "./_me_service_live.tsx";
import { settingsSection } from "./_me_service_alerting.tsx";
import { CompatSection } from "./_compat.tsx";
import { CrumbTitle, MeNav } from "./_me.tsx";
import { requireAccount, routeId, type WebCtx } from "./_web.tsx";
import { listWindows } from "../kv/service/maintenance.ts";
import { CommonFields, commonInput, LABELS, SERVICE_REFUSALS } from "./_service_form.tsx";
import { PingPart, ServiceFacts, ServiceTop } from "./_me_service_facts.tsx";
import { ServiceActions } from "./_me_service_actions.tsx";
import { DependsFields, dependsInput, serviceValues } from "./_me_service_settings.tsx";

const RangeQuery = z.enum(Object.keys(RANGES) as [Range, ...Range[]]).optional().catch(undefined);

/** The chart's period unless one is chosen: the last hour for a service younger than that. */
const defaultRange = (created: number, now: number): Range => now - created < HOUR ? "1h" : "24h";

const servicePage = async (deps: Deps, c: WebCtx, view?: FormView) => {
  const me = requireAccount(c);
  const found = (await getService(deps.kv, me.id, routeId(c))).value;
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
      <CrumbTitle up={["/watch", "Watching"]} title={s.name} />
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
          {await liveSection(deps, found, s, range)}
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

export async function getMeServicesId(deps: Deps, c: WebCtx) {
  c.header("Cache-Control", "no-store");
  return c.render(await servicePage(deps, c), {
    title: "Service",
    noindex: true,
    scripts: ["live.js"],
  });
}

/** The settings form's answer: saved, then the page; refused, the page with the form as sent. */
export async function postMeServicesId(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  return await submitForm(c, {
    schema: PatchBody,
    ...SERVICE_REFUSALS,
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
