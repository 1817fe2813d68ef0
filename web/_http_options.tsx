import { Checkbox, checked, Field, type FormView, given, Select, TextArea } from "./_form.tsx";
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

/** The fieldset; open when any option is set or refused. */
export function HttpOptionsFieldset({ view }: { view: FormView }) {
  const L = (name: string) => HTTP_LABELS[name];
  const set =
    Object.keys(view.values).some((k) => k.startsWith("http.") && given(view.values[k])) ||
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
        <Select
          name="http.method"
          label={L("http.method")}
          view={view}
          options={HTTP_METHODS}
          hint="GET unless your endpoint wants another, e.g. POST for a health query."
        />
        <TextArea
          name="http.headers"
          label={L("http.headers")}
          view={view}
          rows={3}
          maxlength={4000}
          hint="One a line, Name: value, e.g. Accept: application/json. Host, Cookie and Authorization cannot be set: the address names the host, and checks keep no passwords."
        />
        <TextArea
          name="http.body"
          label={L("http.body")}
          view={view}
          rows={3}
          maxlength={4000}
          hint="Sent with POST, PUT, PATCH or DELETE."
        />
        <Field
          name="http.accepted"
          label={L("http.accepted")}
          view={view}
          maxlength={80}
          hint="Codes or ranges separated by commas, as Uptime Kuma writes them, e.g. 200-299, 301. Any other status is down. Empty: the rule above."
        />
        <Field
          name="http.keyword"
          label={L("http.keyword")}
          view={view}
          maxlength={200}
          hint="A text the answer must contain, e.g. OK; down when it is missing."
        />
        <Checkbox name="http.keyword_absent" label={L("http.keyword_absent")} view={view} />
        <Checkbox name="http.keyword_case" label={L("http.keyword_case")} view={view} />
        <Field
          name="http.json_query"
          label={L("http.json_query")}
          view={view}
          maxlength={500}
          hint="Instead of a keyword: a JSONata query of a JSON answer, e.g. status or checks[0].ok (Uptime Kuma's json-query)."
        />
        <Select
          name="http.json_operator"
          label={L("http.json_operator")}
          view={view}
          options={JSON_OPERATORS.map((o): [string, string] => [o, OPERATOR_LABELS[o]])}
          hint="How the query's value compares with the expected value."
        />
        <Field
          name="http.json_expected"
          label={L("http.json_expected")}
          view={view}
          maxlength={200}
          hint="e.g. up; compared as text (as numbers for above and below)."
        />
        <Field
          name="http.max_ms"
          label={L("http.max_ms")}
          view={view}
          type="number"
          hint="Warn when the answer takes longer, e.g. 2000. Empty: 5000."
        />
        <Checkbox
          name="http.follow_redirects"
          label={L("http.follow_redirects")}
          view={view}
          hint="Ticked: a 3xx answer is the answer. Otherwise up to 5 redirects are followed, each checked as the address is."
        />
        <Field
          name="http.max_redirects"
          label={L("http.max_redirects")}
          view={view}
          type="number"
          hint="0 to 5. Empty: 5."
        />
        <Field
          name="http.cert_expiry_days"
          label={L("http.cert_expiry_days")}
          view={view}
          type="number"
          hint="An https address: warn this many days before its certificate expires, e.g. 14."
        />
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

const num = (v: string | undefined) => (given(v) === undefined ? undefined : Number(v));

/**
 * The fieldset's values as the API's `http`: only what was given (the default method and
 * comparison are not sent), or undefined when nothing was; null when a shown service had
 * options and all were emptied (`had_http`).
 */
export function httpInput(f: Record<string, string>): HttpOptions | null | undefined {
  const o: Record<string, unknown> = {};
  const method = given(f["http.method"]);
  if (method && method !== "GET") o.method = method;
  const headers = given(f["http.headers"]);
  if (headers) o.headers = headerLines(headers);
  const body = given(f["http.body"]);
  if (body) o.body = body;
  const accepted = given(f["http.accepted"]);
  if (accepted) o.accepted = accepted.split(/[\s,]+/).filter((a) => a !== "");
  const keyword = given(f["http.keyword"]);
  if (keyword) {
    o.keyword = keyword;
    if (checked(f["http.keyword_absent"])) o.keyword_absent = true;
    if (checked(f["http.keyword_case"])) o.keyword_case = false;
  }
  const query = given(f["http.json_query"]);
  if (query) {
    o.json_query = query;
    const op = given(f["http.json_operator"]);
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
