/**
 * A status page's settings (/me/status-pages/<id>; the first page also at /me/status-page): publish,
 * address, title, link, logo, and the services shown with their note, the heading they stand under
 * and their place. A refused form comes back with every value as typed and each message beside its
 * field; a saved one says what was stored.
 */
import { followerCount } from "../kv/status/followers.ts";
import { GROUPS, listServices, type Service } from "../kv/service/commands.ts";
import {
  changeStatusPage,
  getStatusPage,
  MAX_NOTE,
  pageSlug,
  saveStatusPage,
  type StatusPage,
} from "../kv/status/page.ts";
import type { Account } from "../kv/accounts/accounts.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { MAX_PAGE_GROUP, NewPageSettings, PageSettings } from "../http/status_inputs.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";

type FieldErrors = Record<string, string>;
import { PostButton, UserText } from "./_layout.tsx";
import { MeNav } from "./_me.tsx";
import { requireAccount, type WebCtx } from "./_web.tsx";
import { Notes } from "./_me_status_page_notes.tsx";

const LABELS: Record<string, string> = {
  enabled: "Publish the status page",
  slug: "Address",
  title: "Title",
  link: "Link to your own site",
  logo: "Show my profile picture as the page's logo",
  services: "Services on the page",
};
const MAX_PLACE = 30;

/** A stored page as the form's fields. */
function valuesOf(page: StatusPage | null): FormView["values"] {
  const v: FormView["values"] = {
    enabled: page?.enabled ? "on" : undefined,
    slug: page && page.id !== 1 ? page.slug : "",
    title: page?.title ?? "",
    link: page?.link ?? "",
    logo: page?.logo ? "on" : undefined,
  };
  (page?.services ?? []).forEach((s, i) => {
    v[`show-${s.id}`] = "on";
    v[`note-${s.id}`] = s.note;
    v[`group-${s.id}`] = s.group ?? "";
    v[`place-${s.id}`] = String(i + 1);
  });
  return v;
}

/**
 * The form's fields as the API's input: the ticked services in the order of their places (an
 * empty place after the numbered ones, by the usual order of groups, then the list's). `order` gets the ids in the
 * input's order, so an error of `services.N.note` lands beside that service's field.
 */
function inputOf(f: Record<string, string>, all: Service[], order: number[]) {
  const place = (id: number) => {
    const n = Number(f[`place-${id}`]);
    return (f[`place-${id}`] ?? "").trim() && Number.isInteger(n) ? n : Infinity;
  };
  // Without places, the usual order of groups (kv/service/commands.ts GROUPS), then the list's.
  const rank = (s: Service) => {
    const i = (GROUPS as readonly string[]).indexOf((f[`group-${s.id}`] ?? "").trim() || s.group);
    return i === -1 ? GROUPS.length : i;
  };
  const ticked = all.filter((s) => f[`show-${s.id}`] === "on")
    .map((s, i) => ({ s, i }))
    .sort((a, b) => place(a.s.id) - place(b.s.id) || rank(a.s) - rank(b.s) || a.i - b.i)
    .map(({ s }) => s);
  order.push(...ticked.map((s) => s.id));
  return {
    enabled: f.enabled === "on",
    ...(f.slug !== undefined ? { slug: f.slug } : {}),
    title: f.title ?? "",
    link: f.link ?? "",
    logo: f.logo === "on",
    services: ticked.map((s) => ({
      id: s.id,
      note: f[`note-${s.id}`] ?? "",
      group: f[`group-${s.id}`] ?? "",
    })),
  };
}

/** Places that are not whole numbers from 1 to MAX_PLACE, beside their fields. */
function placeProblems(f: Record<string, string>, all: Service[]): FieldErrors {
  const out: FieldErrors = {};
  for (const s of all) {
    const raw = (f[`place-${s.id}`] ?? "").trim();
    if (!raw) continue;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < 1 || n > MAX_PLACE) {
      out[`place-${s.id}`] = `the place is a whole number from 1 to ${MAX_PLACE}, or empty`;
    }
  }
  return out;
}

/** The errors in the order of the fields on the page (the summary reads as the form does). */
function inPageOrder(view: FormView, all: Service[]): FormView {
  const order = ["enabled", "slug", "title", "link", "logo", "services"];
  for (const s of all) order.push(`show-${s.id}`, `place-${s.id}`, `group-${s.id}`, `note-${s.id}`);
  const rank = (k: string) => (order.indexOf(k) + 1) || order.length + 1;
  const errors = Object.fromEntries(
    Object.entries(view.errors).sort(([a], [b]) => rank(a) - rank(b)),
  );
  return { ...view, errors };
}

/** What was stored, in one sentence: the notice after a save. */
function savedWords(page: StatusPage, me: Account, all: Service[]): string {
  const names = page.services.map((s) => all.find((x) => x.id === s.id)?.name)
    .filter((n): n is string => !!n);
  const where = `/status/${pageSlug(page, me)}`;
  const services = names.length
    ? `${names.length} service${names.length === 1 ? "" : "s"}: ${names.join(", ")}`
    : "no services";
  const title = page.title
    ? `title "${page.title}"`
    : `no title of its own (it reads "${me.name}")`;
  return page.enabled
    ? `Saved. Published at ${where} with ${services}; ${title}.`
    : `Saved. Not published: ${where} answers "not found" until you tick Publish. It holds ${services}; ${title}.`;
}

/** The labels of each service's fields. */
const serviceLabels = (services: Pick<Service, "id" | "name">[]) =>
  Object.fromEntries(services.flatMap((s) => [
    [`show-${s.id}`, s.name],
    [`place-${s.id}`, `Place of ${s.name}`],
    [`group-${s.id}`, `Heading for ${s.name}`],
    [`note-${s.id}`, `Note for ${s.name}`],
  ]));

/** The page's settings form, from the stored page or from the values as sent. */
function SettingsForm(
  props: { id: number; action: string; view: FormView; services: Service[]; me: Account },
) {
  const { view, services } = props;
  const F = fields(view, { ...LABELS, ...serviceLabels(services) });
  const v = view.values;
  const err = (name: string) =>
    view.errors[name] ? <p class="error" id={`f-${name}-error`}>{view.errors[name]}</p> : null;
  return (
    <form method="post" action={props.action} novalidate>
      <F.Summary />
      <F.Checkbox name="enabled" />
      {props.id === 1
        ? (
          <p class="hint">
            Address: {props.me.slug ? `/status/${props.me.slug}` : "made from your account's name"}
            {" "}
            (your account's; it follows your name).
          </p>
        )
        : (
          <F.Field
            name="slug"
            maxlength={60}
            required
            hint="The page is at /status/ followed by this: lower-case letters, digits and hyphens."
          />
        )}
      <F.Field name="title" maxlength={80} hint="Empty: your account's name." />
      <F.Field
        name="link"
        type="url"
        maxlength={2000}
        hint="Shown in the page's header, e.g. https://example.org. Empty: none."
      />
      <F.Checkbox name="logo" />
      <fieldset
        id="f-services"
        aria-describedby={view.errors.services ? "f-services-error" : "f-services-hint"}
      >
        <legend>{LABELS.services}</legend>
        <p class="hint" id="f-services-hint">
          Tick what visitors see. Place: 1 first; services stand under their heading, and headings
          in the order of their first service. Heading empty: the service's own group.
        </p>
        {err("services")}
        {services.length ? null : <p>No services yet: add one first.</p>}
        {services.map((s) => (
          <div class="page-svc">
            <div class="field check">
              <input
                type="checkbox"
                id={`s-${s.id}`}
                name={`show-${s.id}`}
                checked={v[`show-${s.id}`] === "on"}
              />
              <label for={`s-${s.id}`}>
                <UserText>{s.name}</UserText>
              </label>
            </div>
            {[
              ["place", 2, "numeric"],
              ["group", MAX_PAGE_GROUP, undefined],
              ["note", MAX_NOTE, undefined],
            ].map(([kind, max, mode]) => {
              const name = `${kind}-${s.id}`;
              const bad = view.errors[name];
              return (
                <div class={bad ? "field invalid" : "field"}>
                  <label for={`f-${name}`}>{serviceLabels([s])[name]}</label>
                  {bad ? <p class="error" id={`f-${name}-error`}>{bad}</p> : null}
                  <input
                    id={`f-${name}`}
                    name={name}
                    maxlength={max as number}
                    inputmode={mode as "numeric" | undefined}
                    placeholder={kind === "group" ? s.group : undefined}
                    value={v[name] ?? ""}
                    aria-invalid={bad ? "true" : undefined}
                    aria-describedby={bad ? `f-${name}-error` : undefined}
                  />
                </div>
              );
            })}
          </div>
        ))}
      </fieldset>
      <button type="submit">Save status page</button>
    </form>
  );
}

/** Where page `id`'s form posts and its page is: the first page keeps its address. */
const homeOf = (id: number, legacy: boolean) =>
  legacy && id === 1 ? "/me/status-page" : `/me/status-pages/${id}`;

export async function settingsPage(
  deps: Deps,
  c: WebCtx,
  id: number,
  legacy: boolean,
  view?: FormView,
  noteForm: FormView = emptyView({ kind: "investigating" }),
) {
  const me = requireAccount(c);
  const [page, services, followers] = await Promise.all([
    getStatusPage(deps.kv, me.id, id),
    listServices(deps.kv, me.id).then((l) => l.map((x) => x.service)),
    followerCount(deps.kv, me.id, id),
  ]);
  if (!page && id !== 1) fail(404, "no such status page");
  const shown = view ? inPageOrder(view, services) : emptyView(valuesOf(page));
  const saved = !view && page && c.req.query("saved") ? savedWords(page, me, services) : null;
  const where = page ? pageSlug(page, me) : me.slug;
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>
        {id === 1 ? "Status page" : (
          <>
            Status page <UserText>{page?.title || where}</UserText>
          </>
        )}
      </h1>
      {saved ? <p class="notice" role="status">{saved}</p> : null}
      <p>
        A public page at{" "}
        {where ? <a href={`/status/${where}`}>/status/{where}</a> : "your name's address"}{" "}
        lists the services you choose with their state, 90 days and uptime, your notes and the
        incidents that affect them. It never shows addresses, hook keys or status texts.{" "}
        <a href="/me/status-pages">All your status pages</a> · <a href="/me/incidents">Incidents</a>
      </p>
      <SettingsForm
        id={id}
        action={homeOf(id, legacy)}
        view={shown}
        services={services}
        me={me}
      />
      <p>
        {followers === 1 ? "1 person follows" : `${followers} people follow`}{" "}
        this page by mail. Who they are is not shown to you.
      </p>
      {id === 1 ? <Notes deps={deps} me={me} c={c} view={noteForm} /> : (
        <PostButton
          action={`/me/status-pages/${id}/delete`}
          kind="danger"
          confirm="Delete this status page? Its followers are deleted with it."
        >
          Delete this status page
        </PostButton>
      )}
    </>
  );
}

export const renderStatusSettings = async (c: WebCtx, body: Promise<unknown>) =>
  c.render(await body as never, { title: "Status page", noindex: true });

/** Saves page `id` from its form: 303 with what was saved, or the form again as typed. */
export async function saveFromForm(deps: Deps, c: WebCtx, id: number, legacy: boolean) {
  const me = requireAccount(c);
  const services = (await listServices(deps.kv, me.id)).map((x) => x.service);
  const order: number[] = [];
  let places: FieldErrors = {};
  if (!me.slug && id === 1) {
    c.status(400);
    const view: FormView = {
      values: {},
      errors: {},
      error: "Name your account first: the page's address is made from it.",
    };
    return await renderStatusSettings(c, settingsPage(deps, c, id, legacy, view));
  }
  return await submitForm(c, {
    schema: id === 1 ? PageSettings : NewPageSettings,
    input: (f) => {
      places = placeProblems(f, services);
      return inputOf(f, services, order);
    },
    also: () => places,
    fieldOf: (path) => {
      const m = path.match(/^services\.(\d+)\.(note|group)/);
      if (m && order[Number(m[1])]) return `${m[2]}-${order[Number(m[1])]}`;
      return path.split(".")[0];
    },
    act: async (data) => {
      const slug = "slug" in data ? String(data.slug) : "";
      await changeOrMake(deps, me.id, { ...data, id, slug });
      return `${homeOf(id, legacy)}?saved=1`;
    },
    show: (view) => settingsPage(deps, c, id, legacy, view),
    page: { title: "Status page" },
  });
}

/** Page 1 is made by its first save; another page must be there. */
const changeOrMake = (deps: Deps, account: number, page: StatusPage) =>
  page.id === 1 ? saveStatusPage(deps, account, page) : changeStatusPage(deps, account, page);
