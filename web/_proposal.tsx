/**
 * A proposal as a reviewer reads it (web/_team_proposals.tsx): its fields (one list of rows,
 * `proposalRows`: a new field of a proposal is one more row there), its files as links with the
 * state of their last check, its record trail (the lines the submitter typed and the records sent
 * as data, with the chain's verdict in words), the gate's checks with what each means, and the
 * history of decisions with who made each.
 */
import type { Child } from "hono/jsx";
import type { Gate, GateCheck } from "../kv/catalogue/gate.ts";
import type {
  Decision,
  LinkCheck,
  Proposal,
  ProposalData,
  ProposalStatus,
} from "../kv/catalogue/proposals.ts";
import { UserText } from "./_layout.tsx";
import { when } from "./_me.tsx";
import { StateIcon } from "./_state.tsx";
import { Table } from "./_table.tsx";
import { learningRows, licenceWords } from "./_learning.tsx";
import { learningOf } from "../lib/learning.ts";

/** Each status in a reader's words. */
export const STATUS_WORDS: Record<ProposalStatus, string> = {
  received: "Received: waiting for the submitter to confirm the address",
  confirmed: "Confirmed: waiting for a reviewer",
  reviewing: "Under review",
  admitted: "Admitted: waiting for the owner to publish it",
  rejected: "Rejected",
  published: "Published in the catalogue",
  withdrawn: "Withdrawn by the submitter",
};

/** Each status in one or two words, for headings. */
export const STATUS_NAMES: Record<ProposalStatus, string> = {
  received: "received",
  confirmed: "confirmed",
  reviewing: "under review",
  admitted: "admitted",
  rejected: "rejected",
  published: "published",
  withdrawn: "withdrawn",
};

/** A state as colour, icon and word: ok, warn, off or wait (web/_state.tsx's icons). */
export function StateTag(props: { state: "ok" | "warn" | "off" | "wait"; children: string }) {
  return (
    <span class={`tag state state-${props.state}`}>
      <StateIcon state={props.state} />
      {props.children}
    </span>
  );
}

/** One row of a proposal's fields: its label and what it holds. */
type FieldRow = [label: string, value: Child];

/** The proposal's fields, in the order a reviewer reads them. */
export function proposalRows(p: Proposal): FieldRow[] {
  return [
    ["Status", STATUS_WORDS[p.status]],
    [
      "Submitted by",
      <>
        <UserText>{p.name}</UserText>
        {p.email
          ? (
            <>
              {" "}(<a href={`mailto:${p.email}`}>
                <UserText>{p.email}</UserText>
              </a>)
            </>
          )
          : " (account erased; the module keeps the name)"}
      </>,
    ],
    ["Area", p.area.replace("-", " ")],
    ["Licence", licenceWords(p.learning?.licence ?? null)],
    ...(p.who ? [["For", <UserText>{p.who}</UserText>] as FieldRow] : []),
    ...learningRows(learningOf(p.learning ?? {})),
    [
      "If the submitter erases the account",
      p.attribution === "keep" ? "the module keeps their name" : "the module leaves the catalogue",
    ],
    ["Received", when(p.created)],
    ["Address confirmed", p.confirmed === null ? "not yet" : when(p.confirmed)],
    ...(p.slug && p.status === "published"
      ? [[
        "Module",
        <a href={`/modules/${encodeURIComponent(p.slug)}`}>/modules/{p.slug}</a>,
      ] as FieldRow]
      : []),
  ];
}

/** A list of fields as label and value. */
export function ProposalFields(props: { rows: FieldRow[] }) {
  return (
    <dl class="fields">
      {props.rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}

const LINK_STATE: Record<LinkCheck["state"], ["ok" | "warn" | "off", string]> = {
  ok: ["ok", "Reachable"],
  warn: ["warn", "Answers, with a warning"],
  off: ["off", "Not reachable"],
  refused: ["off", "Refused"],
};

/** Whether a link may be followed from the page: a well-formed http(s) address. */
const followable = (url: string) => /^https?:\/\//i.test(url) && URL.canParse(url);

/** The files as links with their labels, and what the last check of each found. */
export function FileLinks(
  props: { files: Proposal["files"]; checks: Map<string, LinkCheck> },
) {
  if (props.files.length === 0) return <p>No files were sent.</p>;
  return (
    <Table
      caption="Files the submitter linked, checked by the service"
      rows={props.files.map((f, i) => ({
        url: f.url,
        label: f.label.trim() || `File ${i + 1}`,
        check: props.checks.get(f.url),
      }))}
      columns={[
        {
          label: "File",
          cell: (f) =>
            followable(f.url)
              ? (
                <a href={f.url} rel="noopener noreferrer nofollow" target="_blank">
                  <UserText>{f.label}</UserText>
                </a>
              )
              : <UserText>{f.label}</UserText>,
        },
        { label: "Address", class: "url", cell: (f) => <UserText>{f.url}</UserText> },
        { label: "Last check", cell: ({ check }) => <LastLinkCheck check={check} /> },
      ]}
    />
  );
}

/** What the last check of a file's link found, and when. */
function LastLinkCheck({ check }: { check: LinkCheck | undefined }) {
  const [state, word] = check ? LINK_STATE[check.state] : ["wait" as const, "Not checked yet"];
  return (
    <>
      <StateTag state={state}>{word}</StateTag>
      {check
        ? (
          <span class="meta">
            {" "}
            <UserText>{check.status}</UserText> · {when(check.at)}
          </span>
        )
        : null}
    </>
  );
}

/** The lines of a Markdown trail as a reader sees them: list marks and blank lines gone. */
const trailLines = (text: string) =>
  text.split(/\r?\n/).map((l) => l.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, "").trim())
    .filter((l) => l !== "");

/**
 * The record trail: the steps the submitter typed, then the records sent as data, each line,
 * with whether their chain verifies (computed when the proposal was sent; records never change).
 */
export function RecordTrail(props: { p: Proposal; data: ProposalData }) {
  const { p, data } = props;
  const lines = trailLines(data.trail);
  const v = p.records;
  return (
    <>
      <p class="hint">
        Record trail: a public log of changes that anyone can check. Records sent as data are
        chained (each one carries a check code of the one before), so no record can be changed or
        left out unseen.
      </p>
      <h3>Steps the submitter wrote</h3>
      {lines.length
        ? (
          <ol>
            {lines.map((l) => (
              <li>
                <UserText>{l}</UserText>
              </li>
            ))}
          </ol>
        )
        : <p>None written.</p>}
      <h3>Records sent as data</h3>
      <p>
        {!v.sent
          ? <StateTag state="wait">None sent</StateTag>
          : v.ok
          ? <StateTag state="ok">Verified</StateTag>
          : <StateTag state="off">Does not verify</StateTag>} {v.sent
          ? v.ok
            ? `The ${v.count} records form an unbroken chain: none was changed or left out.`
            : (
              <>
                The chain is broken: <UserText>{v.detail}</UserText>.
              </>
            )
          : "Nothing to verify."}
      </p>
      <Table
        caption="Records, in order"
        rows={data.records}
        empty={null}
        columns={[
          { label: "Number", cell: (r) => r.seq },
          { label: "When", cell: (r) => <UserText>{readableAt(r.at)}</UserText> },
          { label: "Who", cell: (r) => <UserText>{r.actor}</UserText> },
          {
            label: "What",
            cell: (r) => (
              <>
                <UserText>{r.action}</UserText>
                {r.fields?.length
                  ? (
                    <span class="meta">
                      <UserText>{` (${r.fields.join(", ")})`}</UserText>
                    </span>
                  )
                  : null}
              </>
            ),
          },
          { label: "On", cell: (r) => <UserText>{r.subject ?? ""}</UserText> },
        ]}
      />
    </>
  );
}

/** A record's time as a person reads it when it is one; else as it was sent. */
function readableAt(at: string): string {
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? at : when(ms);
}

/** What each of the gate's checks (kv/catalogue/gate.ts) makes sure of. */
const GATE_MEANING: Record<GateCheck["name"], string> = {
  confirmed: "The submitter opened the confirmation link: the address is theirs and an account " +
    "holds the module.",
  name: "There is a name to publish the module under.",
  title: "The title fits a module's title.",
  summary: "There is a summary, and it fits a module's page.",
  records: "Records sent as data verify: none was changed or left out.",
  files: "Every file link is a well-formed https address.",
  slug: "The module's address in the catalogue is free.",
};

/** Whether the gate is open, and each of its checks with what it means. */
export function GateChecks(props: { gate: Gate }) {
  const { gate } = props;
  return (
    <>
      <p>
        {gate.open ? <StateTag state="ok">Open</StateTag> : <StateTag state="off">Closed</StateTag>}
        {" "}
        {gate.open
          ? "Every check passes: the owner may publish it once it is admitted or under review."
          : `It cannot be published while ${
            gate.failed.length === 1 ? "this check fails" : "these checks fail"
          }: ${gate.failed.join(", ")}.`}
      </p>
      <Table
        caption="The checks before publication"
        rows={gate.checks}
        columns={[
          { label: "Check", cell: (g) => g.name },
          {
            label: "Result",
            cell: (g) => (
              <>
                <StateTag state={g.ok ? "ok" : "off"}>{g.ok ? "Passes" : "Fails"}</StateTag>{" "}
                <span class="meta">
                  <UserText>{g.detail}</UserText>
                </span>
              </>
            ),
          },
          { label: "What it makes sure of", cell: (g) => GATE_MEANING[g.name] },
        ]}
      />
    </>
  );
}

/** The decisions so far, oldest first, each with who made it (`names`: actor to words). */
export function DecisionHistory(props: { decisions: Decision[]; names: Map<string, string> }) {
  return (
    <Table
      caption="Every change of status, oldest first"
      rows={props.decisions}
      columns={[
        { label: "When", cell: (d) => when(d.at) },
        { label: "Change", cell: (d) => d.from ? `${d.from} → ${d.status}` : d.status },
        { label: "By", cell: (d) => <UserText>{props.names.get(d.actor) ?? d.actor}</UserText> },
        { label: "Reason", cell: (d) => <UserText>{d.reason || "—"}</UserText> },
      ]}
    />
  );
}
