/**
 * The alert channels page (/me/channels): the list with each channel's state and actions, the
 * Apprise form, the alert grouping switch, and what the last add, test or apply left to show.
 */
import { isOwner } from "../kv/accounts/accounts.ts";
import { groupingOf, setGrouping } from "../kv/alerts/alert_groups.ts";
import { getChannel, MAX_CHANNELS, SIGNATURE_HEADER } from "../kv/alerts/channels.ts";
import { testChannel } from "../kv/alerts/outbox.ts";
import { KIND_LIST } from "../lib/channels/mod.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import {
  addChannel,
  applyChannel,
  changeChannel,
  channelsInUse,
  removeChannel,
} from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { limit } from "../http/guards.ts";
import { z } from "zod";
import { oneLineField } from "../http/text.ts";
import { checked, emptyView, type FormView, readBody, readForm, submitForm } from "./_form.tsx";
import { Checkbox, ErrorSummary, Field } from "./_form_controls.tsx";
import { CopyField, UserText } from "./_layout.tsx";
import { MeNav } from "./_me.tsx";
import { requireAccount, routeId, seeOther, type WebCtx } from "./_web.tsx";
import { putSessionFlash, readSessionFlash } from "./_session.ts";
import { ChannelList } from "./_me_channel_table.tsx";

const AppriseChannel = z.object({
  name: oneLineField(80).min(2),
  apprise: z.string().min(1).max(2000),
});

/** What the last add, test or apply of a session left to show on the channels page (kv/accounts/flash.ts). */
export type Shown =
  | { name: string; secret: string | null; services?: number }
  | { tested: string; ok: boolean }
  | { applied: string; services: number; added: number };
const CHANNEL_FLASH = "channels";

export const channelsPage = async (
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
export const USE_DEFAULTS = { for_new_services: "on", apply_to_all: "on" };

/** The form's two choices of a new channel: new services, and the ones there are now. */
export const useInput = (form: Record<string, string>) => ({
  for_new_services: checked(form.for_new_services),
  apply_to_all: checked(form.apply_to_all),
});

/** "Use for new services" and "Also alert my N services", on every add form. */
export function UseFields({ view, services }: { view: FormView; services: number }) {
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
        <CopyField id="secret" label="Signing secret" value={shown.secret} />
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

// What the last add or test of this session left to show (kv/accounts/flash.ts): the answer is a 303
// here, so a reload neither adds a second channel nor sends a second test.
export async function getMeChannels(deps: Deps, c: WebCtx) {
  requireAccount(c);
  const shown = c.req.query("shown") === "1"
    ? await readSessionFlash<Shown>(deps, c, CHANNEL_FLASH)
    : null;
  if (shown) c.header("Cache-Control", "no-store");
  return c.render(await channelsPage(deps, c, shown ?? undefined), {
    title: "Alert channels",
    noindex: true,
  });
}

export async function showOnChannels(deps: Deps, c: WebCtx, shown: Shown) {
  await putSessionFlash(deps, c, CHANNEL_FLASH, shown);
  return seeOther(c, "/me/channels?shown=1");
}

export async function postMeChannelsApprise(deps: Deps, c: WebCtx) {
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

export async function postMeChannelsGrouping(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const body = await readBody(c);
  await setGrouping(deps, me.id, body.grouping === "on");
  return seeOther(c, "/me/channels?saved=grouping#grouping");
}

export async function postMeChannelsIdTest(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const ch = await getChannel(deps.kv, me.id, routeId(c));
  if (!ch) fail(404, "no such channel");
  await limit(deps, RULES.manualCheck, me.id);
  const r = await testChannel(deps, ch);
  return await showOnChannels(deps, c, { tested: r.status, ok: r.ok });
}

export async function postMeChannelsIdApply(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const ch = await getChannel(deps.kv, me.id, routeId(c));
  if (!ch) fail(404, "no such channel");
  const done = await applyChannel(deps, me.id, ch.id);
  if (!done) fail(404, "no such channel");
  return await showOnChannels(deps, c, { applied: ch.name, ...done });
}

export async function postMeChannelsIdForNew(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const form = await readForm(c);
  const on = checked(form.for_new_services);
  if (!await changeChannel(deps, me.id, routeId(c), { for_new_services: on })) {
    fail(404, "no such channel");
  }
  return seeOther(c, "/me/channels");
}

export async function postMeChannelsIdDelete(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  if (!await removeChannel(deps, me.id, id)) fail(404, "no such channel");
  return seeOther(c, "/me/channels");
}
