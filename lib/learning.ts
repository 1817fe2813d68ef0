/**
 * The educational metadata of a module and a proposal, and the published vocabularies its
 * values come from (as the AMB profile, dini-ag-kim/amb, and LRMI name them):
 *   licence        Creative Commons 4.0 deeds and CC0 (SPDX ids), or all rights reserved
 *   audience       LRMI educationalAudienceRole (http://purl.org/dcx/lrmi-vocabs/...)
 *   level          KIM educationalLevel (https://w3id.org/kim/educationalLevel/, ISCED based)
 *   subject        KIM school subjects (http://w3id.org/kim/schulfaecher/), a small part of it
 *   language       ISO 639-1 codes (BCP 47 primary subtags; AMB takes two letters)
 *   type           HCRT learning resource types (https://w3id.org/kim/hcrt/)
 *   accessibility  schema.org accessibilityFeature values
 * Pure data and helpers: the stores (kv/catalogue/modules.ts, kv/catalogue/proposals.ts), the inputs
 * (http/catalogue_inputs.ts), the pages and the records for harvesters all read them here.
 */
import { z } from "zod";

export interface Licence {
  /** The SPDX identifier (the value stored and sent). */
  id: string;
  /** The short name people know ("CC BY 4.0"). */
  short: string;
  /** The name in full. */
  name: string;
  /** The Creative Commons deed, or null for all rights reserved. */
  url: string | null;
  /** What it asks of people who reuse the work, in plain words. */
  plain: string;
}

const cc = (code: string, name: string, plain: string): Licence => ({
  id: `CC-${code.toUpperCase()}-4.0`,
  short: `CC ${code.toUpperCase()} 4.0`,
  name: `Creative Commons ${name} 4.0 International`,
  url: `https://creativecommons.org/licenses/${code}/4.0/`,
  plain,
});

export const LICENCES: readonly Licence[] = [
  {
    id: "CC0-1.0",
    short: "CC0 1.0",
    name: "CC0 1.0 Universal (public domain dedication)",
    url: "https://creativecommons.org/publicdomain/zero/1.0/",
    plain: "no conditions (public domain)",
  },
  cc("by", "Attribution", "name the author"),
  cc("by-sa", "Attribution-ShareAlike", "name the author, share changes alike"),
  cc("by-nc", "Attribution-NonCommercial", "name the author, not for sale"),
  cc(
    "by-nc-sa",
    "Attribution-NonCommercial-ShareAlike",
    "name the author, not for sale, share alike",
  ),
  cc("by-nd", "Attribution-NoDerivatives", "name the author, no changes"),
  cc(
    "by-nc-nd",
    "Attribution-NonCommercial-NoDerivatives",
    "name the author, not for sale, no changes",
  ),
  {
    id: "all-rights-reserved",
    short: "All rights reserved",
    name: "All rights reserved",
    url: null,
    plain: "ask before any reuse",
  },
];

export const LICENCE_IDS = LICENCES.map((l) => l.id) as [string, ...string[]];
export const licenceOf = (id: string | null): Licence | null =>
  LICENCES.find((l) => l.id === id) ?? null;
/** What a module without a licence says. */
export const NO_LICENCE = "Licence not stated";

/** A term of a vocabulary: the stored id, its label, its concept URI. */
interface Term {
  id: string;
  label: string;
  uri: string;
  /** The vocabulary's German label, where it has no English one (AMB prefLabel). */
  de?: string;
}

const terms = (base: string, list: [string, string, string?][]): Term[] =>
  list.map(([id, label, de]) => ({ id, label, uri: `${base}${id}`, ...(de ? { de } : {}) }));

const AUDIENCES = terms("http://purl.org/dcx/lrmi-vocabs/educationalAudienceRole/", [
  ["teacher", "Teachers"],
  ["student", "Students"],
  ["parent", "Parents"],
  ["mentor", "Mentors"],
  ["counsellor", "Counsellors"],
  ["administrator", "School leaders and administrators"],
  ["generalPublic", "Everyone"],
]);

export const EDUCATION_LEVELS = terms("https://w3id.org/kim/educationalLevel/", [
  ["level_0", "Early childhood"],
  ["level_1", "Primary"],
  ["level_2", "Lower secondary"],
  ["level_3", "Upper secondary"],
  ["level_4", "Post-secondary"],
  ["level_A", "University"],
  ["level_C", "Teacher training"],
]);

/** A small part of the KIM school subjects; the English labels are ours. */
const SUBJECTS = terms("http://w3id.org/kim/schulfaecher/", [
  ["s1001", "Biology", "Biologie"],
  ["s1002", "Chemistry", "Chemie"],
  ["s1005", "German", "Deutsch"],
  ["s1007", "English", "Englisch"],
  ["s1008", "Ethics", "Ethik"],
  ["s1010", "Geography", "Geografie"],
  ["s1011", "History", "Geschichte"],
  ["s1012", "Health", "Gesundheit"],
  ["s1013", "Computer science", "Informatik"],
  ["s1015", "Art", "Kunst"],
  ["s1017", "Mathematics", "Mathematik"],
  ["s1046", "Media education", "Medienbildung"],
  ["s1020", "Music", "Musik"],
  ["s1052", "Natural sciences", "Naturwissenschaften"],
  ["s1021", "Philosophy", "Philosophie"],
  ["s1022", "Physics", "Physik"],
  ["s1023", "Politics", "Politik"],
  ["s1043", "Psychology", "Psychologie"],
  ["s1028", "General studies", "Sachunterricht"],
  ["s1031", "Physical education", "Sport"],
  ["s1059", "Technology", "Technik"],
]);

const LANGUAGES = terms("", [
  ["en", "English"],
  ["de", "German"],
  ["fr", "French"],
  ["es", "Spanish"],
  ["it", "Italian"],
  ["nl", "Dutch"],
  ["pt", "Portuguese"],
  ["pl", "Polish"],
  ["sv", "Swedish"],
  ["da", "Danish"],
  ["nb", "Norwegian Bokmål"],
  ["fi", "Finnish"],
  ["cs", "Czech"],
  ["uk", "Ukrainian"],
  ["tr", "Turkish"],
  ["ar", "Arabic"],
  ["zh", "Chinese"],
]);

export const TYPES = terms("https://w3id.org/kim/hcrt/", [
  ["lesson_plan", "Lesson plan"],
  ["worksheet", "Worksheet"],
  ["course", "Course"],
  ["experiment", "Experiment"],
  ["case_study", "Case study"],
  ["drill_and_practice", "Exercise"],
  ["assessment", "Assessment"],
  ["educational_game", "Game"],
  ["slide", "Presentation"],
  ["text", "Text"],
  ["video", "Video"],
  ["audio", "Audio recording"],
  ["image", "Image"],
  ["map", "Map"],
  ["simulation", "Simulation"],
  ["web_page", "Web page"],
  ["other", "Other"],
]);

const ACCESSIBILITY = terms("", [
  ["alternativeText", "Text alternatives for images"],
  ["captions", "Captions"],
  ["transcript", "Transcript"],
  ["largePrint", "Large print"],
  ["highContrastDisplay", "High contrast"],
  ["structuralNavigation", "Headings to navigate by"],
  ["readingOrder", "Logical reading order"],
  ["signLanguage", "Sign language"],
  ["audioDescription", "Audio description"],
  ["tactileGraphic", "Tactile graphics"],
]);

export const VOCABULARIES = {
  audience: AUDIENCES,
  level: EDUCATION_LEVELS,
  subject: SUBJECTS,
  language: LANGUAGES,
  type: TYPES,
  accessibility: ACCESSIBILITY,
} as const;
export type ListField = keyof typeof VOCABULARIES;
export const LIST_FIELDS = Object.keys(VOCABULARIES) as ListField[];

/** The ids of a vocabulary, as a zod enum takes them. */
const idsOf = (field: ListField) => VOCABULARIES[field].map((t) => t.id) as [string, ...string[]];

/** The term of an id in a vocabulary (null for an id it does not hold). */
export function termOf(field: ListField, id: string): Term | null {
  return VOCABULARIES[field].find((t) => t.id === id) ?? null;
}

/** The label of an id, or the id itself when the vocabulary does not know it. */
export const labelOf = (field: ListField, id: string) => termOf(field, id)?.label ?? id;

/** The educational metadata a module and a proposal carry (the module resource's added fields). */
export interface Learning {
  /** SPDX id of the licence; null: not stated. */
  licence: string | null;
  audience: string[];
  level: string[];
  subject: string[];
  language: string[];
  type: string[];
  accessibility: string[];
  /** Typical ages, inclusive; null when not given. */
  age_min: number | null;
  age_max: number | null;
  /** Minutes the module takes; null when not given. */
  duration: number | null;
  group_min: number | null;
  group_max: number | null;
}

export const LEARNING_FIELDS = [
  "licence",
  ...LIST_FIELDS,
  "age_min",
  "age_max",
  "duration",
  "group_min",
  "group_max",
] as const satisfies readonly (keyof Learning)[];

export const LEARNING_LIMITS = { age: 99, duration: 60 * 24 * 365, group: 10_000 } as const;

/** Metadata of a record from before it had any: nothing stated. */
export function noLearning(): Learning {
  return {
    licence: null,
    audience: [],
    level: [],
    subject: [],
    language: [],
    type: [],
    accessibility: [],
    age_min: null,
    age_max: null,
    duration: null,
    group_min: null,
    group_max: null,
  };
}

/** The metadata fields of a record (one written before them reads as nothing stated). */
export function learningOf(r: Partial<Learning>): Learning {
  const out = noLearning();
  for (const f of LEARNING_FIELDS) {
    const v = r[f];
    // deno-lint-ignore no-explicit-any
    if (v !== undefined) (out as any)[f] = Array.isArray(v) ? [...v] : v;
  }
  return out;
}

/** ISO 8601 duration of minutes (PT1H30M), as schema.org's timeRequired takes it. */
export function isoDuration(minutes: number): string {
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  return `P${d ? `${d}D` : ""}${h || m || !d ? "T" : ""}${h ? `${h}H` : ""}${
    m || (!h && !d) ? `${m}M` : ""
  }`;
}

/** Minutes as a person reads them: "45 minutes", "1 hour 30 minutes", "2 days". */
export function readableDuration(minutes: number): string {
  const parts: string[] = [];
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const unit = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
  if (d) parts.push(unit(d, "day"));
  if (h) parts.push(unit(h, "hour"));
  if (m || parts.length === 0) parts.push(unit(m, "minute"));
  return parts.join(" ");
}

/** A range as a person reads it: "8 to 12", "from 8", "up to 12"; null when neither is set. */
export function readableRange(min: number | null, max: number | null): string | null {
  if (min !== null && max !== null) return min === max ? String(min) : `${min} to ${max}`;
  if (min !== null) return `from ${min}`;
  if (max !== null) return `up to ${max}`;
  return null;
}

/**
 * The attribution to copy, as Creative Commons recommends it (title, author, licence):
 * "‘Pond life through the seasons’ by Grete Olsen, CC BY 4.0". Null without an open licence.
 */
export function attribution(title: string, by: string, licence: string | null): string | null {
  const l = licenceOf(licence);
  if (!l?.url) return null;
  return `‘${title}’${by ? ` by ${by}` : ""}, ${l.short}`;
}

/**
 * What is wrong with metadata as a whole (each field alone is the schema's): a range that ends
 * before it starts. Null when nothing is.
 */
export function learningProblem(l: Learning): { field: keyof Learning; message: string } | null {
  const pairs = [["age_min", "age_max", "ages"], [
    "group_min",
    "group_max",
    "group sizes",
  ]] as const;
  for (const [lo, hi, what] of pairs) {
    const a = l[lo];
    const b = l[hi];
    if (a !== null && b !== null && a > b) {
      return { field: hi, message: `${hi}: the ${what} end before they start (${a} to ${b})` };
    }
  }
  return null;
}

/** A list of terms of one vocabulary (lib/learning.ts), each once, in the order sent. */
const termList = (field: ListField) =>
  z.array(z.enum(idsOf(field))).max(VOCABULARIES[field].length * 2)
    .transform((v) => [...new Set(v)])
    .meta({ description: `ids of the ${field} vocabulary (docs/api.md)` });

const whole = (min: number, max: number) => z.number().int().min(min).max(max).nullable();

/**
 * The licence and educational metadata (lib/learning.ts), as the proposal, the module's change
 * and the catalogue file take them: each field may be left out.
 */
export const LEARNING_SHAPE = {
  licence: z.enum(LICENCE_IDS).nullable()
    .meta({ description: "SPDX id of the licence; null: not stated" }),
  ...Object.fromEntries(LIST_FIELDS.map((f) => [f, termList(f)])) as Record<
    ListField,
    ReturnType<typeof termList>
  >,
  age_min: whole(0, LEARNING_LIMITS.age),
  age_max: whole(0, LEARNING_LIMITS.age),
  duration: whole(1, LEARNING_LIMITS.duration).meta({ description: "minutes" }),
  group_min: whole(1, LEARNING_LIMITS.group),
  group_max: whole(1, LEARNING_LIMITS.group),
};
