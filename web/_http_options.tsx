import { checked, type FormView, nonBlank } from "./_form.tsx";
import { Checkbox, Field, Select, TextArea } from "./_form_controls.tsx";
import { HTTP_METHODS, type HttpOptions, JSON_OPERATORS } from "../lib/checks/http_options.ts";

/**
 * An address check's request options and assertions on the service form (add and edit): a
 * fieldset of its own, each field with its help, named `http.<option>` as the API's refusals
 * name them, so a refusal stands beside its field. `httpInput` reads them into the API's
 * `http`, `httpValues` shows a service's options again.
 */

export const HTTP_LABELS: Record<string, string> = {
  "http.method": "Method",
  "http.headers": "Request headers",
  "http.body": "Request body",
  "http.accepted": "Accepted status codes",
  "http.keyword": "Keyword",
  "http.keyword_absent": "Alert when the keyword is present (instead of missing)",
  "http.keyword_case": "Ignore upper and lower case",
  "http.json_query": "JSON query",
  "http.json_operator": "Comparison",
  "http.json_expected": "Expected value",
  "http.max_ms": "Slow above (ms)",
  "http.follow_redirects": "Do not follow redirects",
  "http.max_redirects": "Redirects followed at most",
  "http.cert_expiry_days": "Warn days before the certificate expires",
  http: "Request and answer",
};

const OPERATOR_LABELS: Record<string, string> = {
  "==": "equals",
  "!=": "differs from",
  "<": "is below",
  "<=": "is at most",
  ">": "is above",
  ">=": "is at least",
  contains: "contains",
};

/** One control of the fieldset: its option, kind, help and limits. */
interface Control {
  name: string;
  kind: "text" | "number" | "area" | "check" | "select";
  hint?: string;
  maxlength?: number;
  options?: readonly (string | [string, string])[];
}

const CONTROLS: Control[] = [
  {
    name: "http.method",
    kind: "select",
    options: HTTP_METHODS,
    hint: "GET unless your endpoint wants another, e.g. POST for a health query.",
  },
  {
    name: "http.headers",
    kind: "area",
    maxlength: 4000,
    hint: "One a line, Name: value, e.g. Accept: application/json. Host, Cookie and " +
      "Authorization cannot be set: the address names the host, and checks keep no passwords.",
  },
  {
    name: "http.body",
    kind: "area",
    maxlength: 4000,
    hint: "Sent with POST, PUT, PATCH or DELETE.",
  },
  {
    name: "http.accepted",
    kind: "text",
    maxlength: 80,
    hint: "Codes or ranges separated by commas, as Uptime Kuma writes them, e.g. 200-299, 301. " +
      "Any other status is down. Empty: the rule above.",
  },
  {
    name: "http.keyword",
    kind: "text",
    maxlength: 200,
    hint: "A text the answer must contain, e.g. OK; down when it is missing.",
  },
  { name: "http.keyword_absent", kind: "check" },
  { name: "http.keyword_case", kind: "check" },
  {
    name: "http.json_query",
    kind: "text",
    maxlength: 500,
    hint: "Instead of a keyword: a JSONata query of a JSON answer, e.g. status or " +
      "checks[0].ok (Uptime Kuma's json-query).",
  },
  {
    name: "http.json_operator",
    kind: "select",
    options: JSON_OPERATORS.map((o): [string, string] => [o, OPERATOR_LABELS[o]]),
    hint: "How the query's value compares with the expected value.",
  },
  {
    name: "http.json_expected",
    kind: "text",
    maxlength: 200,
    hint: "e.g. up; compared as text (as numbers for above and below).",
  },
  {
    name: "http.max_ms",
    kind: "number",
    hint: "Warn when the answer takes longer, e.g. 2000. Empty: 5000.",
  },
  {
    name: "http.follow_redirects",
    kind: "check",
    hint: "Ticked: a 3xx answer is the answer. Otherwise up to 5 redirects are followed, each " +
      "checked as the address is.",
  },
  { name: "http.max_redirects", kind: "number", hint: "0 to 5. Empty: 5." },
  {
    name: "http.cert_expiry_days",
    kind: "number",
    hint: "An https address: warn this many days before its certificate expires, e.g. 14.",
  },
];

function ControlOf({ c, view }: { c: Control; view: FormView }) {
  const p = { name: c.name, label: HTTP_LABELS[c.name], view, hint: c.hint };
  if (c.kind === "check") return <Checkbox {...p} />;
  if (c.kind === "select") return <Select {...p} options={c.options!} />;
  if (c.kind === "area") return <TextArea {...p} rows={3} maxlength={c.maxlength} />;
  return <Field {...p} type={c.kind} maxlength={c.maxlength} />;
}

/** The fieldset; open when any option is set or refused. */
export function HttpOptionsFieldset({ view }: { view: FormView }) {
  const set =
    Object.keys(view.values).some((k) => k.startsWith("http.") && nonBlank(view.values[k])) ||
    Object.keys(view.errors).some((k) => k.startsWith("http"));
  return (
    <details open={set}>
      <summary>Request and answer (optional)</summary>
      <fieldset>
        <legend>How the address is asked, and what its answer must hold</legend>
        <p class="hint">
          Without these, the address is asked with GET: 2xx and 3xx are up, 4xx warns, 5xx is down.
          Each check runs within 10 seconds and at most every 5 minutes.
        </p>
        {CONTROLS.map((c) => <ControlOf c={c} view={view} />)}
      </fieldset>
    </details>
  );
}

/** Headers of the text area: one `Name: value` a line. */
function headerLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    const at = line.indexOf(":");
    if (at < 0) out[line.trim()] = "";
    else out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

const num = (v: string | undefined) => (nonBlank(v) === undefined ? undefined : Number(v));

/**
 * The fieldset's values as the API's `http`: only what was given (the default method and
 * comparison are not sent), or undefined when nothing was; null when a shown service had
 * options and all were emptied (`had_http`).
 */
export function httpInput(f: Record<string, string>): HttpOptions | null | undefined {
  const o: Record<string, unknown> = {};
  const method = nonBlank(f["http.method"]);
  if (method && method !== "GET") o.method = method;
  const headers = nonBlank(f["http.headers"]);
  if (headers) o.headers = headerLines(headers);
  const body = nonBlank(f["http.body"]);
  if (body) o.body = body;
  const accepted = nonBlank(f["http.accepted"]);
  if (accepted) o.accepted = accepted.split(/[\s,]+/).filter((a) => a !== "");
  const keyword = nonBlank(f["http.keyword"]);
  if (keyword) {
    o.keyword = keyword;
    if (checked(f["http.keyword_absent"])) o.keyword_absent = true;
    if (checked(f["http.keyword_case"])) o.keyword_case = false;
  }
  const query = nonBlank(f["http.json_query"]);
  if (query) {
    o.json_query = query;
    const op = nonBlank(f["http.json_operator"]);
    if (op && op !== "==") o.json_operator = op;
    o.json_expected = f["http.json_expected"] ?? "";
  }
  for (const k of ["max_ms", "max_redirects", "cert_expiry_days"]) {
    const n = num(f[`http.${k}`]);
    if (n !== undefined) o[k] = n;
  }
  if (checked(f["http.follow_redirects"])) o.follow_redirects = false;
  if (Object.keys(o).length > 0) return o as HttpOptions;
  return f.had_http === "1" ? null : undefined;
}

/** A service's options as the fieldset's values. */
export function httpValues(o: HttpOptions | null | undefined): Record<string, string> {
  if (!o) return {};
  const v: Record<string, string> = {};
  if (o.method) v["http.method"] = o.method;
  if (o.headers) {
    v["http.headers"] = Object.entries(o.headers).map(([k, x]) => `${k}: ${x}`).join("\n");
  }
  if (o.body) v["http.body"] = o.body;
  if (o.accepted) v["http.accepted"] = o.accepted.join(", ");
  if (o.keyword) v["http.keyword"] = o.keyword;
  if (o.keyword_absent) v["http.keyword_absent"] = "on";
  if (o.keyword_case === false) v["http.keyword_case"] = "on";
  if (o.json_query) v["http.json_query"] = o.json_query;
  if (o.json_operator) v["http.json_operator"] = o.json_operator;
  if (o.json_expected !== undefined) v["http.json_expected"] = o.json_expected;
  if (o.max_ms !== undefined) v["http.max_ms"] = String(o.max_ms);
  if (o.follow_redirects === false) v["http.follow_redirects"] = "on";
  if (o.max_redirects !== undefined) v["http.max_redirects"] = String(o.max_redirects);
  if (o.cert_expiry_days !== undefined) v["http.cert_expiry_days"] = String(o.cert_expiry_days);
  return v;
}
