/**
 * Adding a watched service (/me/services/new, POST /me/services): the kind first (a GET form),
 * then the form of that kind with the account's alert channels, posted as POST
 * /api/me/services's body (kv/service/rules.ts addService).
 */
import { channelChoices } from "../kv/alerts/channels.ts";
import { CHANNEL_KINDS } from "../lib/channels/mod.ts";
import { TARGET_KINDS } from "../lib/targets.ts";
import type { Deps } from "../lib/deps.ts";
import { HOUR } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { formToken } from "../kv/store/form_tokens.ts";
import { addService } from "../kv/service/rules.ts";
import { CreateBody } from "../http/services_inputs.ts";
import { checked, emptyView, type FormView, submitForm } from "./_form.tsx";
import { Checkbox, fields } from "./_form_controls.tsx";
import { MeNav } from "./_me.tsx";
import { requireAccount, type WebCtx } from "./_web.tsx";
import {
  CommonFields,
  commonInput,
  keepHook,
  KIND_LABELS,
  LABELS,
  SERVICE_REFUSALS,
} from "./_service_form.tsx";

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

export async function getMeServicesNew(deps: Deps, c: WebCtx) {
  return c.render(await addPage(deps, c, c.req.query("kind")), {
    title: "Add a service",
    noindex: true,
  });
}

export async function postMeServices(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await submitForm(c, {
    schema: CreateBody,
    ...SERVICE_REFUSALS,
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
