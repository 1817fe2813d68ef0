import type { Account } from "../accounts/accounts.ts";
import {
  countServices,
  graceMinutes,
  hcHeartbeat,
  importServices,
  INTERVALS,
  MAX_SERVICES,
  MAX_TAG,
  MAX_TAGS,
  type NewService,
  periodFields,
} from "./commands.ts";
import { uniqueTags, validSchedule, validTarget } from "./rules.ts";
import { listWindows } from "./maintenance.ts";
import { defaultChannels } from "../alerts/channels.ts";
import { type ServiceView, serviceView } from "./state.ts";
import { codeHash, hookEntries, pushHash } from "./heartbeats.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, DomainError, invalid } from "../../lib/errors.ts";
import { cutChars, HC_SLUG_RE } from "../../lib/text.ts";
import {
  HTTP_METHODS,
  type HttpMethod,
  type HttpOptions,
  JSON_OPERATORS,
  type JsonOperator,
  MAX_BODY,
  MAX_KEYWORD,
  optionProblems,
} from "../../lib/checks/http_options.ts";

/**
 * Bringing checks along: a Healthchecks project (the JSON of its `GET /api/v3/checks/`) or an
 * Uptime Kuma backup (`{version, notificationList, monitorList}`) read into a plan of what
 * would be created and what cannot be, then created in one atomic within the account's limit
 * (kv/service/commands.ts `importServices`). Holds no keys.
 */

/** One service the import would create, as the preview shows it. */
interface PlannedService {
  /** Its name in the export. */
  from: string;
  input: NewService;
  /** What changed on the way (a period rounded to an allowed interval, a name cut). */
  notes: string[];
}

export interface ImportPlan {
  source: "healthchecks" | "uptime-kuma";
  create: PlannedService[];
  /** What cannot be created, each with the reason. */
  cannot: { from: string; why: string }[];
}

/** Items read from an export at most (a larger one is refused whole). */
const MAX_ITEMS = 500;

const MINUTES = INTERVALS as readonly number[];
/** A heartbeat's period and grace: 60 s to 365 days, as Healthchecks takes them. */
const PERIOD_MIN = 60;
const PERIOD_MAX = 31_536_000;

/**
 * A checked kind's interval for a period in seconds: the allowed interval nearest above it
 * (the largest when over it); under 5 minutes the note names the floor of the intervals.
 */
function intervalOf(seconds: number, notes: string[]): number {
  const minutes = seconds / 60;
  const fit = MINUTES.find((m) => m >= minutes) ?? MINUTES[MINUTES.length - 1];
  if (fit !== minutes) {
    const why = minutes < MINUTES[0] ? " (checks run every 5 minutes at most)" : "";
    notes.push(`period ${period(seconds)} became ${period(fit * 60)}${why}`);
  }
  return fit;
}

/** A heartbeat's period in seconds, exactly within 60 s to 365 days (else noted at the edge). */
function exactPeriod(seconds: number, what: string, notes: string[]): number {
  const kept = Math.min(PERIOD_MAX, Math.max(PERIOD_MIN, Math.round(seconds)));
  if (kept !== seconds) notes.push(`${what} ${period(seconds)} became ${period(kept)}`);
  return kept;
}

/** A period as a person reads it: 90 s, 5 min, 2 h, 1 day. */
function period(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? "1 day" : `${seconds / 86_400} days`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** A name within this service's 2 to 80 characters. */
function nameOf(raw: unknown, fallback: string, notes: string[]): string {
  let name = typeof raw === "string" ? raw.replace(/\s+/g, " ").trim() : "";
  if (name.length < 2) {
    name = fallback;
    notes.push(`no name: named ${fallback}`);
  }
  const cut = cutChars(name, 80);
  if (cut !== name) notes.push("name cut to 80 characters");
  return cut;
}

const textOf = (v: unknown) => typeof v === "string" ? v : "";
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A description within this service's one line of 160 characters. */
function whatOf(desc: string, notes: string[]): string {
  const line = desc.replace(/\s+/g, " ").trim();
  const cut = cutChars(line, 160);
  if (cut !== line) notes.push("description cut to 160 characters");
  return cut;
}

/**
 * Tags as this service keeps them: one word each (inner spaces become "-"), at most MAX_TAG
 * characters, no repeats, at most MAX_TAGS; what had to change is noted.
 */
function tagsOf(raw: string[], notes: string[]): string[] {
  const words = raw.map((t) => t.trim()).filter((t) => t !== "").map((t) => {
    // deno-lint-ignore no-control-regex
    const word = t.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, "-");
    if (word !== t) notes.push(`tag "${cutChars(t, MAX_TAG)}" became "${cutChars(word, MAX_TAG)}"`);
    return word;
  });
  const cut = words.map((w) => cutChars(w, MAX_TAG));
  if (cut.some((w, i) => w !== words[i])) notes.push(`tags cut to ${MAX_TAG} characters`);
  const unique = uniqueTags(cut);
  if (unique.length > MAX_TAGS) {
    notes.push(`${unique.length - MAX_TAGS} tags past ${MAX_TAGS} dropped`);
  }
  return unique.slice(0, MAX_TAGS);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Healthchecks check (API v1 to v3, read-write or read-only key) as a heartbeat. */
function healthchecksItem(c: Record<string, unknown>, i: number): PlannedService | string {
  const notes: string[] = [];
  const slug = typeof c.slug === "string" && HC_SLUG_RE.test(c.slug) ? c.slug : undefined;
  const name = nameOf(c.name, slug ?? `check ${i + 1}`, notes);
  const input: NewService = {
    ...hcHeartbeat(name, []),
    what: whatOf(textOf(c.desc), notes),
    tags: tagsOf(textOf(c.tags).split(" "), notes),
  };
  if (slug !== undefined) input.slug = slug;
  // The UUID is kept (its /ping address then only changes its base); a read-only key's
  // export has none, nor its ping URL: a new one is made.
  const uuid = typeof c.uuid === "string"
    ? c.uuid
    : textOf(c.ping_url).match(/([0-9a-f-]{36})$/i)?.[1];
  if (uuid && UUID.test(uuid)) input.code = uuid.toLowerCase();
  else notes.push("no UUID in the export (a read-only key): a new one is made");
  if (c.methods === "POST") input.methods = "POST";
  const grace = exactPeriod(typeof c.grace === "number" ? c.grace : 3600, "grace", notes);
  input.grace_s = grace;
  if (typeof c.schedule === "string" && c.schedule.trim() !== "") {
    try {
      input.schedule = validSchedule(
        "webhook",
        c.schedule,
        textOf(c.tz) || "UTC",
        graceMinutes(grace),
      );
    } catch (err) {
      if (err instanceof DomainError) return err.message;
      throw err;
    }
  } else {
    const timeout = typeof c.timeout === "number" && c.timeout > 0 ? c.timeout : 86_400;
    Object.assign(input, periodFields(exactPeriod(timeout, "period", notes)));
    input.interval_grace = graceMinutes(grace);
  }
  if (typeof c.manual_resume === "boolean") input.manual_resume = c.manual_resume;
  if (textOf(c.channels) !== "") {
    notes.push("integrations not kept: it alerts your channels for new services");
  }
  if (c.status === "paused") {
    input.paused = true;
    notes.push("was paused: imported paused");
  }
  return { from: textOf(c.name) || slug || `check ${i + 1}`, input, notes };
}

/** Uptime Kuma's monitor types and what they become here. */
const KUMA_URL_TYPES = ["http", "keyword", "json-query"];

/** An Uptime Kuma monitor as a service of this kind, or why it cannot be one. */
function kumaItem(m: Record<string, unknown>, i: number): PlannedService | string {
  const notes: string[] = [];
  const type = textOf(m.type);
  const name = nameOf(m.name, `monitor ${i + 1}`, notes);
  const tags = Array.isArray(m.tags)
    ? m.tags.flatMap((t) => isObject(t) && typeof t.name === "string" ? [t.name] : [])
    : [];
  const seconds = typeof m.interval === "number" && m.interval > 0 ? m.interval : 60;
  const retries = typeof m.maxretries === "number" ? m.maxretries : 0;
  const input: NewService = {
    name,
    what: whatOf(textOf(m.description), notes),
    tags: tagsOf(tags, notes),
    group: "Public",
    place: null,
    interval: 60,
    alerts: true,
    kind: "webhook",
    check: "webhook:",
    hint: null,
    channels: [],
    threshold: Math.min(5, Math.max(1, retries + 1)),
  };
  if (retries + 1 > 5) notes.push(`${retries} retries became 4 (5 failed checks before an alert)`);
  if (type === "push") {
    Object.assign(input, periodFields(exactPeriod(seconds, "period", notes)));
    if (typeof m.pushToken === "string" && m.pushToken !== "") input.push = pushHash(m.pushToken);
    else notes.push("no push token in the export: make one on its page");
  } else if (KUMA_URL_TYPES.includes(type)) {
    const url = textOf(m.url);
    if (!/^https?:\/\//i.test(url)) return "no http(s) address";
    input.check = `url:${url}`;
    input.interval = intervalOf(seconds, notes);
    const http = kumaHttp(m, type, notes);
    if (http === null) return `its ${type} condition cannot be read`;
    if (Object.keys(http).length) input.http = http;
  } else if (type === "port") {
    if (!textOf(m.hostname) || typeof m.port !== "number") return "no host or port";
    input.check = `tcp:${textOf(m.hostname)}:${m.port}`;
    input.interval = intervalOf(seconds, notes);
  } else {return `a ${type || "typeless"} monitor: this service checks http(s), TCP ports, ` +
      "TLS certificates, MCP servers and heartbeats";}
  if (m.active === false || m.active === 0) {
    input.paused = true;
    notes.push("was paused: imported paused");
  }
  return { from: textOf(m.name) || `monitor ${i + 1}`, input, notes };
}

/** Kuma's `headers`: a JSON object of strings (a text in its export), or null. */
function kumaHeaders(raw: unknown): Record<string, string> | null {
  let v = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return null;
    try {
      v = JSON.parse(raw);
    } catch {
      return null;
    }
  }
  if (!isObject(v)) return null;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === "string") out[k] = x;
  return out;
}

/**
 * A Kuma http, keyword or json-query monitor's request and conditions as an address check's
 * options (lib/checks/http_options.ts), what cannot come over noted; null when its keyword or
 * query is missing.
 */
function kumaHttp(m: Record<string, unknown>, type: string, notes: string[]): HttpOptions | null {
  const o: HttpOptions = {};
  const method = textOf(m.method).toUpperCase();
  if (method && method !== "GET") {
    if ((HTTP_METHODS as readonly string[]).includes(method)) o.method = method as HttpMethod;
    else notes.push(`checked with GET, not ${method}`);
  }
  const headers = kumaHeaders(m.headers);
  if (headers) {
    for (const [name, value] of Object.entries(headers)) {
      const why = optionProblems({ headers: { [name]: value } }).headers;
      if (why) notes.push(`header ${name.slice(0, 40)} not kept: ${why}`);
      else (o.headers ??= {})[name] = value;
    }
  }
  if (typeof m.body === "string" && m.body !== "") {
    if (["POST", "PUT", "PATCH", "DELETE"].includes(o.method ?? "GET")) {
      o.body = m.body.slice(0, MAX_BODY);
      if (m.body.length > MAX_BODY) notes.push(`body cut to ${MAX_BODY} characters`);
    } else notes.push(`body not sent: a ${o.method ?? "GET"} request has none`);
  }
  const codes = Array.isArray(m.accepted_statuscodes)
    ? m.accepted_statuscodes.filter((c): c is string => typeof c === "string")
    : [];
  if (codes.length && !optionProblems({ accepted: codes }).accepted) o.accepted = codes;
  if (type === "keyword") {
    if (typeof m.keyword !== "string" || m.keyword === "") return null;
    o.keyword = m.keyword.slice(0, MAX_KEYWORD);
    if (m.invertKeyword === true || m.invertKeyword === 1) o.keyword_absent = true;
  }
  if (type === "json-query") {
    if (typeof m.jsonPath !== "string" || m.jsonPath === "") return null;
    o.json_query = m.jsonPath;
    const op = textOf(m.jsonPathOperator) || "==";
    if ((JSON_OPERATORS as readonly string[]).includes(op)) o.json_operator = op as JsonOperator;
    else notes.push(`comparison ${op} became ==`);
    o.json_expected = m.expectedValue == null ? "" : String(m.expectedValue);
    const why = optionProblems({ json_query: o.json_query, json_expected: o.json_expected })
      .json_query;
    if (why) return null;
  }
  if (typeof m.maxredirects === "number") {
    if (m.maxredirects === 0) o.follow_redirects = false;
    else if (m.maxredirects > 5) notes.push(`${m.maxredirects} redirects became 5 at most`);
    else o.max_redirects = m.maxredirects;
  }
  if (typeof m.timeout === "number" && m.timeout > 10) {
    notes.push(`timeout ${m.timeout} s became 10 s (every check's limit here)`);
  }
  if (m.expiryNotification === true || m.expiryNotification === 1) o.cert_expiry_days = 14;
  if (m.ignoreTls === true || m.ignoreTls === 1) notes.push("TLS errors are not ignored here");
  if (m.upsideDown === true || m.upsideDown === 1) notes.push("upside-down mode is not kept");
  if (textOf(m.basic_auth_user) || textOf(m.authMethod) && textOf(m.authMethod) !== "null") {
    notes.push("its credentials are not kept: checks keep no secrets");
  }
  return o;
}

/** Whether a kept UUID or push token names a service already (an export imported twice). */
async function taken(kv: Deno.Kv, input: NewService): Promise<boolean> {
  const hashes = [input.code ? codeHash(input.code) : null, input.push ?? null]
    .filter((h) => h !== null);
  if (hashes.length === 0) return false;
  return (await hookEntries(kv, hashes)).some((e) => e.value !== null);
}

/**
 * Reads an export (already parsed JSON) into a plan: Healthchecks' `{checks: [...]}` or Uptime
 * Kuma's `{monitorList: [...]}`. Checked targets are validated as on creation (an address this
 * account may not watch cannot be imported). Past the account's free places, the rest cannot.
 */
export async function planImport(deps: Deps, me: Account, data: unknown): Promise<ImportPlan> {
  const isHc = isObject(data) && Array.isArray(data.checks);
  const isKuma = isObject(data) && Array.isArray(data.monitorList);
  if (!isHc && !isKuma) {
    invalid(
      "data: not an export this service reads: a Healthchecks project's GET /api/v3/checks/ " +
        "answer ({checks: [...]}) or an Uptime Kuma backup ({monitorList: [...]})",
      "data",
    );
  }
  const items = (isHc ? data.checks : data.monitorList) as unknown[];
  if (items.length > MAX_ITEMS) {
    invalid(`data: at most ${MAX_ITEMS} checks or monitors at once`, "data");
  }
  const plan: ImportPlan = {
    source: isHc ? "healthchecks" : "uptime-kuma",
    create: [],
    cannot: [],
  };
  let free = MAX_SERVICES - await countServices(deps.kv, me.id);
  // A UUID or push token names one service: a second item naming it is not made.
  const named = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (!isObject(item)) {
      plan.cannot.push({ from: `item ${i + 1}`, why: "not an object" });
      continue;
    }
    const made = isHc ? healthchecksItem(item, i) : kumaItem(item, i);
    const from = typeof made === "string" ? textOf(item.name) || `item ${i + 1}` : made.from;
    let why = typeof made === "string" ? made : null;
    const ids = typeof made === "string"
      ? []
      : [made.input.code, made.input.push].filter((id): id is string => typeof id === "string");
    if (why === null && ids.some((id) => named.has(id))) {
      why = isHc
        ? "its UUID is an earlier check's of this export"
        : "its push token is an earlier monitor's of this export";
    }
    ids.forEach((id) => named.add(id));
    if (why === null && typeof made !== "string" && await taken(deps.kv, made.input)) {
      why = made.input.code && !made.input.push
        ? "its UUID is a check here already"
        : "its UUID or push token is a service here already";
    }
    if (why === null && typeof made !== "string" && made.input.check !== "webhook:") {
      try {
        const target = await validTarget(deps, me, made.input.check);
        Object.assign(made.input, { kind: target.kind, check: target.check, hint: target.hint });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        why = err.message.replace(/^check: /, "");
      }
    }
    if (why === null && free <= 0) why = `over the limit of ${MAX_SERVICES} services`;
    if (why !== null || typeof made === "string") {
      plan.cannot.push({ from, why: why ?? "unknown" });
      continue;
    }
    free--;
    plan.create.push(made);
  }
  return plan;
}

/**
 * Creates what a plan would, in one atomic; answers the new services' items. Each alerts the
 * channels ticked "use for new services", as a service added by hand does.
 */
export async function runImport(
  deps: Deps,
  me: Account,
  plan: ImportPlan,
): Promise<ServiceView[]> {
  if (plan.create.length === 0) conflict("nothing to import");
  const channels = await defaultChannels(deps.kv, me.id);
  const made = await importServices(
    deps,
    me.id,
    plan.create.map((p) => ({ ...p.input, channels })),
  );
  const windows = await listWindows(deps.kv, me.id);
  const now = deps.clock.now();
  return made.map((s) => serviceView(s, null, now, windows));
}
