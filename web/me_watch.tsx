/**
 * Monitoring pages next to /me/services: alert channels (/me/channels), a service's channel
 * choice and badge. The same domain functions as /api/me/channels (kv/alerts/channels.ts). The status
 * pages' settings are web/me_status_pages.tsx, the public page web/status.tsx.
 */
import { isOwner } from "../kv/accounts/accounts.ts";
import { groupingOf, setGrouping } from "../kv/alerts/alert_groups.ts";
import { getChannel, MAX_CHANNELS, SIGNATURE_HEADER } from "../kv/alerts/channels.ts";
import { testChannel } from "../kv/alerts/outbox.ts";
import { CHANNEL_KINDS, type FieldSpec, KIND_LIST, type KindSpec } from "../lib/channels/mod.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import {
  addChannel,
  applyChannel,
  changeChannel,
  type ChannelInUse,
  channelsInUse,
  removeChannel,
  rotateBadge,
} from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { editService } from "../kv/service/rules.ts";
import { PatchBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { limit } from "../http/guards.ts";
import { z } from "zod";
import { oneLineField } from "../http/text.ts";
import {
  Checkbox,
  checked,
  emptyView,
  ErrorSummary,
  Field,
  type FormView,
  readBody,
  readForm,
  Select,
  submitForm,
  TextArea,
} from "./_form.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { MeNav, when } from "./_me.tsx";
import { Table } from "./_table.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { webToken } from "./_session.ts";
import { putFlash, readFlash } from "../kv/accounts/flash.ts";

const NewChannel = z.object({ name: oneLineField(80).min(2) });
const AppriseChannel = z.object({
  name: oneLineField(80).min(2),
  apprise: z.string().min(1).max(2000),
});
const idOf = (c: WebCtx) => Number(c.req.param("id")!);

async function postMeServicesIdChannels(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = idOf(c);
  const body = await readBody(c);
  const raw = body.channel;
  const ids = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw])
    .map((x) => Number(x)).filter((n) => Number.isInteger(n) && n > 0);
  await editService(deps, me, id, PatchBody.parse({ channels: ids }));
  return seeOther(c, `/me/services/${id}`);
}

async function postMeServicesIdBadge(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = idOf(c);
  if (!await rotateBadge(deps, me.id, id)) fail(404, "no such service");
  return seeOther(c, `/me/services/${id}`);
}

/** What the last add, test or apply of a session left to show on the channels page (kv/accounts/flash.ts). */
type Shown =
  | { name: string; secret: string | null; services?: number }
  | { tested: string; ok: boolean }
  | { applied: string; services: number; added: number };
const CHANNEL_FLASH = "channels";

const STATE_WORDS = {
  ok: ["✅", "Working"],
  untested: ["🕓", "Not tested yet"],
  failing: ["⚠️", "Failing"],
  broken: ["⛔", "Broken"],
} as const;

/** A channel's state as the page says it: working only once something went through. */
const shownChannelState = (
  ch: { state: "ok" | "failing" | "broken"; last_delivered: string | null },
) => ch.state === "ok" && ch.last_delivered === null ? "untested" : ch.state;

const channelsPage = async (
  deps: Deps,
  c: WebCtx,
  shown?: Shown,
  appriseView: FormView = emptyView(USE_DEFAULTS),
) => {
  const me = requireAccount(c);
  const { items, services } = await channelsInUse(deps.kv, me.id);
  const grouping = await groupingOf(deps.kv, me.id);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Alert channels</h1>
      <p>
        Besides mail, alerts can go where you already look: a chat, your phone, an on-call tool, or
        a signed webhook. A channel marked for new services is ticked on the form of every service
        you add; "Apply to all my services" adds it to the ones you have. Each service's page
        chooses its own.
      </p>
      <ShownOnce shown={shown} />
      <ChannelList items={items} services={services} />
      <h2>Add a channel</h2>
      {items.length >= MAX_CHANNELS
        ? <p>You have {MAX_CHANNELS} channels, the most there can be: remove one first.</p>
        : (
          <ul class="kinds">
            {KIND_LIST.map((k) => (
              <li>
                <a href={`/me/channels/new/${k.kind}`}>{k.label}</a>:{" "}
                <span class="hint">{k.about}</span>
              </li>
            ))}
          </ul>
        )}
      {items.length < MAX_CHANNELS ? <AppriseForm view={appriseView} services={services} /> : null}
      <GroupingSwitch grouping={grouping} saved={c.req.query("saved") === "grouping"} />
      <p>
        <a href="/me/services">All services</a> · <a href="/me/status-page">Status page</a>
      </p>
    </>
  );
};

/** The account's alert grouping switch (kv/alerts/alert_groups.ts), and what its last save did. */
function GroupingSwitch({ grouping, saved }: { grouping: boolean; saved: boolean }) {
  return (
    <>
      <h2 id="grouping">One outage, few alerts</h2>
      <p>
        The first service that goes off always alerts at once. When more of your services at the
        same place (or, without a place, in the same named group) follow it within two minutes, as
        when a network or a machine is down, they come as one more mail and one post per channel
        naming them all, and one when they are back. Services in the default group "Public" without
        a place are never grouped.
      </p>
      {saved
        ? (
          <p class="notice" role="status">
            Saved: {grouping
              ? "services that go off or come back together send one alert."
              : "every service alerts on its own."}
          </p>
        )
        : null}
      <form method="post" action="/me/channels/grouping">
        <Checkbox
          name="grouping"
          label="Send one alert for services that go off or come back together"
          view={emptyView({ grouping: grouping ? "on" : "" })}
        />
        <button type="submit">Save alert grouping</button>
      </form>
    </>
  );
}

const APPRISE_LABELS = { name: "Name of the new channel", apprise: "Apprise URL" };

/** What a new channel is used for, ticked unless the form came back without them. */
const USE_DEFAULTS = { for_new_services: "on", apply_to_all: "on" };

/** The form's two choices of a new channel: new services, and the ones there are now. */
const useInput = (form: Record<string, string>) => ({
  for_new_services: checked(form.for_new_services),
  apply_to_all: checked(form.apply_to_all),
});

/** "Use for new services" and "Also alert my N services", on every add form. */
function UseFields({ view, services }: { view: FormView; services: number }) {
  return (
    <fieldset>
      <legend>Which services alert it</legend>
      <Checkbox
        name="for_new_services"
        label="Use for new services"
        hint="Ticked on the form of every service you add from now on."
        view={view}
      />
      {services
        ? (
          <Checkbox
            name="apply_to_all"
            label={`Also alert my ${services} existing service${services === 1 ? "" : "s"}`}
            hint="Adds it to each of them, besides the channels they already alert."
            view={view}
          />
        )
        : null}
    </fieldset>
  );
}

/** One more way in: an Apprise-style URL standing for a kind and its fields. */
function AppriseForm({ view, services }: { view: FormView; services: number }) {
  return (
    <>
      <h3 id="apprise">Or from an Apprise URL</h3>
      <form method="post" action="/me/channels/apprise" novalidate>
        <ErrorSummary view={view} labels={APPRISE_LABELS} />
        <Field name="name" label={APPRISE_LABELS.name} view={view} maxlength={80} required />
        <Field
          name="apprise"
          label={APPRISE_LABELS.apprise}
          view={view}
          maxlength={2000}
          required
          autocomplete="off"
          hint="As Apprise writes them: tgram://bot_token/chat_id, discord://id/token, slack://A/B/C, ntfys://host/topic, pover://user_key@app_token, pagerduty://integration_key@api_key, ... (docs/api.md)"
        />
        <UseFields view={view} services={services} />
        <button type="submit">Add from Apprise URL</button>
      </form>
    </>
  );
}

/** The form of one kind: the channel's name, then the kind's own fields with their help. */
const newChannelPage = async (
  deps: Deps,
  c: WebCtx,
  spec: KindSpec,
  view: FormView = emptyView(USE_DEFAULTS),
) => {
  const me = requireAccount(c);
  const { services } = await channelsInUse(deps.kv, me.id);
  const labels = Object.fromEntries([
    ["name", "Channel name"],
    ...spec.fields.map((f) => [f.name, f.label]),
  ]);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Add a {spec.label} channel</h1>
      <p>{spec.about}</p>
      <form method="post" action={`/me/channels/new/${spec.kind}`} novalidate>
        <ErrorSummary view={view} labels={labels} />
        <Field name="name" label="Channel name" view={view} maxlength={80} required />
        {spec.fields.map((f) => <KindField f={f} view={view} />)}
        <UseFields view={view} services={services} />
        <p class="hint">
          Tokens, keys and addresses marked secret are stored encrypted and never shown again.
        </p>
        <button type="submit">Add {spec.label} channel</button>
      </form>
      <p>
        <a href="/me/channels">All channels</a>
      </p>
    </>
  );
};

function KindField({ f, view }: { f: FieldSpec; view: FormView }) {
  const label = f.optional ? `${f.label} (optional)` : f.label;
  const hint = f.secret ? `${f.help} Secret: never shown again.` : f.help;
  if (f.type === "textarea") {
    return <TextArea name={f.name} label={label} view={view} hint={hint} maxlength={f.max} />;
  }
  if (f.type === "select") {
    return <Select name={f.name} label={label} view={view} hint={hint} options={f.options ?? []} />;
  }
  return (
    <Field
      name={f.name}
      label={label}
      view={view}
      hint={hint}
      maxlength={f.max}
      required={!f.optional}
      type={f.secret && f.type === "text" ? "password" : f.type === "url" ? "url" : "text"}
      autocomplete="off"
    />
  );
}

/** The new channel's signing secret, or the test's result, once after the redirect. */
function ShownOnce({ shown }: { shown?: Shown }) {
  if (!shown) return null;
  if ("applied" in shown) {
    return (
      <p class="notice" role="status">
        <UserText>{shown.applied}</UserText> now alerts {shown.services}{" "}
        service{shown.services === 1 ? "" : "s"}{" "}
        ({shown.added ? `added to ${shown.added}` : "it alerted them all already"}).
      </p>
    );
  }
  if ("tested" in shown) {
    return (
      <p class="notice" role="status">
        Test alert {shown.ok ? "delivered" : "not delivered"}: {shown.tested}
      </p>
    );
  }
  return shown.secret
    ? (
      <div class="notice" role="status">
        <p>
          Channel <UserText>{shown.name}</UserText> added{shown.services
            ? ` and alerts your ${shown.services} service${shown.services === 1 ? "" : "s"}`
            : ""}. Its signing secret is shown on this page for 15 minutes and never again: the
          receiver checks the <code>{SIGNATURE_HEADER}</code>{" "}
          header (sha256=HMAC-SHA256 of the body with this secret).
        </p>
        <p>
          <label for="secret">Signing secret</label>
          <input id="secret" readonly value={shown.secret} />
          <button type="button" data-copy="#secret" hidden>Copy</button>
        </p>
      </div>
    )
    : (
      <p class="notice" role="status">
        Channel <UserText>{shown.name}</UserText> added{shown.services
          ? ` and alerts your ${shown.services} service${shown.services === 1 ? "" : "s"}`
          : ""}. Send a test alert to see that it arrives.
      </p>
    );
}

/** How many services alert a channel, in words, with a warning when none does. */
function UsePart({ ch, services }: { ch: ChannelInUse; services: number }) {
  if (services === 0) return <span class="hint">No services yet</span>;
  if (ch.services === 0) return <span class="tag state state-warn">⚠️ None of {services}</span>;
  return <>{ch.services === services ? "All" : ch.services} of {services}</>;
}

function ChannelList({ items, services }: { items: ChannelInUse[]; services: number }) {
  return (
    <Table
      caption="Your channels"
      rows={items}
      empty={<p>No channels yet.</p>}
      columns={[
        {
          label: "Name",
          cell: (ch) => (
            <>
              <UserText>{ch.name}</UserText>
              <br />
              <span class="hint">
                <UserText>{ch.url_hint}</UserText>
              </span>
            </>
          ),
        },
        { label: "Kind", cell: (ch) => CHANNEL_KINDS[ch.kind]?.label ?? ch.kind },
        { label: "State", cell: (ch) => <ChannelStatePart ch={ch} /> },
        { label: "Services", cell: (ch) => <UsePart ch={ch} services={services} /> },
        { label: "New services", cell: (ch) => <ForNewSwitch ch={ch} /> },
        { label: "Added", cell: (ch) => when(Date.parse(ch.created)) },
        { label: "Actions", cell: (ch) => <ChannelActions ch={ch} services={services} /> },
      ]}
    />
  );
}

/** A channel's state, with its last error when it has one. */
function ChannelStatePart({ ch }: { ch: ChannelInUse }) {
  const shown = shownChannelState(ch);
  return (
    <>
      <span class={`tag channel-${shown}`}>
        {STATE_WORDS[shown][0]} {STATE_WORDS[shown][1]}
      </span>
      {ch.last_error
        ? (
          <p class="hint">
            Last error {when(Date.parse(ch.last_error.at))}: {ch.last_error.error}
          </p>
        )
        : null}
    </>
  );
}

/** What can be done with a channel: apply it to every service (when some lack it), test, remove. */
function ChannelActions({ ch, services }: { ch: ChannelInUse; services: number }) {
  return (
    <>
      {ch.services < services
        ? (
          <>
            <PostButton
              action={`/me/channels/${ch.id}/apply`}
              kind="secondary"
              label={`Apply to all my services: ${ch.name}`}
            >
              Apply to all my services
            </PostButton>
            {" "}
          </>
        )
        : null}
      <PostButton
        action={`/me/channels/${ch.id}/test`}
        kind="secondary"
        label={`Send a test alert to ${ch.name}`}
      >
        Send a test alert
      </PostButton>{" "}
      <PostButton
        action={`/me/channels/${ch.id}/delete`}
        kind="danger"
        confirm="Remove this channel from every service?"
        label={`Remove channel ${ch.name}`}
      >
        Remove channel
      </PostButton>
    </>
  );
}

/** Whether new services get the channel, and the button that turns it the other way. */
function ForNewSwitch({ ch }: { ch: ChannelInUse }) {
  const on = ch.for_new_services;
  const words = on ? "Stop using for new services" : "Use for new services";
  return (
    <>
      <span>{on ? "✓ Ticked for new services" : "Not ticked for new services"}</span>
      <PostButton
        action={`/me/channels/${ch.id}/for-new`}
        kind="secondary"
        label={`${words}: ${ch.name}`}
        fields={{ for_new_services: on ? "" : "on" }}
        block
      >
        {words}
      </PostButton>
    </>
  );
}

// What the last add or test of this session left to show (kv/accounts/flash.ts): the answer is a 303
// here, so a reload neither adds a second channel nor sends a second test.
async function getMeChannels(deps: Deps, c: WebCtx) {
  requireAccount(c);
  const token = webToken(deps, c);
  const shown = token && c.req.query("shown") === "1"
    ? await readFlash<Shown>(deps.kv, token, CHANNEL_FLASH, deps.clock.now())
    : null;
  if (shown) c.header("Cache-Control", "no-store");
  return c.render(await channelsPage(deps, c, shown ?? undefined), {
    title: "Alert channels",
    noindex: true,
  });
}

async function showOnChannels(deps: Deps, c: WebCtx, shown: Shown) {
  const token = webToken(deps, c);
  if (token) await putFlash(deps.kv, token, CHANNEL_FLASH, shown, deps.clock.now());
  return seeOther(c, "/me/channels?shown=1");
}

const kindParam = (c: WebCtx): KindSpec => {
  const spec = CHANNEL_KINDS[c.req.param("kind") ?? ""];
  if (!spec) fail(404, "no such kind of channel");
  return spec;
};

async function postMeChannelsApprise(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  let made: Shown | null = null;
  const res = await submitForm(c, {
    schema: AppriseChannel,
    act: async (input, form) => {
      const ch = await addChannel(deps, me.id, { ...input, ...useInput(form) }, isOwner(me));
      made = { name: ch.item.name, secret: ch.shownSecret, services: ch.item.services };
      return "/me/channels";
    },
    show: (view) => channelsPage(deps, c, undefined, view),
    page: { title: "Alert channels" },
  });
  return made ? await showOnChannels(deps, c, made) : res;
}

async function getMeChannelsNew(deps: Deps, c: WebCtx) {
  const spec = kindParam(c);
  return c.render(await newChannelPage(deps, c, spec), {
    title: `Add a ${spec.label} channel`,
    noindex: true,
  });
}

async function postMeChannelsNew(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const spec = kindParam(c);
  let made: Shown | null = null;
  const res = await submitForm(c, {
    schema: NewChannel,
    act: async (input, form) => {
      const ch = await addChannel(
        deps,
        me.id,
        { ...form, ...input, kind: spec.kind, ...useInput(form) },
        isOwner(me),
      );
      made = { name: ch.item.name, secret: ch.shownSecret, services: ch.item.services };
      return "/me/channels";
    },
    show: (view) => newChannelPage(deps, c, spec, view),
    page: { title: `Add a ${spec.label} channel` },
  });
  // The secret is shown after the redirect, from this session's flash.
  return made ? await showOnChannels(deps, c, made) : res;
}

async function postMeChannelsGrouping(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const body = await readBody(c);
  await setGrouping(deps, me.id, body.grouping === "on");
  return seeOther(c, "/me/channels?saved=grouping#grouping");
}

async function postMeChannelsIdTest(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const ch = await getChannel(deps.kv, me.id, idOf(c));
  if (!ch) fail(404, "no such channel");
  await limit(deps, RULES.manualCheck, me.id);
  const r = await testChannel(deps, ch);
  return await showOnChannels(deps, c, { tested: r.status, ok: r.ok });
}

async function postMeChannelsIdApply(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const ch = await getChannel(deps.kv, me.id, idOf(c));
  if (!ch) fail(404, "no such channel");
  const done = await applyChannel(deps, me.id, ch.id);
  if (!done) fail(404, "no such channel");
  return await showOnChannels(deps, c, { applied: ch.name, ...done });
}

async function postMeChannelsIdForNew(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const form = await readForm(c);
  const on = checked(form.for_new_services);
  if (!await changeChannel(deps, me.id, idOf(c), { for_new_services: on })) {
    fail(404, "no such channel");
  }
  return seeOther(c, "/me/channels");
}

async function postMeChannelsIdDelete(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = idOf(c);
  if (!await removeChannel(deps, me.id, id)) fail(404, "no such channel");
  return seeOther(c, "/me/channels");
}

export function watchPages(deps: Deps) {
  const app = webRouter();

  // ---- a service's channels and badge (its page is web/me_services.tsx) ----

  app.post("/me/services/:id{[0-9]{1,15}}/channels", (c) => postMeServicesIdChannels(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/badge", (c) => postMeServicesIdBadge(deps, c));

  // ---- channels ----

  app.get("/me/channels", (c) => getMeChannels(deps, c));

  app.get("/me/channels/new/:kind{[a-z_]{1,20}}", (c) => getMeChannelsNew(deps, c));
  app.post("/me/channels/new/:kind{[a-z_]{1,20}}", (c) => postMeChannelsNew(deps, c));
  app.post("/me/channels/grouping", (c) => postMeChannelsGrouping(deps, c));
  app.post("/me/channels/apprise", (c) => postMeChannelsApprise(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/test", (c) => postMeChannelsIdTest(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/apply", (c) => postMeChannelsIdApply(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/for-new", (c) => postMeChannelsIdForNew(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/delete", (c) => postMeChannelsIdDelete(deps, c));

  return app;
}
