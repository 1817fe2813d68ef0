/**
 * A form's controls: the list of errors above it, each field with its label, hint and message
 * (text, text area, select, checkbox), and `fields`, which binds them to one form's view, labels
 * and schema so the browser checks the lengths and the required fields the server checks.
 */
import type { Child } from "hono/jsx";
import type { z } from "zod";
import type { FormView } from "./_form.tsx";

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
