/**
 * Forms: read the posted fields, check them with the zod schema the API uses, and either
 * answer 303 to the next page or show the form again (status 400) with each message beside
 * its field and a summary at the top. Domain errors that name a field (`ApiError` with
 * `extra.field`) land beside that field; other client errors above the form; rate limits and
 * the rest become the error pages. The controls the form is drawn with are
 * web/_form_controls.tsx.
 */
import type { Child } from "hono/jsx";
import type { z } from "zod";
import { DomainError } from "../lib/errors.ts";
import { ApiError, statusOf } from "../http/errors.ts";
import { fieldSchema, numberRule, numberWords, pageWords } from "../http/words.ts";
import type { PageProps } from "./_layout.tsx";
import { seeOther, waitInWords, type WebCtx } from "./_web.tsx";

type FieldErrors = Record<string, string>;

/** What a form shows: the values sent (or stored), and the errors found in them. */
export interface FormView {
  values: Record<string, string | undefined>;
  errors: FieldErrors;
  /** An error about the whole form. */
  error?: string;
}

export const emptyView = (values: FormView["values"] = {}): FormView => ({ values, errors: {} });

/**
 * The posted body as Hono parses it (urlencoded or multipart). A body that cannot be read
 * (multipart without a boundary, cut off, not what its type says) is the 400 page; one over
 * the path's limit (web/_web.tsx) the 413 page.
 */
export async function readBody(
  c: WebCtx,
): Promise<Record<string, string | File | (string | File)[]>> {
  try {
    return await c.req.parseBody({ all: true });
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const cause = (err as Error)?.cause;
    if (cause instanceof DomainError) throw cause;
    throw new ApiError(400, UNREADABLE);
  }
}

const UNREADABLE = "This form could not be read (it did not arrive whole, or not as a form). " +
  "Open the page again and send it from there";

/** The posted fields (urlencoded or multipart), text values only, the last of repeated names. */
export async function readForm(c: WebCtx): Promise<Record<string, string>> {
  const body = await readBody(c);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    const last = Array.isArray(v) ? v[v.length - 1] : v;
    if (typeof last === "string") out[k] = last;
  }
  return out;
}

/** The first message of each field, keyed by the field's path ("links.0.url"). */
function zodErrors(err: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of err.issues) {
    const key = issue.path.map(String).join(".") || "_";
    out[key] ??= plainIssue(issue);
  }
  return out;
}

/**
 * What a person reads about one failed rule: a sentence in plain words (http/words.ts
 * `pageWords`, given where the form is parsed), or the message the schema wrote itself
 * ("must be an https:// address") as a sentence.
 */
function plainIssue(issue: z.ZodError["issues"][number]): string {
  return sentence(issue.message);
}

/** A message as a sentence: capital first letter, full stop at the end. */
export function sentence(s: string): string {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/**
 * The form field an error path belongs to, and the message as it reads beside it: the path
 * itself if the form has that field, else its first part ("langs.1" is the field "langs"),
 * the message then saying which entry of the list ("Entry 2: ...").
 */
function besideField(path: string, message: string, form: Record<string, string>) {
  if (path in form || !path.includes(".")) return { field: path, message };
  const [field, ...rest] = path.split(".");
  const entry = rest.find((p) => /^[0-9]+$/.test(p));
  return { field, message: entry ? `Entry ${Number(entry) + 1}: ${message}` : message };
}

const FORM_ERRORS = new Set([400, 403, 404, 409, 410, 413, 415, 429]);

interface FormSpec<S extends z.ZodType> {
  schema: S;
  /** Turns the text fields into the schema's input (checkboxes to booleans, lists). */
  input?: (form: Record<string, string>) => unknown;
  /**
   * The domain's own checks of the fields that need no lookup (kv/ `fieldProblems`), run with
   * the schema's so every message shows at once; by the input's field names.
   */
  also?: (input: Record<string, unknown>) => FieldErrors;
  /** The form field an error path of the schema belongs to ("files.0.url" -> "file_url_0"). */
  fieldOf?: (path: string) => string;
  /** Does the work with the checked data; answers the path to send the browser to (303). */
  act: (data: z.output<S>, form: Record<string, string>) => Promise<string> | string;
  /** The unit of a number field, for its refusal ("grace": "minutes"). */
  units?: Record<string, string>;
  /** The field a rate limit's sentence stands beside (429); above the form without one. */
  limitField?: string;
  /** The page with the form, shown again when something is wrong. */
  show: (view: FormView) => Child | Promise<Child>;
  page: PageProps;
}

/**
 * Handles one POST of a form: 303 on success, the form again with messages if not: 400, or
 * the refusal's own status (404, 409, 429 with its Retry-After...).
 */
export async function submitForm<S extends z.ZodType>(
  c: WebCtx,
  spec: FormSpec<S>,
): Promise<Response> {
  const form = await readForm(c);
  const input = spec.input ? spec.input(form) : form;
  const parsed = spec.schema.safeParse(input, { error: pageWords });
  const also = Object.fromEntries(
    Object.entries(spec.also?.(input as Record<string, unknown>) ?? {}).map((
      [k, v],
    ) => [k, sentence(v)]),
  );
  let view: FormView;
  if (parsed.success && Object.keys(also).length) {
    view = { values: form, errors: also };
  } else if (parsed.success) {
    try {
      return seeOther(c, await spec.act(parsed.data, form));
    } catch (err) {
      const status = statusOf(err);
      if (!FORM_ERRORS.has(status)) throw err;
      // statusOf knows only these two: what they say is shown with the form.
      const { extra, message: text } = err as ApiError | DomainError;
      const wait = retryAfterOf(err as ApiError | DomainError);
      if (status === 429 && wait !== undefined) {
        // A rate limit: the form again with the wait in plain words, status and header kept.
        c.status(429);
        c.header("Retry-After", String(wait));
        const message = `Too many requests for now; try again in ${waitInWords(wait)}.`;
        view = spec.limitField
          ? { values: form, errors: { [spec.limitField]: message } }
          : { values: form, errors: {}, error: message };
        return await showAgain(c, spec, view);
      }
      const field = typeof extra.field === "string" ? extra.field : undefined;
      // The API's messages start with the field's name ("email: ..."); beside the field the
      // name is already there.
      const message = sentence(field ? text.replace(new RegExp(`^${field}: `), "") : text);
      view = field
        ? { values: form, errors: { [field]: message } }
        : { values: form, errors: {}, error: message };
    }
  } else {
    const errors: FieldErrors = {};
    for (const [path, message] of Object.entries(rangedErrors(spec, parsed.error))) {
      const at = spec.fieldOf ? { field: spec.fieldOf(path), message } : besideField(
        path,
        message,
        form,
      );
      errors[at.field] ??= at.message;
    }
    view = { values: form, errors: { ...also, ...errors } };
  }
  c.status(400);
  return await showAgain(c, spec, view);
}

/**
 * The zod errors by field, a number field's saying the range it takes whatever was wrong with
 * the value (too small, too big, a fraction, not a number); a refinement's own message stays.
 */
function rangedErrors<S extends z.ZodType>(spec: FormSpec<S>, err: z.ZodError): FieldErrors {
  const out = zodErrors(err);
  for (const issue of err.issues) {
    if (issue.code === "custom" || issue.path.length !== 1) continue;
    const name = String(issue.path[0]);
    // deno-lint-ignore no-explicit-any
    const rule = numberRule(fieldSchema(spec.schema as any, name));
    if (rule) out[name] = numberWords(rule, spec.units?.[name]);
  }
  return out;
}

async function showAgain<S extends z.ZodType>(c: WebCtx, spec: FormSpec<S>, view: FormView) {
  c.header("Cache-Control", "no-store");
  return await c.render(await spec.show(view), { ...spec.page, noindex: true });
}

/** The seconds a limited action waits, from either kind of error. */
function retryAfterOf(err: ApiError | DomainError): number | undefined {
  const s = err instanceof DomainError ? err.retryAfter : Number(err.headers["Retry-After"] ?? NaN);
  return s !== undefined && Number.isFinite(s) ? s : undefined;
}

/** A ticked checkbox's form value as a boolean. */
export const checked = (v: string | undefined) => v === "on" || v === "true";

/** An empty text field as "not given" (undefined), for optional schema fields. */
export const nonBlank = (
  v: string | undefined,
) => (v === undefined || v.trim() === "" ? undefined : v);
