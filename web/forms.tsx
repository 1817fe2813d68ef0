/**
 * The two public forms: a request or report (/request, POST /api/requests's form) and a
 * module proposal (/contribute, POST /api/contributions's form), with the same schemas, limits
 * and domain functions as the API. Each answers 303 to a page saying what happens next.
 */
import { submitProposal } from "../kv/proposal_changes.ts";
import { AREAS } from "../kv/proposals.ts";
import { createRequest, REQUEST_KINDS } from "../kv/requests.ts";
import type { Deps } from "../lib/deps.ts";
import { callerOf, clientOrigin } from "../http/guards.ts";
import { ProposalBody, RequestBody } from "../http/catalogue_inputs.ts";
import { emptyView, Field, fields, type FormView, given, submitForm } from "./_form.tsx";
import { viewer, type WebCtx, webRouter } from "./_web.tsx";

/**
 * Rows for linked files on the proposal form: as many as the API takes (SPEC.md: files up to
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
  module: "Module (for a report: its slug)",
  text: "Your message",
};

const KIND_TEXT: Record<string, string> = {
  module: "A new module",
  track: "A new track",
};

/** A field people do not see or fill; robots that fill every field give themselves away. */
function Honeypot() {
  return (
    <div class="hp" aria-hidden="true">
      <label for="f-website">Leave this empty</label>
      <input id="f-website" name="website" type="text" tabindex={-1} autocomplete="off" />
    </div>
  );
}

function RequestForm(props: { view: FormView }) {
  const F = fields(props.view, REQUEST_LABELS);
  return (
    <>
      <h1>Request a module</h1>
      <p>
        Ask for a module or a track, or report a problem with a module. The team reads every
        message; your address is used only to answer you.
      </p>
      <F.Summary />
      <form method="post" action="/request" novalidate>
        <F.Field name="name" required autocomplete="name" />
        <F.Field name="email" type="email" required autocomplete="email" />
        <F.Select
          name="kind"
          options={REQUEST_KINDS.map((k) => [k, KIND_TEXT[k] ?? k.replace(/[-_]/g, " ")])}
        />
        <F.Field name="org" autocomplete="organization" />
        <F.Field name="module" />
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
  records: "Records as JSON (optional)",
  chain: "Chain hash (optional)",
  attribution: "If you erase your account later",
};

function FileRow(props: { i: number; view: FormView }) {
  const { i, view } = props;
  return (
    <div class="file-row">
      <Field name={`file_label_${i}`} label={`File ${i + 1}: label`} view={view} />
      <Field name={`file_url_${i}`} type="url" label={`File ${i + 1}: link`} view={view} />
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
  const F = fields(v, PROPOSAL_LABELS);
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
      <form method="post" action="/contribute" novalidate>
        <F.Field name="name" required autocomplete="name" />
        <F.Field name="email" type="email" required autocomplete="email" />
        <F.Field name="title" required />
        <F.Select name="area" options={AREAS.map((a) => [a, a.replace("-", " ")])} />
        <F.TextArea name="summary" required rows={8} />
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
          <F.TextArea
            name="records"
            hint="A JSON array of records ({seq, at, actor, action, ...}), as a hash-chained log exports them."
            rows={4}
          />
          <F.Field name="chain" hint="The last record's hash (64 hex characters)." />
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

/** The text fields of the proposal form as the API's JSON body. */
function proposalInput(f: Record<string, string>) {
  const files = fileRows(f).map((i) => ({
    label: f[`file_label_${i}`] ?? "",
    url: (f[`file_url_${i}`] ?? "").trim(),
  }));
  let records: unknown = undefined;
  const rawRecords = given(f.records);
  if (rawRecords !== undefined) {
    try {
      records = JSON.parse(rawRecords);
    } catch {
      records = "not JSON";
    }
  }
  return {
    name: f.name ?? "",
    email: f.email ?? "",
    title: f.title ?? "",
    area: given(f.area),
    summary: f.summary ?? "",
    trail: given(f.trail),
    records,
    chain: given(f.chain),
    files,
    attribution: given(f.attribution),
    website: given(f.website),
  };
}

async function postRequest(deps: Deps, c: WebCtx) {
  return await submitForm(c, {
    schema: RequestBody,
    input: (f) => ({
      name: f.name ?? "",
      email: f.email ?? "",
      kind: f.kind,
      text: f.text ?? "",
      org: given(f.org),
      module: given(f.module),
      website: given(f.website),
    }),
    act: async (input) => {
      // A filled honeypot: the same answer, nothing done.
      const { website, ...request } = input;
      if (website) return "/request/sent";
      await createRequest(deps, request);
      return "/request/sent";
    },
    show: (view) => <RequestForm view={view} />,
    page: { title: "Request a module" },
  });
}

function getContribute(c: WebCtx) {
  const me = viewer(c);
  return c.render(
    <ProposalForm
      view={emptyView({ name: me?.name, email: me?.email, area: "other", attribution: "keep" })}
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
  return await submitForm(c, {
    schema: ProposalBody,
    input: (f) => {
      rows = fileRows(f);
      return proposalInput(f);
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

  app.get("/request", (c) =>
    c.render(<RequestForm view={emptyView({ kind: "module" })} />, {
      title: "Request a module",
      canonical: "/request",
      description: "Ask for a module or a track, or report a problem.",
    }));

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

  app.post("/contribute", (c) => postContribute(deps, c));

  app.get("/contribute/sent", (c) => getContributeSent(c));

  return app;
}
