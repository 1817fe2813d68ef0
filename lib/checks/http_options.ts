import jsonata from "jsonata";

/**
 * The options of an address check (url:), as Uptime Kuma's http, keyword and json-query
 * monitors have them: the request (method, headers, body, redirects) and the assertions on the
 * answer (accepted status codes, a keyword present or absent, a JSON query with an expected
 * value, a response-time limit, certificate expiry days). Pure: the rules of what may be set
 * (`optionProblems`, every target rule kept: no header that names another host or carries
 * credentials) and the judging of an answer in plain words (`judgeAnswer`). lib/checks/url.ts
 * sends the request.
 */

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = typeof HTTP_METHODS[number];
export const JSON_OPERATORS = ["==", "!=", "<", "<=", ">", ">=", "contains"] as const;
export type JsonOperator = typeof JSON_OPERATORS[number];

export interface HttpOptions {
  /** Default GET. */
  method?: HttpMethod;
  /** Request headers, by name (no Host, framing or credential headers). */
  headers?: Record<string, string>;
  /** Request body (POST, PUT, PATCH, DELETE). */
  body?: string;
  /** Accepted status codes as Kuma writes them: "200-299", "404"; absent: 1xx-3xx ok, 4xx warn, 5xx off. */
  accepted?: string[];
  /** A keyword the body must contain (or, `keyword_absent`, must not). */
  keyword?: string;
  keyword_absent?: boolean;
  /** Default true: the keyword's case counts, as in Kuma. */
  keyword_case?: boolean;
  /** A JSONata query of the body (Kuma's json-query), compared with `json_expected`. */
  json_query?: string;
  json_operator?: JsonOperator;
  json_expected?: string;
  /** Warn when the answer takes longer than this many ms. */
  max_ms?: number;
  /** Default true: follow redirects (at most `max_redirects`, at most 5). */
  follow_redirects?: boolean;
  max_redirects?: number;
  /** https: warn when the certificate expires within this many days. */
  cert_expiry_days?: number;
}

const MAX_HEADERS = 20;
export const MAX_HEADER_VALUE = 1000;
export const MAX_BODY = 4000;
export const MAX_KEYWORD = 200;
export const MAX_QUERY = 500;
/** Bytes of the answer's body read for a keyword or a JSON query. */
export const BODY_READ = 256 * 1024;

/** Headers the check writes itself, or that would reach another host or carry credentials. */
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "expect",
  "authorization",
  "proxy-authorization",
  "cookie",
  "forwarded",
  "x-forwarded-host",
  "x-forwarded-for",
  "x-real-ip",
  "x-original-url",
  "x-rewrite-url",
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const RANGE = /^([1-5][0-9]{2})(?:-([1-5][0-9]{2}))?$/;

/** Why each option is refused, by option name; empty when all may be set. */
export function optionProblems(o: HttpOptions): Record<string, string> {
  const out: Record<string, string> = {};
  const headers = Object.entries(o.headers ?? {});
  if (headers.length > MAX_HEADERS) out.headers = `at most ${MAX_HEADERS} headers`;
  for (const [name, value] of headers) {
    if (!TOKEN.test(name)) {
      out.headers = `"${name.slice(0, 40)}" is not a header name (letters, digits and - only)`;
    } else if (FORBIDDEN_HEADERS.has(name.toLowerCase())) {
      out.headers = /auth|cookie/i.test(name)
        ? `${name} is not sent: checks keep no credentials (watch an address that answers without them)`
        : `${name} is set by the check itself and cannot be changed (the address names the host)`;
    } else if (name.toLowerCase().startsWith("proxy-") || name.toLowerCase().startsWith("sec-")) {
      out.headers = `${name} cannot be set`;
    } else if (typeof value !== "string" || /[\r\n\0]/.test(value)) {
      out.headers = `the value of ${name} must be one line`;
    } else if (value.length > MAX_HEADER_VALUE) {
      out.headers = `the value of ${name} has at most ${MAX_HEADER_VALUE} characters`;
    }
  }
  const method = o.method ?? "GET";
  if (
    o.body !== undefined && o.body !== "" && !["POST", "PUT", "PATCH", "DELETE"].includes(method)
  ) {
    out.body = `a ${method} request has no body; choose POST, PUT, PATCH or DELETE`;
  }
  for (const a of o.accepted ?? []) {
    const m = a.match(RANGE);
    if (!m || (m[2] && Number(m[2]) < Number(m[1]))) {
      out.accepted = `"${a.slice(0, 20)}" is not a status code or range such as 200-299`;
    }
  }
  if (o.keyword !== undefined && o.json_query !== undefined) {
    out.json_query = "a check has a keyword or a JSON query, not both";
  }
  if ((o.keyword_absent !== undefined || o.keyword_case !== undefined) && o.keyword === undefined) {
    out.keyword = "keyword_absent and keyword_case go with a keyword";
  }
  if (o.json_query !== undefined) {
    try {
      jsonata(o.json_query);
    } catch (err) {
      out.json_query = `not a JSONata query (${(err as { message?: string }).message ?? "error"})`;
    }
    if (o.json_expected === undefined) out.json_expected = "the value the query must give";
  } else if (o.json_expected !== undefined || o.json_operator !== undefined) {
    out.json_query = "json_expected and json_operator go with a JSON query";
  }
  if (method === "HEAD" && (o.keyword !== undefined || o.json_query !== undefined)) {
    out.method = "a HEAD answer has no body to look for a keyword or a JSON value in";
  }
  if (o.follow_redirects === false && o.max_redirects !== undefined) {
    out.max_redirects = "redirects are not followed: leave max_redirects out";
  }
  return out;
}

/** Whether a status is among the accepted ranges. */
export function accepts(ranges: string[], status: number): boolean {
  return ranges.some((r) => {
    const m = r.match(RANGE);
    if (!m) return false;
    const lo = Number(m[1]);
    const hi = m[2] ? Number(m[2]) : lo;
    return status >= lo && status <= hi;
  });
}

/** A text quoted for a result: short, one line. */
const quoted = (s: string) => {
  const line = s.replace(/\s+/g, " ").trim();
  return `'${line.length > 40 ? line.slice(0, 39) + "…" : line}'`;
};

/** What the check says of an answer that failed an assertion; null when none failed. */
export interface AnswerVerdict {
  state: "ok" | "warn" | "off";
  status: string;
}

/**
 * A JSONata query of a body, timeboxed (100 ms, depth 100) so that no query holds the process;
 * the value it gives, or why there is none, in words.
 */
async function queryJson(
  body: string,
  query: string,
): Promise<{ value: string } | { error: string }> {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return { error: "the body is not JSON" };
  }
  let value: unknown;
  try {
    const expr = jsonata(query);
    const started = performance.now();
    let depth = 0;
    const watch = () => {
      if (depth > 100 || performance.now() - started > 100) {
        throw { message: "the query takes too long" };
      }
    };
    expr.assign("__evaluate_entry", () => {
      depth++;
      watch();
    });
    expr.assign("__evaluate_exit", () => {
      depth--;
      watch();
    });
    value = await expr.evaluate(data);
  } catch (err) {
    return { error: `the JSON query failed (${(err as { message?: string }).message ?? "error"})` };
  }
  if (value === undefined || value === null) return { error: "the JSON query found nothing" };
  if (typeof value === "object") {
    return { error: "the JSON query gave a list or an object, not one value" };
  }
  return { value: String(value) };
}

/** Kuma's comparison of a query's value with the expected one. */
export function compare(value: string, op: JsonOperator, expected: string): boolean {
  switch (op) {
    case "==":
      return value === expected;
    case "!=":
      return value !== expected;
    case "contains":
      return value.includes(expected);
    default: {
      const a = Number(value), b = Number(expected);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return op === "<" ? a < b : op === "<=" ? a <= b : op === ">" ? a > b : a >= b;
    }
  }
}

const OPERATOR_WORDS: Record<JsonOperator, string> = {
  "==": "expected",
  "!=": "expected anything but",
  "<": "expected below",
  "<=": "expected at most",
  ">": "expected above",
  ">=": "expected at least",
  contains: "expected it to contain",
};

/**
 * The body assertions of an answer (keyword, JSON query), in plain words: null when they hold
 * (or there are none), else the failed one's words.
 */
export async function bodyProblem(o: HttpOptions, body: string): Promise<string | null> {
  if (o.keyword !== undefined) {
    const caseSensitive = o.keyword_case ?? true;
    const found = caseSensitive
      ? body.includes(o.keyword)
      : body.toLowerCase().includes(o.keyword.toLowerCase());
    if (o.keyword_absent && found) return `the body contains ${quoted(o.keyword)}`;
    if (!o.keyword_absent && !found) return `the body does not contain ${quoted(o.keyword)}`;
    return null;
  }
  if (o.json_query !== undefined) {
    const got = await queryJson(body, o.json_query);
    if ("error" in got) return got.error;
    const op = o.json_operator ?? "==";
    if (compare(got.value, op, o.json_expected ?? "")) return null;
    return `${o.json_query} is ${quoted(got.value)}, ${OPERATOR_WORDS[op]} ${
      quoted(o.json_expected ?? "")
    }`;
  }
  return null;
}

/** Whether an answer's body must be read for the assertions. */
export const readsBody = (o: HttpOptions | undefined) =>
  o !== undefined && (o.keyword !== undefined || o.json_query !== undefined);

/** "200-299, 404": the accepted ranges as the result names them. */
export const acceptedText = (ranges: string[]) => ranges.join(", ");
