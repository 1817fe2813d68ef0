/**
 * A module's editing page (/me/work/modules/<slug>): every field (facts as "label: value"
 * lines, gets as lines, materials as "label | address" lines) and its contributors added and
 * removed (kv/catalogue/modules.ts, as /api/me/modules); for its contributors and the team.
 */
import { isTeam } from "../kv/accounts/accounts.ts";
import { catalogueChanged } from "../kv/catalogue/catalogue_doc.ts";
import {
  addContributorByEmail,
  changeContributor,
  getModule,
  LIMITS,
  type Module,
  namesOf,
  patchModule,
  STATES,
} from "../kv/catalogue/modules.ts";
import type { Deps } from "../lib/deps.ts";
import { ModulePatchBody } from "../http/catalogue_inputs.ts";
import { fail } from "../http/errors.ts";
import { z } from "zod";
import { emailSchema } from "../lib/email.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { ErrorSummary, Field, fields } from "./_form_controls.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { LEARNING_LABELS, LearningFields, learningInput, learningValues } from "./_learning.tsx";
import { learningOf } from "../lib/learning.ts";
import { attachableFiles, MAX_MATERIALS } from "../kv/catalogue/materials.ts";
import { MeNav } from "./_me.tsx";
import { requireAccount, routeId, seeOther, type WebCtx } from "./_web.tsx";

const LABELS = {
  ...LEARNING_LABELS,
  title: "Title",
  who: "Who it is for",
  lede: "Lede",
  about: "About",
  note: "Note",
  state: "State",
  meta: "Meta line",
  facts: "Facts",
  gets: "What learners get",
  materials: "Materials",
};

const moduleValues = (m: Module): FormView["values"] => ({
  title: m.title,
  who: m.who,
  lede: m.lede,
  about: m.about,
  note: m.note ?? "",
  state: m.state,
  meta: m.meta ?? "",
  facts: m.facts.map(([k, v]) => `${k}: ${v}`).join("\n"),
  gets: m.gets.join("\n"),
  ...learningValues(learningOf(m)),
  materials: (m.materials ?? []).map((x) => `${x.label} | ${x.url}`).join("\n"),
});

/** The materials field's lines ("label | address") as the API's list. */
const materialsInput = (text: string) =>
  text.split(/\r?\n/).filter((l) => l.trim()).map((l) => {
    const i = l.lastIndexOf("|");
    return i < 0 ? { url: l.trim() } : { label: l.slice(0, i).trim(), url: l.slice(i + 1).trim() };
  });

const ContributorAdd = z.object({ email: emailSchema });

/** The module, if the signed-in account may edit it (a contributor or the team). */
const editable = async (deps: Deps, c: WebCtx, slug: string): Promise<Module> => {
  const me = requireAccount(c);
  const m = (await getModule(deps.kv, slug)).value;
  if (!m) fail(404, "no such module");
  if (!isTeam(me) && !m.contributors.includes(me.id)) {
    fail(403, "only the module's contributors and the team may do this");
  }
  return m;
};

const modulePage = async (deps: Deps, c: WebCtx, view?: FormView, addView?: FormView) => {
  const me = requireAccount(c);
  const m = await editable(deps, c, c.req.param("slug")! ?? "");
  const [names, files] = await Promise.all([
    namesOf(deps.kv, m.contributors),
    attachableFiles(deps.kv, me.id),
  ]);
  const v = view ?? emptyView(moduleValues(m));
  const F = fields(v, LABELS, ModulePatchBody);
  const a = addView ?? emptyView();
  return (
    <>
      <MeNav here="/me/work" viewer={me} />
      <h1>
        Edit <UserText>{m.title}</UserText>
      </h1>
      <p>
        <a href={`/modules/${m.slug}`}>Its public page</a>
      </p>
      <form method="post" action={`/me/work/modules/${m.slug}`} novalidate>
        <F.Summary />
        <F.Field name="title" required />
        <F.Field name="who" />
        <F.TextArea name="lede" rows={2} />
        <F.TextArea name="about" rows={8} />
        <F.TextArea name="note" rows={3} />
        <F.Select name="state" options={STATES} />
        <F.Field name="meta" />
        <F.TextArea
          name="facts"
          hint="One pair a line: label, a colon, the value (Duration: 4 weeks)."
          rows={5}
          maxlength={FACTS_TEXT}
        />
        <F.TextArea name="gets" hint="One line each." rows={5} maxlength={10_000} />
        <fieldset>
          <legend>Licence and who it is for</legend>
          <LearningFields view={v} />
        </fieldset>
        <F.TextArea
          name="materials"
          hint={"One a line: a label, a bar and the address (Worksheet | https://...). For one of " +
            "your public files, its address from the list below."}
          rows={4}
          maxlength={MAX_MATERIALS * 640}
        />
        {files.length
          ? (
            <details>
              <summary>Your public files ({files.length})</summary>
              <ul>
                {files.map((f) => (
                  <li>
                    <UserText>{f.label || f.name}</UserText>: <code>{f.url}</code>
                  </li>
                ))}
              </ul>
            </details>
          )
          : (
            <p class="hint">
              To attach a file, upload it on <a href="/me/files">your files</a> and make it public.
            </p>
          )}
        <button type="submit">Save module</button>
      </form>
      <h2>Contributors</h2>
      <ul>
        {m.contributors.map((id) => (
          <li>
            <UserText>{names.get(id) || `account ${id}`}</UserText>{" "}
            <PostButton
              action={`/me/work/modules/${m.slug}/contributors/${id}/remove`}
              kind="link"
            >
              Remove {names.get(id) || `account ${id}`}
            </PostButton>
          </li>
        ))}
      </ul>
      <form method="post" action={`/me/work/modules/${m.slug}/contributors`} novalidate>
        <ErrorSummary view={a} labels={{ email: "Contributor's address" }} />
        <Field
          name="email"
          type="email"
          label="Contributor's address"
          hint="A named account with contributor standing."
          view={a}
          maxlength={320}
          required
        />
        <button type="submit">Add contributor</button>
      </form>
    </>
  );
};

export async function postMeWorkModulesSlug(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const slug = c.req.param("slug")!;
  await editable(deps, c, slug);
  return await submitForm(c, {
    schema: ModulePatchBody,
    input: (f) => ({
      title: f.title ?? "",
      who: f.who ?? "",
      lede: f.lede ?? "",
      about: f.about ?? "",
      note: f.note ?? "",
      state: f.state,
      meta: f.meta ?? "",
      facts: (f.facts ?? "").split(/\r?\n/).filter((l) => l.trim()).map((l) => {
        const i = l.indexOf(":");
        return i < 0 ? [l.trim(), ""] : [l.slice(0, i).trim(), l.slice(i + 1).trim()];
      }),
      gets: f.gets ?? "",
      ...learningInput(f),
      materials: materialsInput(f.materials ?? ""),
    }),
    act: async (patch) => {
      const r = await patchModule(deps.kv, slug, patch, `account:${me.id}`, deps.clock.now(), {
        account: me.id,
        team: isTeam(me),
      });
      if (!r.ok) fail(404, "no such module");
      if (r.changed.length > 0) await catalogueChanged(deps);
      return `/me/work/modules/${slug}`;
    },
    show: (view) => modulePage(deps, c, view),
    page: { title: "Edit module" },
  });
}

export async function postMeWorkModulesSlugContributors(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const slug = c.req.param("slug")!;
  await editable(deps, c, slug);
  return await submitForm(c, {
    schema: ContributorAdd,
    act: async ({ email }) => {
      await addContributorByEmail(deps.kv, slug, email, `account:${me.id}`, deps.clock.now());
      await catalogueChanged(deps);
      return `/me/work/modules/${slug}`;
    },
    show: (view) => modulePage(deps, c, undefined, view),
    page: { title: "Edit module" },
  });
}

export async function postMeWorkModulesSlugContributorsIdRemove(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const slug = c.req.param("slug")!;
  await editable(deps, c, slug);
  const r = await changeContributor(
    deps.kv,
    slug,
    routeId(c),
    "remove",
    `account:${me.id}`,
    deps.clock.now(),
  );
  if (!r.ok) {
    if (r.reason === "last") fail(409, "a module keeps at least one contributor");
    fail(404, r.reason === "absent" ? "not a contributor of this module" : "no such module");
  }
  await catalogueChanged(deps);
  return seeOther(c, `/me/work/modules/${slug}`);
}

/** The facts field's text: LIMITS.facts lines of a label, ": " and a value, with newlines. */
const FACTS_TEXT = LIMITS.facts * (LIMITS.factLabel + LIMITS.factValue + 3);

export async function getMeWorkModulesSlug(deps: Deps, c: WebCtx) {
  return c.render(await modulePage(deps, c), { title: "Edit module", noindex: true });
}
