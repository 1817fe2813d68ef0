/**
 * Forms: read the posted fields, check them with the zod schema the API uses, and either
 * answer 303 to the next page or show the form again (status 400) with each message beside
 * its field and a summary at the top. Domain errors that name a field (`ApiError` with
 * `extra.field`) land beside that field; other client errors above the form; rate limits and
 * the rest become the error pages.
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

// ---- controls -----------------------------------------------------------------------------

const fieldId = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

/**
 * The list of errors above a form, each linking to its field. `formless`: a form posted that
 * the page no longer shows (an item gone or settled meanwhile), so the errors say what went
 * wrong under that heading, with no link to a field that is not there.
 */
export function ErrorSummary(
  props: { view: FormView; labels?: Record<string, string>; formless?: string },
) {
  // In the order the fields stand on the page, which is the labels' order; others after them.
  const order = Object.keys(props.labels ?? {});
  const rank = (name: string) => (order.indexOf(name) + order.length + 1) % (order.length + 1);
  const entries = Object.entries(props.view.errors).sort(([a], [b]) => rank(a) - rank(b));
  if (!entries.length && !props.view.error) return null;
  return (
    <div class="errors" role="alert" tabindex={-1} id="errors">
      <h2>{props.formless ?? "Please check the form"}</h2>
      <ul>
        {props.view.error ? <li>{props.view.error}</li> : null}
        {entries.map(([name, msg]) => {
          const label = props.labels?.[name] ?? name;
          return (
            <li>{props.formless ? label : <a href={`#${fieldId(name)}`}>{label}</a>}: {msg}</li>
          );
        })}
      </ul>
    </div>
  );
}

interface ControlProps {
  name: string;
  label: string;
  view: FormView;
  hint?: string;
  required?: boolean;
}

function described(p: ControlProps) {
  const id = fieldId(p.name);
  const error = p.view.errors[p.name];
  const ids = [p.hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return {
    id,
    error,
    attrs: {
      id,
      name: p.name,
      required: p.required,
      "aria-invalid": error ? "true" as const : undefined,
      "aria-describedby": ids || undefined,
    },
  };
}

function Hint(props: { id: string; hint?: string; error?: string }) {
  return (
    <>
      {props.hint ? <p class="hint" id={`${props.id}-hint`}>{props.hint}</p> : null}
      {props.error ? <p class="error" id={`${props.id}-error`}>{props.error}</p> : null}
    </>
  );
}

/** A labelled text input (type text, email, url, number, search, password, file...). */
export function Field(
  props: ControlProps & {
    type?: string;
    autocomplete?: string;
    maxlength?: number;
    placeholder?: string;
    accept?: string;
  },
) {
  const d = described(props);
  return (
    <div class={d.error ? "field invalid" : "field"}>
      <label for={d.id}>{props.label}</label>
      <Hint id={d.id} hint={props.hint} error={d.error} />
      <input
        {...d.attrs}
        type={props.type ?? "text"}
        value={props.type === "file" || props.type === "password"
          ? undefined
          : props.view.values[props.name]}
        autocomplete={props.autocomplete}
        maxlength={props.maxlength}
        placeholder={props.placeholder}
        accept={props.accept}
      />
    </div>
  );
}

export function TextArea(props: ControlProps & { rows?: number; maxlength?: number }) {
  const d = described(props);
  return (
    <div class={d.error ? "field invalid" : "field"}>
      <label for={d.id}>{props.label}</label>
      <Hint id={d.id} hint={props.hint} error={d.error} />
      <textarea {...d.attrs} rows={props.rows ?? 5} maxlength={props.maxlength}>
        {props.view.values[props.name] ?? ""}
      </textarea>
    </div>
  );
}

export function Select(
  props: ControlProps & { options: readonly (string | [value: string, label: string])[] },
) {
  const d = described(props);
  const current = props.view.values[props.name];
  return (
    <div class={d.error ? "field invalid" : "field"}>
      <label for={d.id}>{props.label}</label>
      <Hint id={d.id} hint={props.hint} error={d.error} />
      <select {...d.attrs}>
        {props.options.map((o) => {
          const [value, label] = typeof o === "string" ? [o, o] : o;
          return <option value={value} selected={value === current}>{label}</option>;
        })}
      </select>
    </div>
  );
}

/** A checkbox; its value is "on" when ticked (`checked(form.x)` turns it into a boolean). */
export function Checkbox(props: ControlProps) {
  const d = described(props);
  const on = props.view.values[props.name] === "on" || props.view.values[props.name] === "true";
  return (
    <div class={d.error ? "field check invalid" : "field check"}>
      <input {...d.attrs} type="checkbox" checked={on} />
      <label for={d.id}>{props.label}</label>
      <Hint id={d.id} hint={props.hint} error={d.error} />
    </div>
  );
}

/** What the server checks of a text field, as the browser can check it before sending. */
interface FieldRule {
  maxlength?: number;
  required?: boolean;
}

/**
 * The `maxlength` and `required` of each text field of an object schema, read from the schema
 * itself so the page and the server cannot disagree: a string's longest length, and whether
 * it must be given with at least one character.
 */
export function rulesOf(schema: z.ZodType): Record<string, FieldRule> {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
  const out: Record<string, FieldRule> = {};
  for (const [name, field] of Object.entries(shape)) {
    const optional = field.safeParse(undefined).success;
    let t = field as unknown as { _zod?: { def: Record<string, unknown> } };
    for (let depth = 0; depth < 8 && t._zod; depth++) {
      const def = t._zod.def;
      if (["optional", "nullable", "default", "prefault"].includes(def.type as string)) {
        t = def.innerType as typeof t;
      } else if (def.type === "pipe") t = def.in as typeof t;
      else break;
    }
    if (t._zod?.def.type !== "string") continue;
    const { maxLength, minLength } = t as unknown as {
      maxLength: number | null;
      minLength: number | null;
    };
    out[name] = {
      maxlength: maxLength ?? undefined,
      required: !optional && (minLength ?? 0) >= 1,
    };
  }
  return out;
}

/** A control's own props: what `fields` binds (the view, the label by name) may be left out. */
type Own<P> = Omit<P, "view" | "label"> & { label?: string };

/**
 * The controls of one form, bound to its view and to its labels by field name, so each field
 * says only what is its own (name, type, hint, rows, options):
 * `const F = fields(view, LABELS); <F.TextArea name="about" rows={8} />`. `Summary` is the
 * form's ErrorSummary with the same labels. Given the schema the form is checked with, each text
 * field's `maxlength` and `required` come from it (`rulesOf`), so the browser refuses what the
 * server would.
 */
export function fields(
  view: FormView,
  labels: Record<string, string> = {},
  schema?: z.ZodType,
) {
  const rules = schema ? rulesOf(schema) : {};
  const bind = <P extends ControlProps>(control: (p: P) => Child) => (p: Own<P>) =>
    control(
      {
        ...rules[p.name],
        ...Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)),
        view,
        label: p.label ?? labels[p.name] ?? p.name,
      } as P,
    );
  return {
    Field: bind(Field),
    TextArea: bind(TextArea),
    Select: bind(Select),
    Checkbox: bind(Checkbox),
    Summary: () => ErrorSummary({ view, labels }),
  };
}

/** A ticked checkbox's form value as a boolean. */
export const checked = (v: string | undefined) => v === "on" || v === "true";

/** An empty text field as "not given" (undefined), for optional schema fields. */
export const nonBlank = (
  v: string | undefined,
) => (v === undefined || v.trim() === "" ? undefined : v);
