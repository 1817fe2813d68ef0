/**
 * The module proposal form (/contribute), posted as POST /api/contributions's body
 * (web/_proposal_input.ts), and the page it answers with (/contribute/sent).
 */
import { submitProposal } from "../kv/catalogue/proposal_changes.ts";
import { AREAS } from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import { callerOf, clientOrigin } from "../http/guards.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { Field, fields } from "./_form_controls.tsx";
import { viewer, type WebCtx } from "./_web.tsx";
import { LEARNING_LABELS, LearningFields } from "./_learning.tsx";
import { Honeypot } from "./_honeypot.tsx";
import {
  FILE_ROWS,
  fileRows,
  ProposalFormBody,
  proposalInput,
  RECORDS_TOO_BIG,
  recordsFile,
} from "./_proposal_input.ts";

const OPEN_FILE_ROWS = 3;

const PROPOSAL_LABELS: Record<string, string> = {
  name: "Your name (shown with the module)",
  email: "E-mail address",
  title: "Title of the module",
  area: "Area",
  summary: "Summary",
  trail: "Record trail (optional)",
  records: "Records file (optional)",
  chain: "Check code of the last record (optional)",
  attribution: "If you erase your account later",
  ...LEARNING_LABELS,
  // The file rows, named as their fields are labelled.
  ...Object.fromEntries(
    Array.from({ length: FILE_ROWS }, (_, i) => [
      [`file_label_${i}`, `File ${i + 1}: label`],
      [`file_url_${i}`, `File ${i + 1}: link`],
    ]).flat(),
  ),
};

function FileRow(props: { i: number; view: FormView }) {
  const { i, view } = props;
  return (
    <div class="file-row">
      <Field
        name={`file_label_${i}`}
        label={PROPOSAL_LABELS[`file_label_${i}`]}
        maxlength={120}
        view={view}
      />
      <Field
        name={`file_url_${i}`}
        type="url"
        label={PROPOSAL_LABELS[`file_url_${i}`]}
        maxlength={500}
        view={view}
      />
    </div>
  );
}

/** Whether a row past the first ones holds something (then "More files" starts open). */
const moreFiles = (v: FormView) =>
  Array.from({ length: FILE_ROWS - OPEN_FILE_ROWS }, (_, i) => i + OPEN_FILE_ROWS).some((i) =>
    [`file_label_${i}`, `file_url_${i}`].some((k) =>
      (v.values[k] ?? "").trim() !== "" || v.errors[k]
    )
  );

function ProposalForm(props: { view: FormView; signedInAs?: string }) {
  const v = props.view;
  const F = fields(v, PROPOSAL_LABELS, ProposalFormBody);
  const fileError = Object.entries(v.errors).find(([k]) => k.startsWith("files"));
  return (
    <>
      <h1>Propose a module</h1>
      <p>
        Describe the module; the team checks it and publishes it in the catalogue. You get a mail
        with a link to confirm the proposal
        {props.signedInAs ? " (not needed when you use the address you are signed in with)" : ""}
        {" "}
        and a page that shows its status.
      </p>
      <F.Summary />
      <form method="post" action="/contribute" enctype="multipart/form-data" novalidate>
        <F.Field name="name" required autocomplete="name" />
        <F.Field name="email" type="email" required autocomplete="email" />
        <F.Field name="title" required />
        <F.Select name="area" options={AREAS.map((a) => [a, a.replace("-", " ")])} />
        <F.TextArea name="summary" required rows={8} />
        <fieldset>
          <legend>Licence and who it is for</legend>
          <F.Field
            name="who"
            hint="For example: teachers of 8 to 12 year olds who take classes outdoors."
          />
          <LearningFields view={v} licenceRequired />
        </fieldset>
        <fieldset>
          <legend>Files (links to where they are kept, https only)</legend>
          {fileError ? <p class="error">{fileError[1]}</p> : null}
          {Array.from({ length: OPEN_FILE_ROWS }, (_, i) => <FileRow i={i} view={v} />)}
          <details open={moreFiles(v)}>
            <summary>More files (up to {FILE_ROWS})</summary>
            {Array.from(
              { length: FILE_ROWS - OPEN_FILE_ROWS },
              (_, i) => <FileRow i={i + OPEN_FILE_ROWS} view={v} />,
            )}
          </details>
        </fieldset>
        <fieldset>
          <legend>Record trail</legend>
          <F.TextArea name="trail" hint="How the module came about: one line per step." rows={5} />
          <F.Field
            name="records"
            type="file"
            accept=".json,application/json"
            hint={"If a tool kept the module's history as a record trail (a log of changes that " +
              "anyone can check), attach the file it exports (JSON): the team checks that no " +
              "record was changed before publishing."}
          />
          {v.values.records_kept
            ? (
              <>
                <p class="hint">
                  The records file you attached is kept; choose another file to replace it.
                </p>
                <input type="hidden" name="records_kept" value={v.values.records_kept} />
              </>
            )
            : null}
          <F.Field
            name="chain"
            hint={"If that tool shows a check code for the last record (64 characters, 0-9 and " +
              "a-f), paste it so the team can check that the file is whole."}
            maxlength={64}
          />
        </fieldset>
        <F.Select
          name="attribution"
          options={[["keep", "Keep the module under my name"], [
            "remove",
            "Remove my name (the module leaves the catalogue)",
          ]]}
        />
        <Honeypot />
        <button type="submit">Send the proposal</button>
      </form>
    </>
  );
}

export function getContribute(c: WebCtx) {
  const me = viewer(c);
  return c.render(
    <ProposalForm
      view={emptyView({
        name: me?.name,
        email: me?.email,
        area: "other",
        attribution: "keep",
        // The site speaks English: most proposals are in it (one untick away otherwise).
        language_en: "on",
      })}
      signedInAs={me?.email}
    />,
    {
      title: "Propose a module",
      canonical: "/contribute",
      description: "Propose a module for the catalogue.",
    },
  );
}

export async function postContribute(deps: Deps, c: WebCtx) {
  let rows: number[] = [];
  const attached = await recordsFile(c);
  return await submitForm(c, {
    schema: ProposalFormBody,
    input: (f) => {
      rows = fileRows(f);
      // The file's text joins the posted values, so a form shown again keeps it (a browser
      // cannot refill a file field).
      if (attached.text !== undefined) f.records_kept = attached.text;
      const input = proposalInput(f);
      return attached.tooBig ? { ...input, records: RECORDS_TOO_BIG } : input;
    },
    fieldOf: (path) => {
      const m = path.match(/^files\.(\d+)\.(url|label)$/);
      return m ? `file_${m[2]}_${rows[Number(m[1])] ?? 0}` : path;
    },
    act: async (input) => {
      if (input.website) return "/contribute/sent";
      const p = await submitProposal(deps, callerOf(deps, c), input, clientOrigin(deps, c));
      return `/contribute/sent?id=${p.id}&status=${p.status}`;
    },
    show: (view) => <ProposalForm view={view} signedInAs={viewer(c)?.email} />,
    page: { title: "Propose a module" },
  });
}

export function getContributeSent(c: WebCtx) {
  const id = /^[1-9][0-9]{0,15}$/.test(c.req.query("id") ?? "") ? c.req.query("id") : null;
  const confirmed = c.req.query("status") === "confirmed";
  return c.render(
    <>
      <h1>Proposal received</h1>
      <p>
        {confirmed
          ? "It is confirmed (you are signed in with its address) and the team has been told."
          : "We mailed you a link to confirm it; the team sees it once you have. The link works for seven days."}
      </p>
      {id
        ? (
          <p>
            <a href={`/contribute/status?id=${id}`}>Its status page</a>
          </p>
        )
        : null}
    </>,
    { title: "Proposal received", noindex: true },
  );
}
