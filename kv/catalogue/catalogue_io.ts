import { z } from "zod";
import { canonicalEmail } from "../../lib/email.ts";
import { isFilePath, MAX_MATERIAL_LABEL, MAX_MATERIALS } from "./materials.ts";
import {
  type Learning,
  LEARNING_SHAPE,
  learningOf,
  learningProblem,
  noLearning,
} from "../../lib/learning.ts";
import { findAccountByEmail, getAccounts } from "../accounts/accounts.ts";
import { catalogueChanged, type DocDeps } from "./catalogue_doc.ts";
import {
  allModules,
  cleanFacts,
  cleanGets,
  LIMITS,
  type ModuleInput,
  putModule,
  SLUG_RE,
  STATES,
} from "./modules.ts";

/**
 * The owner's import and export of the catalogue (`deno task catalogue`, docs/catalogue-file.md):
 *   {"modules": [{slug, title, who, lede, about, note, meta, state, track, area, by, facts,
 *                 gets, published, contributors: [<address>, ...], licence, audience, level,
 *                 subject, language, type, accessibility, age_min, age_max, duration,
 *                 group_min, group_max}]}
 * The whole file is checked first (fields, duplicate slugs, every contributor address
 * belongs to an account); any fault changes nothing. Then each module is written in its own
 * atomic (created, or updated in place when its slug exists), with its trail lines.
 */

const text = (max: number) => z.string().trim().max(max).default("");

const FileModule = z.object({
  slug: z.string().regex(SLUG_RE, "lower-case letters, digits and inner hyphens, up to 80"),
  title: z.string().trim().min(LIMITS.title[0]).max(LIMITS.title[1]),
  who: text(LIMITS.who),
  lede: text(LIMITS.lede),
  about: text(LIMITS.about),
  note: z.string().trim().max(LIMITS.note).nullable().default("").transform((v) => v ?? ""),
  meta: text(LIMITS.meta),
  state: z.enum(STATES).default("development"),
  track: text(LIMITS.track),
  area: text(LIMITS.area),
  by: text(LIMITS.by),
  facts: z.array(z.tuple([
    z.string().trim().max(LIMITS.factLabel),
    z.string().trim().max(LIMITS.factValue),
  ])).default([]).transform(cleanFacts).refine((f) => f.length <= LIMITS.facts, {
    message: `at most ${LIMITS.facts} pairs`,
  }),
  gets: z.array(z.string().trim().max(LIMITS.getsLine)).default([]).transform(cleanGets)
    .refine((g) => g.length <= LIMITS.gets, { message: `at most ${LIMITS.gets} lines` }),
  published: z.boolean().default(false),
  contributors: z.array(z.string()).max(50).default([]),
  materials: z.array(z.object({
    label: z.string().trim().min(1).max(MAX_MATERIAL_LABEL),
    url: z.string().trim().max(500).refine((u) => isFilePath(u) || /^https:\/\/\S+$/.test(u), {
      message: "an https:// link or a stored file's path",
    }),
    type: z.string().max(200).nullable().default(null),
    size: z.number().int().min(0).nullable().default(null),
  })).max(MAX_MATERIALS).default([]),
  // Licence and metadata: a field left out is "not stated" (a licence is never assumed).
  ...Object.fromEntries(
    Object.entries(LEARNING_SHAPE).map((
      [k, v],
    ) => [k, (v as z.ZodType).default(noLearning()[k as keyof Learning] as never)]),
  ) as { [K in keyof typeof LEARNING_SHAPE]: z.ZodDefault<(typeof LEARNING_SHAPE)[K]> },
}).superRefine((m, ctx) => {
  const problem = learningProblem(learningOf(m));
  if (problem) ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
});

const CatalogueFile = z.object({ modules: z.array(FileModule).max(20_000) });

export class ImportError extends Error {}

interface ImportResult {
  created: number;
  updated: number;
  /** Modules whose slug existed with the same content: nothing was written for them. */
  unchanged: number;
}

/** Checks and loads a parsed catalogue file; throws ImportError naming what is wrong. */
export async function importCatalogue(deps: DocDeps, data: unknown): Promise<ImportResult> {
  const { kv } = deps;
  const parsed = CatalogueFile.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.map(String);
    const at = path[0] === "modules" && path.length > 1
      ? `modules[${path[1]}]${path.length > 2 ? "." + path.slice(2).join(".") : ""}`
      : path.join(".") || "file";
    throw new ImportError(`${at}: ${issue.message}`);
  }
  const mods = parsed.data.modules;
  const seen = new Set<string>();
  for (const m of mods) {
    if (seen.has(m.slug)) throw new ImportError(`modules: slug ${m.slug} appears twice`);
    seen.add(m.slug);
  }
  const ids = new Map<string, number>();
  for (const m of mods) {
    for (const raw of m.contributors) {
      const email = canonicalEmail(raw);
      if (email === null) throw new ImportError(`${m.slug}: ${raw} is not an e-mail address`);
      if (ids.has(raw)) continue;
      const acc = await findAccountByEmail(kv, email);
      if (!acc) {
        throw new ImportError(`${m.slug}: no account has the address ${raw}; nothing imported`);
      }
      ids.set(raw, acc.value.id);
    }
  }
  const result: ImportResult = { created: 0, updated: 0, unchanged: 0 };
  const now = deps.clock.now();
  for (const m of mods) {
    const { published, contributors, ...rest } = m;
    const input: ModuleInput = rest;
    const r = await putModule(kv, input, contributors.map((c) => ids.get(c)!), published, {
      actor: "owner",
      now,
    });
    if (r.created) result.created++;
    else if (r.changed) result.updated++;
    else result.unchanged++;
  }
  if (mods.length > 0) await catalogueChanged(deps);
  return result;
}

/** Every module in the import form, contributors by address, sorted by slug. */
export async function exportCatalogue(kv: Deno.Kv) {
  const mods = (await allModules(kv)).sort((a, b) => a.slug.localeCompare(b.slug));
  const emails = new Map<number, string>();
  const ids = [...new Set(mods.flatMap((m) => m.contributors))];
  for (const a of await getAccounts(kv, ids)) emails.set(a.id, a.email);
  return {
    modules: mods.map((m) => ({
      slug: m.slug,
      title: m.title,
      who: m.who,
      lede: m.lede,
      about: m.about,
      note: m.note,
      meta: m.meta,
      state: m.state,
      track: m.track,
      area: m.area,
      by: m.by,
      facts: m.facts,
      gets: m.gets,
      ...learningOf(m),
      materials: m.materials ?? [],
      published: m.published,
      contributors: m.contributors.flatMap((id) => emails.has(id) ? [emails.get(id)!] : []),
    })),
  };
}
