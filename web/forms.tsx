/**
 * The two public forms: a request or report (/request, POST /api/requests's form) and a
 * module proposal (/contribute, POST /api/contributions's form), with the same schemas, limits
 * and domain functions as the API. Each answers 303 to a page saying what happens next.
 */
import { z } from "zod";
import { submitProposal } from "../kv/catalogue/proposal_changes.ts";
import { AREAS } from "../kv/catalogue/proposals.ts";
import { published } from "../kv/catalogue/catalogue_doc.ts";
import { createRequest, REQUEST_KINDS, type RequestKind } from "../kv/forms/requests.ts";
import type { Deps } from "../lib/deps.ts";
import { MAX_RECORDS_JSON } from "../lib/record_chain.ts";
import { callerOf, clientOrigin } from "../http/guards.ts";
import { ProposalBody, RequestBody } from "../http/catalogue_inputs.ts";
import {
  emptyView,
  Field,
  fields,
  type FormView,
  nonBlank,
  readBody,
  readForm,
  submitForm,
} from "./_form.tsx";
import { formLimit, viewer, type WebCtx, webRouter } from "./_web.tsx";
import { LEARNING_LABELS, LearningFields, learningInput } from "./_learning.tsx";
import { LICENCE_IDS } from "../lib/learning.ts";

/**
 * Rows for linked files on the proposal form: as many as the API takes (docs/api.md "Limits": files up to
 * 10 entries; tests/work_pages_test.ts holds the two together). The first OPEN_FILE_ROWS are
 * shown; the rest sit in a <details> ("More files") that works without script and is open
 * when one of its rows holds a value or an error.
 */
export const FILE_ROWS = 10;
const OPEN_FILE_ROWS = 3;

const REQUEST_LABELS: Record<string, string> = {
  name: "Your name",
  email: "E-mail address",
  kind: "What is it about",
  org: "Organisation (optional)",
  module: "Which module (for a problem or an offer of help)",
  text: "Your message",
};

/** Each kind of request in the words of the person sending it (the API takes the values). */
const KIND_TEXT: Record<RequestKind, string> = {
  module: "Ask for a new module",
  track: "Ask for a new track (a series of modules)",
  tool: "Suggest a tool for teaching",
  service: "Ask about a service",
  report: "Report a problem with a module",
  contribute: "Offer to help with a module",
  other: "Something else",
};

/**
 * The request form's heading and title by the kind it was opened for: a module page's "Report a
 * problem" and "Offer to help" links land on a form titled so.
 */
const REQUEST_TITLES: Partial<Record<RequestKind, [title: string, lede: string]>> = {
  report: [
    "Report a problem with a module",
    "Tell the team what is wrong (a broken link, a mistake, something unclear). The team reads " +
    "every message; your address is used only to answer you.",
  ],
  contribute: [
    "Offer to help with a module",
    "Tell the team how you would like to help. The team reads every message; your address is " +
    "used only to answer you.",
  ],
};
const REQUEST_TITLE: [string, string] = [
  "Request a module",
  "Ask for a module or a track, or report a problem with a module. The team reads every " +
  "message; your address is used only to answer you.",
];
const requestTitle = (kind: string | undefined) =>
  REQUEST_TITLES[kind as RequestKind] ?? REQUEST_TITLE;

/** A field people do not see or fill; robots that fill every field give themselves away. */
function Honeypot() {
  return (
    <div class="hp" aria-hidden="true">
      <label for="f-website">Leave this empty</label>
      <input id="f-website" name="website" type="text" tabindex={-1} autocomplete="off" />
    </div>
  );
}

/** A published module as the request form offers it: chosen by its title, sent as its slug. */
type ModuleChoice = [slug: string, title: string];

function RequestForm(props: { view: FormView; modules: ModuleChoice[] }) {
  const F = fields(props.view, REQUEST_LABELS, RequestBody);
  const chosen = props.view.values.module ?? "";
  // A slug sent by hand that is not in the list (an old link) stays chosen rather than lost.
  const extra = chosen && !props.modules.some(([slug]) => slug === chosen)
    ? [[chosen, chosen] as ModuleChoice]
    : [];
  const [title, lede] = requestTitle(props.view.values.kind);
  return (
    <>
      <h1>{title}</h1>
      <p>{lede}</p>
      <F.Summary />
      <form method="post" action="/request" novalidate>
        <F.Field name="name" required autocomplete="name" />
        <F.Field name="email" type="email" required autocomplete="email" />
        <F.Select name="kind" options={REQUEST_KINDS.map((k) => [k, KIND_TEXT[k]])} />
        <F.Field name="org" autocomplete="organization" />
        <F.Select
          name="module"
          options={[["", "No module in particular"], ...extra, ...props.modules]}
        />
        <F.TextArea name="text" required rows={8} />
        <Honeypot />
        <button type="submit">Send the request</button>
      </form>
    </>
  );
}

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

/** Which form row each entry of `files` came from (empty rows are left out). */
function fileRows(f: Record<string, string>): number[] {
  return Array.from({ length: FILE_ROWS }, (_, i) => i).filter((i) =>
    (f[`file_url_${i}`] ?? "").trim() !== "" || (f[`file_label_${i}`] ?? "").trim() !== ""
  );
}

/**
 * The records file's text, or undefined when none was chosen. A file over the limit answers
 * a sentence instead; what the schema says of its contents comes later.
 */
async function recordsFile(c: WebCtx): Promise<{ text?: string; tooBig?: true }> {
  const body = await readBody(c);
  const sent = body.records;
  const file = Array.isArray(sent) ? sent.find((v) => v instanceof File) : sent;
  if (!(file instanceof File) || file.size === 0) return {};
  if (file.size > MAX_RECORDS_JSON * 4) return { tooBig: true };
  const text = await file.text();
  return [...text].length > MAX_RECORDS_JSON ? { tooBig: true } : { text };
}

/** What the records file was when it cannot be read as records, said in the form's words. */
const RECORDS_TOO_BIG = Symbol("records too big");
const RECORDS_NOT_JSON = Symbol("records not JSON");

/**
 * The proposal form's schema: the API's, but a records file that is too large or not JSON is
 * refused in a sentence about the file (the API takes records as a JSON array in the body).
 */
const ProposalFormBody = ProposalBody.extend({
  records: z.unknown().superRefine((v, ctx) => {
    if (v === RECORDS_TOO_BIG) {
      ctx.addIssue({
        code: "custom",
        message: `The records file is over ${MAX_RECORDS_JSON.toLocaleString("en")} characters; ` +
          "attach the records of this module only.",
      });
    } else if (v === RECORDS_NOT_JSON) {
      ctx.addIssue({
        code: "custom",
        message: "The records file is not JSON; attach the file the log tool exported, unchanged.",
      });
    }
  }).pipe(ProposalBody.shape.records),
  // On the form the licence must be chosen (the API takes a proposal without one).
  licence: z.enum(LICENCE_IDS, {
    error: "Choose a licence: how others may reuse the module (CC BY if unsure)",
  }),
});

/** The text fields of the proposal form as the API's JSON body. */
function proposalInput(f: Record<string, string>) {
  const files = fileRows(f).map((i) => ({
    label: f[`file_label_${i}`] ?? "",
    url: (f[`file_url_${i}`] ?? "").trim(),
  }));
  let records: unknown = undefined;
  const rawRecords = nonBlank(f.records_kept);
  if (rawRecords !== undefined) {
    try {
      records = JSON.parse(rawRecords);
    } catch {
      records = RECORDS_NOT_JSON;
    }
  }
  return {
    name: f.name ?? "",
    email: f.email ?? "",
    title: f.title ?? "",
    area: nonBlank(f.area),
    summary: f.summary ?? "",
    trail: nonBlank(f.trail),
    records,
    chain: nonBlank(f.chain),
    files,
    attribution: nonBlank(f.attribution),
    who: nonBlank(f.who),
    ...learningInput(f),
    website: nonBlank(f.website),
  };
}

/** The published modules by title, for the request form's choice. */
async function moduleChoices(deps: Deps): Promise<ModuleChoice[]> {
  const { modules } = await published(deps);
  return modules.map((m): ModuleChoice => [m.slug, m.title])
    .sort((a, b) => a[1].localeCompare(b[1]));
}

async function postRequest(deps: Deps, c: WebCtx) {
  const modules = await moduleChoices(deps);
  return await submitForm(c, {
    schema: RequestBody,
    input: (f) => ({
      name: f.name ?? "",
      email: f.email ?? "",
      kind: f.kind,
      text: f.text ?? "",
      org: nonBlank(f.org),
      module: nonBlank(f.module),
      website: nonBlank(f.website),
    }),
    act: async (input) => {
      // A filled honeypot: the same answer, nothing done.
      const { website, ...request } = input;
      if (website) return "/request/sent";
      await createRequest(deps, request);
      return "/request/sent";
    },
    show: (view) => <RequestForm view={view} modules={modules} />,
    page: { title: requestTitle((await readForm(c)).kind)[0] },
  });
}

function getContribute(c: WebCtx) {
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

async function postContribute(deps: Deps, c: WebCtx) {
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

function getContributeSent(c: WebCtx) {
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

export function formPages(deps: Deps) {
  const app = webRouter();

  app.get("/request", async (c) => {
    // A module page's "report a problem" link names the module and the kind.
    const kind = REQUEST_KINDS.find((k) => k === c.req.query("kind")) ?? "module";
    const module = c.req.query("module") ?? "";
    // A signed-in person's name and address are filled in; they stay editable.
    const me = viewer(c);
    const view = emptyView({
      kind,
      module: /^[a-z0-9-]{1,80}$/.test(module) ? module : "",
      name: me?.name,
      email: me?.email,
    });
    return c.render(<RequestForm view={view} modules={await moduleChoices(deps)} />, {
      title: requestTitle(kind)[0],
      canonical: "/request",
      description: "Ask for a module or a track, or report a problem.",
    });
  });

  app.post("/request", (c) => postRequest(deps, c));

  app.get("/request/sent", (c) =>
    c.render(
      <>
        <h1>Thank you</h1>
        <p>Your message has reached the team.</p>
        <p>
          <a href="/catalogue">Back to the catalogue</a>
        </p>
      </>,
      { title: "Request sent", noindex: true },
    ));

  app.get("/contribute", (c) => getContribute(c));

  // summary 4,000 + trail 12,000 + records 16,000 characters, ten file rows.
  app.post("/contribute", formLimit(512 * 1024), (c) => postContribute(deps, c));

  app.get("/contribute/sent", (c) => getContributeSent(c));

  return app;
}
