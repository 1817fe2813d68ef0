import { z } from "zod";

/**
 * Every refusal of a zod schema in plain words, from one place: what is wrong and what is
 * allowed, never the validator's phrases ("Invalid input: expected boolean, received string").
 * The API's words (`apiWords`) follow the field's name: "grouping: must be true or false",
 * "text: must be at most 500 characters"; installed for every schema by `speakPlainly`. The
 * pages' words (`pageWords`) speak to a person beside a labelled field: "Use at most 500
 * characters (this has more)."; given where a form is parsed. A message a schema writes itself
 * (`refine(..., { message })`, `min(2, "...")`) wins over both.
 */

/** The issue zod hands an error map: the failed rule, its schema or check, and the input. */
type RawIssue = z.core.$ZodRawIssue;
type Def = {
  type?: string;
  check?: string;
  format?: string;
  value?: unknown;
  inclusive?: boolean;
  minimum?: number;
  maximum?: number;
  length?: number;
  checks?: { _zod: { def: Def } }[];
  innerType?: Schema;
  in?: Schema;
  element?: Schema;
  options?: Schema[];
  items?: Schema[];
  entries?: Record<string, unknown>;
  values?: unknown[];
};
type Schema = { _zod: { def: Def } };

const FORMATS: Record<string, string> = {
  email: "an e-mail address, such as ada@example.org",
  url: "a web address, such as https://example.org",
  datetime: "a date and time, such as 2026-03-07T22:00:00+01:00",
  date: "a date, such as 2026-03-07",
  time: "a time, such as 22:00",
  uuid: "a UUID",
};

const quoted = (v: unknown) => typeof v === "string" ? `"${v}"` : String(v);

function oneOf(values: unknown[]): string {
  if (values.length === 1) return quoted(values[0]);
  if (values.length > 12) return `one of the ${values.length} documented values`;
  return `one of ${values.map(quoted).join(", ")}`;
}

/** "from 1 to 24", "of at least 1", "up to 10", or "" from a number's checks. */
function range(checks: Def[], whole: boolean): string {
  let min: number | undefined;
  let max: number | undefined;
  for (const c of checks) {
    const v = Number(c.value);
    if (c.check === "greater_than") min = c.inclusive ? v : whole ? v + 1 : v;
    if (c.check === "less_than") max = c.inclusive ? v : whole ? v - 1 : v;
  }
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` up to ${max}`;
  return "";
}

/** "at most 500 characters", "2 to 80 characters", or "" from a string's or a list's checks. */
function length(checks: Def[], unit: string): string {
  const min = checks.find((c) => c.check === "min_length")?.minimum;
  const max = checks.find((c) => c.check === "max_length")?.maximum;
  const exact = checks.find((c) => c.check === "length_equals")?.length;
  if (exact !== undefined) return ` of ${exact} ${unit}`;
  if (min !== undefined && min > 1 && max !== undefined) return ` of ${min} to ${max} ${unit}`;
  if (max !== undefined) return ` of at most ${max} ${unit}`;
  if (min !== undefined && min > 1) return ` of at least ${min} ${unit}`;
  return "";
}

/** What a schema accepts, as a noun phrase: "a whole number from 1 to 24", "true or false". */
export function accepted(schema: Schema | undefined, depth = 0): string {
  const def = schema?._zod.def;
  if (!def || depth > 6) return "a value of the documented kind";
  const checks = (def.checks ?? []).map((c) => c._zod.def);
  const format = def.format ?? checks.find((c) => c.check === "string_format")?.format;
  switch (def.type) {
    case "boolean":
      return "true or false";
    case "number": {
      const whole = checks.some((c) => c.check === "number_format" && /int/.test(c.format ?? ""));
      return `${whole ? "a whole number" : "a number"}${range(checks, whole)}`;
    }
    case "string":
      if (format && FORMATS[format]) return FORMATS[format];
      return `a text${length(checks, "characters")}`;
    case "array":
      return `a list${length(checks, "items")}`;
    case "tuple":
      return `a list of ${def.items?.length ?? 0} items`;
    case "object":
    case "record":
      return "an object";
    case "enum":
      return oneOf(Object.values(def.entries ?? {}));
    case "literal":
      return oneOf(def.values ?? []);
    case "null":
      return "null";
    case "nullable":
      return `${accepted(def.innerType, depth + 1)} or null`;
    case "optional":
    case "default":
    case "prefault":
    case "nonoptional":
    case "readonly":
    case "catch":
      return accepted(def.innerType, depth + 1);
    case "pipe":
      return accepted(def.in, depth + 1);
    case "union":
      return (def.options ?? []).map((o) => accepted(o, depth + 1)).join(", or ");
    default:
      return "a value of the documented kind";
  }
}

const inputMissing = (issue: RawIssue) => issue.input === undefined;
const isList = (origin: unknown) => origin === "array" || origin === "set";

/** The API's words for a failed rule, read after the field's name ("remind: ..."). */
function apiWords(issue: RawIssue): string {
  const i = issue as RawIssue & Def & { origin?: string; keys?: string[]; divisor?: number };
  const schema = i.inst as Schema | undefined;
  // `.int()`: a fraction, or a number past the safe integers.
  if (schema?._zod.def.check === "number_format") return "must be a whole number";
  switch (i.code) {
    case "invalid_type":
      return inputMissing(issue) ? "is required" : `must be ${accepted(schema)}`;
    case "invalid_union":
      return `must be ${accepted(schema)}`;
    case "invalid_value":
      return `must be ${oneOf(i.values ?? [])}`;
    case "too_big": {
      const n = Number(i.maximum);
      if (i.origin === "string") return `must be at most ${n} characters`;
      if (isList(i.origin)) return `must hold at most ${n} items`;
      return i.inclusive === false ? `must be less than ${n}` : `must be at most ${n}`;
    }
    case "too_small": {
      const n = Number(i.minimum);
      if (i.origin === "string") {
        return n <= 1 ? "must not be empty" : `must be at least ${n} characters`;
      }
      if (isList(i.origin)) return n <= 1 ? "must not be empty" : `must hold at least ${n} items`;
      return i.inclusive === false ? `must be more than ${n}` : `must be at least ${n}`;
    }
    case "invalid_format":
      return `must be ${FORMATS[i.format ?? ""] ?? "written in the documented form"}`;
    case "not_multiple_of":
      return `must be a multiple of ${i.divisor}`;
    case "unrecognized_keys":
      return `holds fields this request does not take: ${(i.keys ?? []).join(", ")}`;
    case "invalid_key":
    case "invalid_element":
      return "holds an entry of the wrong kind";
    default:
      return "is not accepted here";
  }
}

/** The pages' words for a failed rule: a sentence beside the field's label. */
export function pageWords(issue: RawIssue): string {
  const i = issue as RawIssue & Def & { origin?: string; expected?: string };
  const list = isList(i.origin);
  switch (i.code) {
    case "too_big": {
      const n = Number(i.maximum);
      return list
        ? `Give at most ${n}.`
        : i.origin === "number"
        ? `Use a number up to ${n}.`
        : `Use at most ${n.toLocaleString("en")} characters (this has more).`;
    }
    case "too_small": {
      const n = Number(i.minimum);
      return list || n <= 1
        ? "Fill this in."
        : i.origin === "number"
        ? `Use a number of at least ${n}.`
        : `Use at least ${n} characters.`;
    }
    case "invalid_type":
      return i.input === undefined || i.input === ""
        ? "Fill this in."
        : i.expected === "number" || i.expected === "int"
        ? "Enter a number, in digits."
        : "This value cannot be used here.";
    case "invalid_format":
      return i.format === "email"
        ? "Enter an e-mail address, such as name@example.org."
        : i.format === "url"
        ? "Enter a web address that starts with https://."
        : "This is not written the way it should be.";
    case "invalid_value":
      return "Choose one of the options offered.";
    default:
      return "This value cannot be used here.";
  }
}

/** A number field's allowed values: whole or not, its bounds (inclusive). */
export interface NumberRule {
  whole: boolean;
  min?: number;
  max?: number;
}

/** One field's schema in an object schema (through pipes, defaults and optional wrappers). */
export function fieldSchema(
  schema: Schema | undefined,
  name: string,
  depth = 0,
): Schema | undefined {
  const def = schema?._zod.def as (Def & { shape?: Record<string, Schema> }) | undefined;
  if (!def || depth > 6) return undefined;
  if (def.type === "object") return def.shape?.[name];
  if (def.type === "pipe") return fieldSchema(def.in, name, depth + 1);
  return def.innerType ? fieldSchema(def.innerType, name, depth + 1) : undefined;
}

/** What a number schema allows (optional, nullable, default and pipes unwrapped); null: no number. */
export function numberRule(schema: Schema | undefined, depth = 0): NumberRule | null {
  const def = schema?._zod.def;
  if (!def || depth > 6) return null;
  if (def.type === "pipe") return numberRule(def.in, depth + 1);
  if (def.type !== "number") return def.innerType ? numberRule(def.innerType, depth + 1) : null;
  const checks = (def.checks ?? []).map((c) => c._zod.def);
  const whole = checks.some((c) => c.check === "number_format" && /int/.test(c.format ?? ""));
  const rule: NumberRule = { whole };
  for (const c of checks) {
    const v = Number(c.value);
    if (c.check === "greater_than") rule.min = c.inclusive ? v : whole ? v + 1 : v;
    if (c.check === "less_than") rule.max = c.inclusive ? v : whole ? v - 1 : v;
  }
  return rule;
}

/** 10 080 as people write it: groups of three digits from five digits on. */
const digits = (n: number) =>
  Math.abs(n) >= 10_000 ? n.toLocaleString("en").replace(/,/g, "\u202f") : String(n);

/**
 * A number field's refusal, whatever the value was (−5, 0, 1.5, "ten"): what it takes, "Give a
 * whole number of minutes from 1 to 10 080."
 */
export function numberWords(rule: NumberRule, unit?: string): string {
  const kind = `${rule.whole ? "a whole number" : "a number"}${unit ? ` of ${unit}` : ""}`;
  const { min, max } = rule;
  const span = min !== undefined && max !== undefined
    ? ` from ${digits(min)} to ${digits(max)}`
    : min !== undefined
    ? ` of at least ${digits(min)}`
    : max !== undefined
    ? ` up to ${digits(max)}`
    : "";
  return `Give ${kind}${span}.`;
}

let installed = false;

/** Makes `apiWords` every schema's default message (zod's global error map); idempotent. */
export function speakPlainly(): void {
  if (installed) return;
  installed = true;
  z.config({ customError: apiWords });
}

/** Where in a field an issue lies: "item 2", "url of item 1"; "" at the field itself. */
function within(path: readonly PropertyKey[]): string {
  return path.map((p) => typeof p === "number" ? `item ${p + 1}` : String(p)).reverse()
    .join(" of ");
}

/**
 * The `{error, field}` of a failed validation: `field` is the top-level name the request gave
 * (a list's entry is its list: `services`, not `services.0`), the sentence names it first and
 * says which entry ("services: item 2 must be a whole number of at least 1").
 */
export function refusal(
  error: z.ZodError,
  whole: string,
): { error: string; field: string } {
  const issue = error.issues[0];
  if (!issue) return { error: `${whole}: is not accepted here`, field: whole };
  const path = [...issue.path];
  if (issue.code === "unrecognized_keys" && path.length === 0) {
    return { error: `${issue.keys[0]}: is not a field this request takes`, field: issue.keys[0] };
  }
  const [first, ...rest] = path;
  const field = first === undefined ? whole : String(first);
  const where = within(rest);
  return { error: `${field}: ${where ? `${where} ` : ""}${issue.message}`, field };
}
