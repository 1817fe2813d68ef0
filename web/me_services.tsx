/**
 * Watched services (/me/services): the list with state, last result and last beat; adding one
 * of every kind; a heartbeat's hook address shown once (with a copy button and a ready cron
 * line). The same functions as /api/me/services (kv/service/rules.ts addService). One
 * service's page is web/me_service.tsx; the form both use is web/_service_form.tsx.
 */
import type { Child } from "hono/jsx";
import { isOwner } from "../kv/accounts/accounts.ts";
import {
  getService,
  listServices,
  MAX_SERVICES,
  type ServiceView,
  serviceView,
} from "../kv/service/commands.ts";
import { shownState } from "../kv/service/state.ts";
import { channelChoices } from "../kv/alerts/channels.ts";
import { CHANNEL_KINDS } from "../lib/channels/mod.ts";
import { TARGET_KINDS } from "../lib/targets.ts";
import type { Deps } from "../lib/deps.ts";
import { HOUR } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { formToken } from "../kv/store/form_tokens.ts";
import { readSnapshot } from "../lib/machine.ts";
import { addService, fieldProblems } from "../kv/service/rules.ts";
import { CreateBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { Checkbox, checked, emptyView, fields, type FormView, submitForm } from "./_form.tsx";
import { CopyField, UserText } from "./_layout.tsx";
import { StateBadge } from "./_state.tsx";
import { Table } from "./_table.tsx";
import { MeNav, Purpose, when } from "./_me.tsx";
import { requireAccount, routeId, type WebCtx, webRouter } from "./_web.tsx";
import { webToken } from "./_session.ts";
import { readFlash } from "../kv/accounts/flash.ts";
import { listWindows } from "../kv/service/maintenance.ts";
import {
  CommonFields,
  commonInput,
  type HookFlash,
  hookFlash,
  keepHook,
  KIND_LABELS,
  LABELS,
  NUMBER_UNITS,
  ScheduleHelp,
  SignalLines,
  SIGNALS,
  tagsField,
} from "./_service_form.tsx";

export { StateBadge };

const at = (s: string | null) => (s ? when(Date.parse(s)) : "never");

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

const isKind = (k: string | undefined): k is typeof TARGET_KINDS[number] =>
  (TARGET_KINDS as readonly string[]).includes(k ?? "");

/** Step one of adding: what to watch (a GET form, so it works without script). */
function KindChooser() {
  return (
    <form method="get" action="/me/services/new">
      <fieldset>
        <legend>What do you want to watch?</legend>
        {TARGET_KINDS.map((k, i) => (
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
function AddForm(props: { view: FormView; kind: typeof TARGET_KINDS[number]; choices: Choices }) {
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

/** A service's name (a link to its page when it has one), its group and its place. */
function ServiceName({ s, href }: { s: ServiceView; href: string | null }) {
  return (
    <>
      {href
        ? (
          <a href={href}>
            <UserText>{s.name}</UserText>
          </a>
        )
        : <UserText>{s.name}</UserText>}
      <br />
      <span class="meta">
        <UserText>{s.group}</UserText>
        {s.place
          ? (
            <>
              {" · "}
              <UserText>{s.place}</UserText>
            </>
          )
          : null}
      </span>
    </>
  );
}

function ServiceTable(props: { items: ServiceView[]; link: (s: ServiceView) => string | null }) {
  return (
    <Table
      caption="Watched services"
      rows={props.items}
      columns={[
        { label: "Name", cell: (s) => <ServiceName s={s} href={props.link(s)} /> },
        { label: "Kind", cell: (s) => s.kind },
        { label: "State", cell: (s) => <StateBadge state={shownState(s)} /> },
        {
          label: "Last result",
          cell: (s) => (
            <>
              <UserText>{s.status}</UserText>
              {s.ms !== null ? ` (${s.ms} ms)` : ""}
            </>
          ),
        },
        {
          label: "Last check or beat",
          cell: (s) => s.kind === "webhook" ? at(s.beat) : at(s.checked),
        },
      ]}
    />
  );
}

export { ServiceTable };

function HookShown(props: { url: string; intro: Child }) {
  return (
    <section aria-labelledby="hook-h" class="notice">
      <h2 id="hook-h">Hook address</h2>
      <p>
        {props.intro}{" "}
        It is shown on this page for 15 minutes and never again: copy it now. Anyone who has it can
        report for this service.
      </p>
      <CopyField id="hook-url" label="Hook address" value={props.url} copy="Copy hook address" />
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

const listPage = async (deps: Deps, c: WebCtx) => {
  const me = requireAccount(c);
  const again = c.req.query("sent") === "again";
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
      {again
        ? (
          <p class="notice" role="status">
            That form was sent before: its service was added once, not twice.
          </p>
        )
        : null}
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
        <UserText>{snap.host}</UserText> · read {at(snap.read)}
      </p>
      <ul>
        {snap.services.map((s) => (
          <li>
            <UserText>{s.name}</UserText> · <UserText>{s.state}</UserText> ·{" "}
            <UserText>{s.status}</UserText>
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
    units: NUMBER_UNITS,
    input: (f) => ({
      ...commonInput(f),
      ...channelsInput(f),
      check: f.kind === "webhook" ? "webhook:" : `${f.kind ?? ""}:${(f.check ?? "").trim()}`,
    }),
    act: async (input) => {
      // The same form sent again (Back and submit): nothing added, and the list says so. What
      // it asks for is its token; an identical service within the hour is the same form.
      const form = { token: formToken(me.id, "add-service", input), life: HOUR };
      let r;
      try {
        r = await addService(deps, me, input, form);
      } catch (err) {
        if (err instanceof DomainError && err.extra.repeated) return "/me/services?sent=again";
        throw err;
      }
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

/** The page after adding a heartbeat or renewing its address: the address and its lines. */
async function getMeServicesIdHook(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
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
        <UserText>{found.name}</UserText>
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

export function servicePages(deps: Deps) {
  const app = webRouter();

  app.get("/me/services", (c) => getMeServices(deps, c));

  app.post("/me/services", (c) => postMeServices(deps, c));

  app.get("/me/services/new", (c) => getMeServicesNew(deps, c));

  app.get("/me/services/:id{[0-9]{1,15}}/hook", (c) => getMeServicesIdHook(deps, c));

  return app;
}
