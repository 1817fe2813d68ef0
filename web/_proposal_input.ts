/**
 * The proposal form's values as POST /api/contributions's body: the file rows as `files`, the
 * records file read and refused in the form's words, the licence required.
 */
import { z } from "zod";
import { MAX_RECORDS_JSON } from "../lib/record_chain.ts";
import { LICENCE_IDS } from "../lib/learning.ts";
import { ProposalBody } from "../http/catalogue_inputs.ts";
import { nonBlank, readBody } from "./_form.tsx";
import type { WebCtx } from "./_web.tsx";
import { learningInput } from "./_learning.tsx";

/**
 * Rows for linked files on the proposal form: as many as the API takes (docs/api.md "Limits": files up to
 * 10 entries; tests/work_pages_test.ts holds the two together). The first OPEN_FILE_ROWS
 * (web/_proposal_page.tsx) are shown; the rest sit in a <details> ("More files") that works
 * without script and is open when one of its rows holds a value or an error.
 */
export const FILE_ROWS = 10;

/** Which form row each entry of `files` came from (empty rows are left out). */
export function fileRows(f: Record<string, string>): number[] {
  return Array.from({ length: FILE_ROWS }, (_, i) => i).filter((i) =>
    (f[`file_url_${i}`] ?? "").trim() !== "" || (f[`file_label_${i}`] ?? "").trim() !== ""
  );
}

/**
 * The records file's text, or undefined when none was chosen. A file over the limit answers
 * a sentence instead; what the schema says of its contents comes later.
 */
export async function recordsFile(c: WebCtx): Promise<{ text?: string; tooBig?: true }> {
  const body = await readBody(c);
  const sent = body.records;
  const file = Array.isArray(sent) ? sent.find((v) => v instanceof File) : sent;
  if (!(file instanceof File) || file.size === 0) return {};
  if (file.size > MAX_RECORDS_JSON * 4) return { tooBig: true };
  const text = await file.text();
  return [...text].length > MAX_RECORDS_JSON ? { tooBig: true } : { text };
}

/** What the records file was when it cannot be read as records, said in the form's words. */
export const RECORDS_TOO_BIG = Symbol("records too big");
const RECORDS_NOT_JSON = Symbol("records not JSON");

/**
 * The proposal form's schema: the API's, but a records file that is too large or not JSON is
 * refused in a sentence about the file (the API takes records as a JSON array in the body).
 */
export const ProposalFormBody = ProposalBody.extend({
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
export function proposalInput(f: Record<string, string>) {
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
