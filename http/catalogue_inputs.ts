import { z } from "zod";
import { cleanFacts, cleanGets, LIMITS, STATES } from "../kv/catalogue/modules.ts";
import { AREAS, MAX_REASON } from "../kv/catalogue/proposals.ts";
import { REQUEST_KINDS, type RequestKind } from "../kv/forms/requests.ts";
import { emailSchema } from "../lib/email.ts";
import { ChainSchema, MAX_RECORDS, RecordSchema } from "../lib/record_chain.ts";
import { honeypotField } from "./guards.ts";
import { chars, multiLine, oneLineField } from "./text.ts";
import { LEARNING_SHAPE } from "../lib/learning.ts";
import { MAX_MATERIAL_LABEL, MAX_MATERIALS } from "../kv/catalogue/materials.ts";

/**
 * The request schemas of the catalogue's forms, validated by the API's routes
 * (api/contributions.ts, api/requests.ts, api/catalogue.ts) and the pages (web/_proposal_input.ts,
 * web/_request_page.tsx, web/_me_work_page.tsx, web/_me_work_module_page.tsx,
 * web/_team_proposals.tsx) alike: a proposal, a change of a proposal, a request, a change of a
 * module.
 */

const httpsUrl = z.string().trim().max(500).refine((v) => {
  if (!URL.canParse(v)) return false;
  const u = new URL(v);
  return u.protocol === "https:" && !u.username && !u.password;
}, { message: "must be an https:// link without credentials" });

/** The metadata fields, each optional (left out: unchanged, or nothing stated). */
const learningPatch = Object.fromEntries(
  Object.entries(LEARNING_SHAPE).map(([k, v]) => [k, v.optional()]),
) as { [K in keyof typeof LEARNING_SHAPE]: z.ZodOptional<(typeof LEARNING_SHAPE)[K]> };

export const ProposalBody = z.object({
  name: oneLineField(120).min(2),
  email: emailSchema,
  title: oneLineField(160).min(3),
  area: z.enum(AREAS).nullish().transform((v) => v ?? "other"),
  summary: multiLine(4000, 1),
  trail: multiLine(12000).nullish().transform((v) => v ?? ""),
  records: z.array(RecordSchema).max(MAX_RECORDS).nullish(),
  chain: ChainSchema.nullish(),
  files: z.array(z.object({
    label: oneLineField(120).nullish().transform((v) => v ?? ""),
    url: httpsUrl,
  })).max(10).nullish().transform((v) => v ?? []),
  attribution: z.enum(["keep", "remove"]).nullish().transform((v) => v ?? "keep"),
  who: oneLineField(LIMITS.who).nullish().transform((v) => v ?? "")
    .meta({ description: "who the module is for, in words (the module's `who`)" }),
  ...learningPatch,
  website: honeypotField,
}).meta({ id: "ProposalForm" });

export const ProposalPatch = z.object({
  status: z.enum(["reviewing", "admitted", "rejected", "published", "withdrawn"]).optional(),
  reason: multiLine(MAX_REASON).nullish().transform((v) => v ?? ""),
  attribution: z.enum(["keep", "remove"]).optional(),
}).meta({ id: "ProposalChange" });

export const RequestBody = z.object({
  name: oneLineField(120).min(2),
  email: emailSchema,
  // Any unknown text becomes other, however long: the interface maps unknown values, it does not
  // refuse them (the kind is never stored as sent).
  kind: z.string().nullish().transform((v): RequestKind =>
    REQUEST_KINDS.includes(v as RequestKind) ? v as RequestKind : "other"
  ).meta({ type: "string", enum: [...REQUEST_KINDS] }),
  text: multiLine(4000, 10),
  org: oneLineField(200).nullish().transform((v) => v ?? ""),
  module: oneLineField(120).nullish().transform((v) => v ?? ""),
  website: honeypotField,
}).meta({ id: "RequestForm" });

// Module texts refuse control characters (newlines and tabs aside) and lone surrogates, as
// profile texts do; a title is one line.
const text = (max: number) => multiLine(max);

const FactsSchema = z.array(
  z.tuple([text(LIMITS.factLabel), text(LIMITS.factValue)]),
).max(100).transform(cleanFacts).refine((f) => f.length <= LIMITS.facts, {
  message: `at most ${LIMITS.facts} pairs with both sides filled`,
});

const GetsSchema = z.union([z.array(text(LIMITS.getsLine)), text(10_000)])
  .transform((g, ctx) => {
    const lines = cleanGets(typeof g === "string" ? g.split(/\r?\n/) : g);
    if (lines.some((l) => chars(l) > LIMITS.getsLine)) {
      ctx.addIssue({ code: "custom", message: `lines up to ${LIMITS.getsLine} characters` });
    }
    return lines;
  }).refine((g) => g.length <= LIMITS.gets, { message: `at most ${LIMITS.gets} lines` });

export const ModulePatchBody = z.object({
  title: oneLineField(LIMITS.title[1]).min(LIMITS.title[0]).optional(),
  who: text(LIMITS.who).optional(),
  lede: text(LIMITS.lede).optional(),
  about: text(LIMITS.about).optional(),
  note: text(LIMITS.note).nullable().optional().transform((v) => v === null ? "" : v)
    .meta({ description: "empty string (or null) clears" }),
  state: z.enum(STATES).optional(),
  meta: text(LIMITS.meta).nullable().optional().transform((v) => v === null ? "" : v)
    .meta({ description: "empty string (or null) clears" }),
  facts: FactsSchema.optional().meta({ description: "[label, value] pairs" }),
  gets: GetsSchema.optional().meta({ description: "lines of text" }),
  ...learningPatch,
  materials: z.array(z.object({
    label: oneLineField(MAX_MATERIAL_LABEL).nullish(),
    url: z.string().trim().min(1).max(500),
  })).max(MAX_MATERIALS).optional().meta({
    description: "files (the path of one of your public files) and https links; replaces the list",
  }),
}).meta({ id: "ModulePatch" });
