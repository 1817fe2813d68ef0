/**
 * The journal (/me/journal): write an entry, edit it, make it private or public, delete it.
 * The same schemas (http/account_inputs.ts) and kv/accounts/journal.ts functions as /api/me/journal.
 */
import {
  addEntry,
  deleteEntry,
  getEntry,
  listEntries,
  updateEntry,
} from "../kv/accounts/journal.ts";
import type { Deps } from "../lib/deps.ts";
import { EntryPatch, NewEntry } from "../http/account_inputs.ts";
import { fail } from "../http/errors.ts";
import { checked, emptyView, type FormView, readForm, submitForm } from "./_form.tsx";
import { Checkbox, ErrorSummary, TextArea } from "./_form_controls.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { MeNav, Purpose, when } from "./_me.tsx";
import { requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";

const LABELS = { text: "Entry", public: "Public" };

function EntryForm(props: { view: FormView; action: string; button: string }) {
  return (
    <form method="post" action={props.action} novalidate>
      <ErrorSummary view={props.view} labels={LABELS} />
      <TextArea
        name="text"
        label={LABELS.text}
        view={props.view}
        rows={4}
        maxlength={2000}
        required
      />
      <Checkbox
        name="public"
        label="Show it on my public profile"
        view={props.view}
        hint="Ticked (as it starts), the entry is public: anyone can read it on your profile. Private entries are seen by you only."
      />
      <button type="submit">{props.button}</button>
    </form>
  );
}

const listPage = async (deps: Deps, account: number, view: FormView) => {
  const entries = await listEntries(deps.kv, account);
  return (
    <>
      <MeNav here="/me/journal" />
      <h1>Journal</h1>
      <Purpose here="/me/journal" />
      <h2>Write an entry</h2>
      <EntryForm view={view} action="/me/journal" button="Save entry" />
      <h2>Your entries</h2>
      {entries.length === 0 ? <p>No entries yet.</p> : null}
      <ul class="entries">
        {entries.map((e) => (
          <li>
            <p class="meta">
              {when(e.created)} · {e.public ? "public" : "private"}
              {e.updated ? ` · changed ${when(e.updated)}` : ""}
            </p>
            <p class="text">
              <UserText>{e.text}</UserText>
            </p>
            <ul class="inline">
              <li>
                <a href={`/me/journal/${e.id}`} aria-label={`Edit entry of ${when(e.created)}`}>
                  Edit
                </a>
              </li>
              <li>
                <PostButton
                  action={`/me/journal/${e.id}/visibility`}
                  kind="link"
                  fields={{ public: e.public ? "false" : "true" }}
                >
                  {e.public ? "Make private" : "Make public"}
                </PostButton>
              </li>
              <li>
                <PostButton
                  action={`/me/journal/${e.id}/delete`}
                  kind="link"
                  confirm="Delete this entry?"
                >
                  Delete
                </PostButton>
              </li>
            </ul>
          </li>
        ))}
      </ul>
    </>
  );
};

async function getMeJournal(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return c.render(await listPage(deps, me.id, emptyView({ public: "on" })), {
    title: "Journal",
    noindex: true,
  });
}

async function postMeJournal(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await submitForm(c, {
    schema: NewEntry,
    input: (f) => ({ text: f.text ?? "", public: checked(f.public) }),
    act: async (input) => {
      await addEntry(deps.kv, me.id, input, deps.clock.now());
      return "/me/journal";
    },
    show: (view) => listPage(deps, me.id, view),
    page: { title: "Journal" },
  });
}

async function getMeJournalId(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const found = await getEntry(deps.kv, me.id, routeId(c));
  if (!found) fail(404, "no such journal entry");
  const e = found.value;
  const view = emptyView({ text: e.text, public: e.public ? "on" : "" });
  return c.render(
    <>
      <MeNav here="/me/journal" />
      <h1>Edit entry</h1>
      <EntryForm view={view} action={`/me/journal/${e.id}`} button="Save changes" />
      <p>
        <a href="/me/journal">Back to the journal</a>
      </p>
    </>,
    { title: "Edit entry", noindex: true },
  );
}

async function postMeJournalId(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  return await submitForm(c, {
    schema: EntryPatch,
    input: (f) => ({ text: f.text ?? "", public: checked(f.public) }),
    act: async (patch) => {
      const e = await updateEntry(deps.kv, me.id, id, patch, deps.clock.now());
      if (!e) fail(404, "no such journal entry");
      return "/me/journal";
    },
    show: (view) => (
      <>
        <MeNav here="/me/journal" />
        <h1>Edit entry</h1>
        <EntryForm view={view} action={`/me/journal/${id}`} button="Save changes" />
      </>
    ),
    page: { title: "Edit entry" },
  });
}

async function postMeJournalIdVisibility(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const form = await readForm(c);
  const e = await updateEntry(deps.kv, me.id, routeId(c), {
    public: form.public === "true",
  }, deps.clock.now());
  if (!e) fail(404, "no such journal entry");
  return seeOther(c, "/me/journal");
}

async function postMeJournalIdDelete(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  if (!await deleteEntry(deps.kv, me.id, routeId(c))) fail(404, "no such journal entry");
  return seeOther(c, "/me/journal");
}

export function journalPages(deps: Deps) {
  const app = webRouter();

  app.get("/me/journal", (c) => getMeJournal(deps, c));

  app.post("/me/journal", (c) => postMeJournal(deps, c));

  app.get("/me/journal/:id{[0-9]{1,15}}", (c) => getMeJournalId(deps, c));

  app.post("/me/journal/:id{[0-9]{1,15}}", (c) => postMeJournalId(deps, c));

  app.post("/me/journal/:id{[0-9]{1,15}}/visibility", (c) => postMeJournalIdVisibility(deps, c));

  app.post("/me/journal/:id{[0-9]{1,15}}/delete", (c) => postMeJournalIdDelete(deps, c));

  return app;
}
