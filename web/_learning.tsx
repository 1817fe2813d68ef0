/**
 * The licence and educational metadata on pages: the fields of the proposal form and the
 * module editor (one component, so both ask the same), the form values to the API's input and
 * back, and what a module page shows (the licence badge with its attribution to copy, the
 * metadata rows).
 */
import {
  attribution,
  labelOf,
  type Learning,
  LEARNING_LIMITS,
  licenceOf,
  LICENCES,
  LIST_FIELDS,
  type ListField,
  NO_LICENCE,
  readableDuration,
  readableRange,
  VOCABULARIES,
} from "../lib/learning.ts";
import { type FormView, nonBlank } from "./_form.tsx";
import { Field, Select } from "./_form_controls.tsx";
import { CopyField } from "./_layout.tsx";

export const LEARNING_LABELS: Record<string, string> = {
  licence: "Licence",
  who: "Who it is for, in your words",
  audience: "Made for",
  level: "Level",
  age_min: "Ages from",
  age_max: "Ages to",
  subject: "Subject",
  language: "Language",
  type: "Kind of material",
  duration: "Time it takes, in minutes",
  group_min: "Group size from",
  group_max: "Group size to",
  accessibility: "Accessibility",
};

const LIST_HINTS: Partial<Record<ListField, string>> = {
  audience: "Who uses the module: tick every one that fits.",
  level: "The stages of education it suits.",
  type: "What the module is or holds.",
  accessibility: "What the material offers people who read, see or hear differently.",
};

/** A form's name for one ticked term: `audience_teacher`. */
const boxName = (field: ListField, id: string) => `${field}_${id}`;

/** A list of terms as checkboxes in a fieldset, its error under the legend. */
function TermBoxes(props: { field: ListField; view: FormView }) {
  const { field, view } = props;
  const error = view.errors[field];
  const hint = LIST_HINTS[field];
  return (
    <fieldset class={error ? "choices invalid" : "choices"} id={`f-${field}`}>
      <legend>{LEARNING_LABELS[field]}</legend>
      {hint ? <p class="hint">{hint}</p> : null}
      {error ? <p class="error">{error}</p> : null}
      <div class="boxes">
        {VOCABULARIES[field].map((t) => {
          const name = boxName(field, t.id);
          return (
            <label class="box">
              <input type="checkbox" name={name} checked={view.values[name] === "on"} />
              {t.label}
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}

/**
 * The metadata fields of a form. `required`: the licence must be chosen (the proposal form);
 * in the editor "not stated" stays a choice.
 */
export function LearningFields(props: { view: FormView; licenceRequired?: boolean }) {
  const v = props.view;
  const num = (name: string, max: number, min = 0) => (
    <Field
      name={name}
      label={LEARNING_LABELS[name]}
      type="number"
      view={v}
      hint={`A whole number from ${min} to ${max}; leave it empty if it does not apply.`}
    />
  );
  return (
    <>
      <Select
        name="licence"
        label={LEARNING_LABELS.licence}
        view={v}
        required={props.licenceRequired}
        hint={"How others may reuse the module. Creative Commons licences let teachers share " +
          "and adapt it; CC BY asks only that they name you."}
        options={[
          ["", props.licenceRequired ? "Choose a licence" : NO_LICENCE],
          ...LICENCES.map((l) => [l.id, `${l.short}: ${l.plain}`] as [string, string]),
        ]}
      />
      <TermBoxes field="audience" view={v} />
      <TermBoxes field="level" view={v} />
      <div class="pair">
        {num("age_min", LEARNING_LIMITS.age)}
        {num("age_max", LEARNING_LIMITS.age)}
      </div>
      <TermBoxes field="subject" view={v} />
      <TermBoxes field="language" view={v} />
      <TermBoxes field="type" view={v} />
      {num("duration", LEARNING_LIMITS.duration, 1)}
      <div class="pair">
        {num("group_min", LEARNING_LIMITS.group, 1)}
        {num("group_max", LEARNING_LIMITS.group, 1)}
      </div>
      <TermBoxes field="accessibility" view={v} />
    </>
  );
}

/** A number field's value: null when empty, NaN (refused in words) when not a number. */
const whole = (v: string | undefined) => {
  const t = (v ?? "").trim();
  return t === "" ? null : /^-?[0-9]+$/.test(t) ? Number(t) : NaN;
};

/** The form's metadata fields as the API's input (every field given: the form shows all). */
export function learningInput(f: Record<string, string>): Learning {
  const lists = Object.fromEntries(
    LIST_FIELDS.map((field) => [
      field,
      VOCABULARIES[field].filter((t) => f[boxName(field, t.id)] === "on").map((t) => t.id),
    ]),
  ) as Record<ListField, string[]>;
  return {
    licence: nonBlank(f.licence) ?? null,
    ...lists,
    age_min: whole(f.age_min),
    age_max: whole(f.age_max),
    duration: whole(f.duration),
    group_min: whole(f.group_min),
    group_max: whole(f.group_max),
  };
}

/** Stored metadata as the form's values (the editor's starting point). */
export function learningValues(l: Learning): Record<string, string> {
  const out: Record<string, string> = { licence: l.licence ?? "" };
  for (const field of LIST_FIELDS) for (const id of l[field]) out[boxName(field, id)] = "on";
  for (const k of ["age_min", "age_max", "duration", "group_min", "group_max"] as const) {
    out[k] = l[k] === null ? "" : String(l[k]);
  }
  return out;
}

/** The licence as a badge linking to its deed, and the attribution to copy. */
export function LicenceBadge(props: { title: string; by: string; licence: string | null }) {
  const l = licenceOf(props.licence);
  const credit = attribution(props.title, props.by, props.licence);
  return (
    <div class="licence">
      {l?.url
        ? (
          <a class="badge open" href={l.url} rel="license">
            <span aria-hidden="true">cc</span> {l.short}
          </a>
        )
        : (
          <span class={l ? "badge closed" : "badge unknown"}>
            <span aria-hidden="true">{l ? "©" : "?"}</span> {l ? l.short : NO_LICENCE}
          </span>
        )}
      {l?.url
        ? (
          <span class="hint">
            {` You may reuse it under the ${l.name} licence, naming it as below.`}
          </span>
        )
        : (
          <span class="hint">
            {l
              ? " Ask the contributors before you reuse it."
              : " The contributors have not said how it may be reused: ask them first."}
          </span>
        )}
      {credit
        ? (
          <CopyField
            id="attribution"
            label="Attribution to copy"
            value={credit}
            copy="Copy attribution"
          />
        )
        : null}
    </div>
  );
}

/** The metadata stated, as label and words (a module page's rows, a proposal's for reviewers). */
export function learningRows(l: Learning): [label: string, value: string][] {
  const list = (field: ListField) => l[field].map((id) => labelOf(field, id)).join(", ");
  const rows: [string, string][] = [];
  const add = (label: string, value: string | null) => {
    if (value) rows.push([label, value]);
  };
  add(LEARNING_LABELS.audience, list("audience"));
  add(LEARNING_LABELS.level, list("level"));
  add("Ages", readableRange(l.age_min, l.age_max));
  add(LEARNING_LABELS.subject, list("subject"));
  add(LEARNING_LABELS.language, list("language"));
  add(LEARNING_LABELS.type, list("type"));
  add("Time it takes", l.duration !== null ? readableDuration(l.duration) : null);
  const group = readableRange(l.group_min, l.group_max);
  add("Group size", group ? `${group} people` : null);
  add(LEARNING_LABELS.accessibility, list("accessibility"));
  return rows;
}

/** The licence in words: its short name and what it asks, or that none is stated. */
export function licenceWords(licence: string | null): string {
  const l = licenceOf(licence);
  return l ? `${l.short}: ${l.plain}` : NO_LICENCE;
}

/** The metadata rows of a module page's list (only what is stated). */
export function LearningRows(props: { l: Learning }) {
  return (
    <>
      {learningRows(props.l).map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </>
  );
}
