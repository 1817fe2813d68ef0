/**
 * The announcements on the first status page's settings (/me/status-page#notes): the form that
 * posts a note to the page's visitors and followers, and the notes there are.
 */
import { listNotes, MAX_NOTE_TEXT, NOTE_KINDS, noteView } from "../kv/status/notes.ts";
import type { Account } from "../kv/accounts/accounts.ts";
import type { Deps } from "../lib/deps.ts";
import { noteWord } from "../mail/status.ts";
import { NoteBody } from "../http/services_inputs.ts";
import { type FormView } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";

import { PostButton, UserText } from "./_layout.tsx";
import { when } from "./_me.tsx";
import { type WebCtx } from "./_web.tsx";

const NOTE_LABELS = { kind: "Kind of note", text: "Note text" };

function NoteList({ notes }: { notes: ReturnType<typeof noteView>[] }) {
  return notes.length
    ? (
      <ol class="timeline">
        {notes.map((n) => (
          <li>
            <p>
              <time datetime={n.at}>{when(Date.parse(n.at))}</time> ·{" "}
              <strong>{noteWord(n.kind)}</strong>
            </p>
            <p>
              <UserText>{n.text}</UserText>
            </p>
            <PostButton
              action={`/me/status-page/notes/${n.id}/delete`}
              kind="danger"
              confirm="Delete this note?"
            >
              Delete note
            </PostButton>
          </li>
        ))}
      </ol>
    )
    : <p>No notes in the last 90 days.</p>;
}

export async function Notes(props: { deps: Deps; me: Account; c: WebCtx; view: FormView }) {
  const notes = (await listNotes(props.deps.kv, props.me.id, props.deps.clock.now()))
    .map(noteView);
  const N = fields(props.view, NOTE_LABELS, NoteBody);
  return (
    <>
      <h2 id="notes">Announcements</h2>
      <p>
        Short notes to the page's visitors, naming no service: shown on the page as announcements
        for 90 days (an Investigating or Identified one on top until a Resolved one follows) and
        mailed to its followers. For an outage of services, with its updates, open an{" "}
        <a href="/me/incidents">incident</a>.
      </p>
      {props.c.req.query("posted") ? <p class="notice" role="status">Note posted.</p> : null}
      <form method="post" action="/me/status-page/notes" novalidate>
        <N.Summary />
        <N.Select
          name="kind"
          options={NOTE_KINDS.map((k) => [k, k === "note" ? "Note (free text)" : noteWord(k)])}
        />
        <N.TextArea name="text" rows={3} maxlength={MAX_NOTE_TEXT} required />
        <button type="submit">Post note</button>
      </form>
      <NoteList notes={notes} />
    </>
  );
}
