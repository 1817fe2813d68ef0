/**
 * OAI-PMH 2.0 (https://www.openarchives.org/OAI/openarchivesprotocol.html) at `/oai`, GET and
 * POST: the published modules as records, in `oai_dc` and `amb` (the AMB JSON-LD record of
 * kv/catalogue/amb.ts inside one XML element), in sets by area and track, with the modules taken back as
 * deleted records (their tombstones, kv/catalogue/modules.ts). Every verb and every error code of the
 * specification; datestamps in seconds (YYYY-MM-DDThh:mm:ssZ), days accepted in `from`/`until`;
 * resumption tokens that carry where the list stopped (stateless: any process answers them).
 */
import { ambRecord } from "../kv/catalogue/amb.ts";
import { type Module, tombstones } from "../kv/catalogue/modules.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { labelOf, learningOf, licenceOf, NO_LICENCE } from "../lib/learning.ts";
import { el, empty, xmlText } from "../lib/xml.ts";
import { PUBLISHER_NAME } from "../kv/catalogue/amb.ts";
import { published } from "../kv/catalogue/catalogue_doc.ts";
import { changedAt } from "../kv/catalogue/modules.ts";
import { Hono } from "hono";
import type { AppEnv, Ctx } from "../http/router.ts";
import { limitBody } from "../http/body.ts";

/** Records or headers in one answer of a list; the rest follows a resumption token. */
export const PAGE = 100;

const OAI = "http://www.openarchives.org/OAI/2.0/";
const XSI = "http://www.w3.org/2001/XMLSchema-instance";

export const FORMATS = {
  oai_dc: {
    schema: "http://www.openarchives.org/OAI/2.0/oai_dc.xsd",
    namespace: "http://www.openarchives.org/OAI/2.0/oai_dc/",
  },
  amb: { schema: "/oai/amb.xsd", namespace: "https://w3id.org/kim/amb/" },
} as const;
type Prefix = keyof typeof FORMATS;

const VERBS = {
  Identify: { required: [], optional: [] },
  ListMetadataFormats: { required: [], optional: ["identifier"] },
  ListSets: { required: [], optional: [], exclusive: "resumptionToken" },
  GetRecord: { required: ["identifier", "metadataPrefix"], optional: [] },
  ListIdentifiers: {
    required: ["metadataPrefix"],
    optional: ["from", "until", "set"],
    exclusive: "resumptionToken",
  },
  ListRecords: {
    required: ["metadataPrefix"],
    optional: ["from", "until", "set"],
    exclusive: "resumptionToken",
  },
} as const satisfies Record<
  string,
  { required: readonly string[]; optional: readonly string[]; exclusive?: string }
>;
type Verb = keyof typeof VERBS;

class OaiError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}
const oaiError = (code: string, message: string): never => {
  throw new OaiError(code, message);
};

/** A record as harvested: a published module, or the tombstone of one taken back. */
interface Item {
  slug: string;
  /** Seconds (the datestamp's granularity). */
  stamp: number;
  sets: string[];
  module: Module | null;
}

/** A set's spec: "area:nature-based", "track:outdoor-learning". */
const setWord = (s: string) =>
  s.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase().replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "") || "none";
const setsOf = (area: string, track: string) => [
  ...(area ? ["area", `area:${setWord(area)}`] : []),
  ...(track ? ["track", `track:${setWord(track)}`] : []),
];

const seconds = (ms: number) => Math.floor(ms / 1000);
const stampText = (s: number) => iso(s * 1000).replace(/\.\d{3}Z$/, "Z");

/** `from` and `until`: a day or a second in UTC; answers seconds and the granularity. */
function parseStamp(v: string, name: string): { s: number; day: boolean } {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v);
  if (!day && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(v)) {
    oaiError(
      "badArgument",
      `${name} must be a date (YYYY-MM-DD) or a time in seconds (YYYY-MM-DDThh:mm:ssZ)`,
    );
  }
  const ms = Date.parse(day ? `${v}T00:00:00Z` : v);
  if (Number.isNaN(ms) || !iso(ms).startsWith(day ? v : v.slice(0, 19))) {
    oaiError("badArgument", `${name} is not a real date: ${v}`);
  }
  return { s: seconds(ms), day };
}

interface Selection {
  prefix: Prefix;
  from?: number;
  until?: number;
  set?: string;
  /** Where the previous answer stopped: its last datestamp and slug. */
  after?: [number, string];
  /** Items given before this answer. */
  cursor: number;
}

const b64url = (s: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(s))).replace(/\+/g, "-").replace(
    /\//g,
    "_",
  ).replace(/=+$/, "");
const fromB64url = (s: string) =>
  new TextDecoder("utf-8", { fatal: true }).decode(
    Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)),
  );

function tokenOf(s: Selection, last: Item, cursor: number): string {
  return b64url(JSON.stringify({
    p: s.prefix,
    f: s.from,
    u: s.until,
    s: s.set,
    a: [last.stamp, last.slug],
    c: cursor,
  }));
}

function readToken(token: string): Selection {
  try {
    if (!/^[A-Za-z0-9_-]{1,2000}$/.test(token)) throw new Error();
    const t = JSON.parse(fromB64url(token));
    const num = (v: unknown) => v === undefined || (Number.isInteger(v) && (v as number) >= 0);
    if (
      !(t.p in FORMATS) || !num(t.f) || !num(t.u) || !num(t.c) ||
      !(t.s === undefined || typeof t.s === "string") ||
      !(Array.isArray(t.a) && Number.isInteger(t.a[0]) && typeof t.a[1] === "string")
    ) throw new Error();
    return { prefix: t.p, from: t.f, until: t.u, set: t.s, after: [t.a[0], t.a[1]], cursor: t.c };
  } catch {
    return oaiError("badResumptionToken", "The resumption token is not one this repository gave");
  }
}

/** Every record, published and deleted, oldest datestamp first (then by slug). */
async function items(deps: Deps): Promise<Item[]> {
  const [cat, dead] = await Promise.all([published(deps), tombstones(deps.kv)]);
  const live = new Set(cat.modules.map((m) => m.slug));
  const out: Item[] = cat.modules.map((m) => ({
    slug: m.slug,
    stamp: seconds(changedAt(m)),
    sets: setsOf(m.area, m.track),
    module: m,
  }));
  for (const t of dead) {
    if (live.has(t.slug)) continue;
    out.push({ slug: t.slug, stamp: seconds(t.at), sets: setsOf(t.area, t.track), module: null });
  }
  return out.sort((a, b) => a.stamp - b.stamp || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}

function host(deps: Deps) {
  return new URL(deps.config.baseUrl).hostname;
}
const identifierOf = (deps: Deps, slug: string) => `oai:${host(deps)}:${slug}`;
function slugOfIdentifier(deps: Deps, id: string): string | null {
  const head = `oai:${host(deps)}:`;
  return id.startsWith(head) ? id.slice(head.length) : null;
}

function header(deps: Deps, it: Item): string {
  return `<header${it.module ? "" : ' status="deleted"'}>${
    el("identifier", identifierOf(deps, it.slug))
  }${el("datestamp", stampText(it.stamp))}${
    it.sets.map((s) => el("setSpec", s)).join("")
  }</header>`;
}

function dublinCore(deps: Deps, m: Module): string {
  const l = learningOf(m);
  const licence = licenceOf(l.licence);
  const url = `${deps.config.baseUrl}/modules/${m.slug}`;
  const names = m.by ? [m.by] : [];
  const parts = [
    el("dc:title", m.title),
    ...names.map((n) => el("dc:creator", n)),
    ...l.subject.map((s) => el("dc:subject", labelOf("subject", s))),
    m.area ? el("dc:subject", m.area) : "",
    m.track ? el("dc:subject", m.track) : "",
    el("dc:description", m.lede || undefined),
    el("dc:description", m.about || undefined),
    el("dc:publisher", PUBLISHER_NAME),
    m.published_at ? el("dc:date", iso(m.published_at).slice(0, 10)) : "",
    el("dc:type", "InteractiveResource"),
    ...l.type.map((t) => el("dc:type", labelOf("type", t))),
    el("dc:identifier", url),
    ...l.language.map((x) => el("dc:language", x)),
    el("dc:rights", licence ? licence.url ?? licence.name : NO_LICENCE),
  ];
  return `<oai_dc:dc xmlns:oai_dc="${FORMATS.oai_dc.namespace}" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xsi="${XSI}" xsi:schemaLocation="${FORMATS.oai_dc.namespace} ${FORMATS.oai_dc.schema}">${
    parts.join("")
  }</oai_dc:dc>`;
}

function ambXml(deps: Deps, m: Module, names: Map<number, string>): string {
  const base = deps.config.baseUrl;
  const record = ambRecord(m, {
    url: `${base}/modules/${m.slug}`,
    baseUrl: base,
    creators: m.contributors.map((id) => ({ name: names.get(id) ?? "" })).filter((c) => c.name),
    parts: (m.materials ?? []).map((x) => ({
      name: x.label,
      url: x.url.startsWith("/") ? `${base}${x.url}` : x.url,
      type: x.type ?? undefined,
      size: x.size ?? undefined,
    })),
  });
  return `<amb:record xmlns:amb="${FORMATS.amb.namespace}" type="application/ld+json">${
    xmlText(JSON.stringify(record))
  }</amb:record>`;
}

async function record(deps: Deps, it: Item, prefix: Prefix): Promise<string> {
  if (!it.module) return `<record>${header(deps, it)}</record>`;
  const names = (await published(deps)).names;
  const metadata = prefix === "oai_dc"
    ? dublinCore(deps, it.module)
    : ambXml(deps, it.module, names);
  return `<record>${header(deps, it)}<metadata>${metadata}</metadata></record>`;
}

/** The verb and its arguments, or the error the request is (badVerb, badArgument). */
function checkRequest(args: Map<string, string[]>): { verb: Verb; a: Record<string, string> } {
  const verbs = args.get("verb") ?? [];
  if (verbs.length !== 1) {
    oaiError(
      "badVerb",
      verbs.length ? "The verb argument is repeated" : "The verb argument is missing",
    );
  }
  const verb = verbs[0] as Verb;
  if (!Object.hasOwn(VERBS, verb)) oaiError("badVerb", `${verbs[0]} is not an OAI-PMH verb`);
  const rule: { required: readonly string[]; optional: readonly string[]; exclusive?: string } =
    VERBS[verb];
  const a: Record<string, string> = {};
  for (const [k, v] of args) {
    if (k === "verb") continue;
    const known = rule.required.includes(k) || rule.optional.includes(k) || rule.exclusive === k;
    if (!known) oaiError("badArgument", `${verb} takes no argument ${k}`);
    if (v.length > 1) oaiError("badArgument", `The argument ${k} is repeated`);
    a[k] = v[0];
  }
  if (rule.exclusive && a[rule.exclusive] !== undefined) {
    if (Object.keys(a).length > 1) {
      oaiError("badArgument", `${rule.exclusive} is an exclusive argument: send it alone`);
    }
    return { verb, a };
  }
  for (const k of rule.required) {
    if (a[k] === undefined) oaiError("badArgument", `${verb} needs the argument ${k}`);
  }
  return { verb, a };
}

function selection(a: Record<string, string>): Selection {
  if (a.resumptionToken !== undefined) return readToken(a.resumptionToken);
  const prefix = a.metadataPrefix as Prefix;
  if (!Object.hasOwn(FORMATS, prefix)) {
    oaiError("cannotDisseminateFormat", `This repository gives no ${a.metadataPrefix} records`);
  }
  const from = a.from !== undefined ? parseStamp(a.from, "from") : undefined;
  const until = a.until !== undefined ? parseStamp(a.until, "until") : undefined;
  if (from && until && from.day !== until.day) {
    oaiError("badArgument", "from and until must have the same granularity");
  }
  if (from && until && from.s > until.s) oaiError("badArgument", "from is after until");
  return {
    prefix,
    from: from?.s,
    // A day until is inclusive: its last second.
    until: until ? until.s + (until.day ? 86_399 : 0) : undefined,
    set: a.set,
    cursor: 0,
  };
}

async function list(
  deps: Deps,
  verb: "ListIdentifiers" | "ListRecords",
  a: Record<string, string>,
) {
  const s = selection(a);
  const all = (await items(deps)).filter((it) =>
    (s.from === undefined || it.stamp >= s.from) &&
    (s.until === undefined || it.stamp <= s.until) &&
    (s.set === undefined || it.sets.includes(s.set))
  );
  const rest = s.after
    ? all.filter((it) =>
      it.stamp > s.after![0] || (it.stamp === s.after![0] && it.slug > s.after![1])
    )
    : all;
  if (all.length === 0) oaiError("noRecordsMatch", "No records match these arguments");
  const page = rest.slice(0, PAGE);
  const done = s.cursor + page.length;
  const complete = String(s.cursor + rest.length);
  let token = "";
  if (rest.length > PAGE) {
    token = el("resumptionToken", tokenOf(s, page[page.length - 1], done), {
      completeListSize: complete,
      cursor: String(s.cursor),
    });
  } else if (s.after) {
    token = empty("resumptionToken", { completeListSize: complete, cursor: String(s.cursor) });
  }
  const body = verb === "ListIdentifiers"
    ? page.map((it) => header(deps, it)).join("")
    : (await Promise.all(page.map((it) => record(deps, it, s.prefix)))).join("");
  return `<${verb}>${body}${token}</${verb}>`;
}

async function answer(deps: Deps, verb: Verb, a: Record<string, string>): Promise<string> {
  const base = deps.config.baseUrl;
  switch (verb) {
    case "Identify": {
      const all = await items(deps);
      const earliest = all.length
        ? Math.min(...all.map((it) => it.stamp))
        : seconds(deps.clock.now());
      const h = host(deps);
      const described = /^[a-zA-Z][a-zA-Z0-9-]*(\.[a-zA-Z][a-zA-Z0-9-]*)+$/.test(h)
        ? `<description><oai-identifier xmlns="http://www.openarchives.org/OAI/2.0/oai-identifier" xmlns:xsi="${XSI}" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai-identifier http://www.openarchives.org/OAI/2.0/oai-identifier.xsd">${
          el("scheme", "oai")
        }${el("repositoryIdentifier", h)}${el("delimiter", ":")}${
          el("sampleIdentifier", `oai:${h}:pond-life`)
        }</oai-identifier></description>`
        : "";
      return `<Identify>${el("repositoryName", PUBLISHER_NAME)}${el("baseURL", `${base}/oai`)}${
        el("protocolVersion", "2.0")
      }${el("adminEmail", deps.config.teamInbox || deps.config.mailFrom)}${
        el("earliestDatestamp", stampText(earliest))
      }${el("deletedRecord", "persistent")}${
        el("granularity", "YYYY-MM-DDThh:mm:ssZ")
      }${described}</Identify>`;
    }
    case "ListMetadataFormats": {
      if (a.identifier !== undefined) await find(deps, a.identifier);
      return `<ListMetadataFormats>${
        Object.entries(FORMATS).map(([prefix, f]) =>
          `<metadataFormat>${el("metadataPrefix", prefix)}${
            el("schema", f.schema.startsWith("/") ? `${base}${f.schema}` : f.schema)
          }${el("metadataNamespace", f.namespace)}</metadataFormat>`
        ).join("")
      }</ListMetadataFormats>`;
    }
    case "ListSets": {
      if (a.resumptionToken !== undefined) {
        oaiError(
          "badResumptionToken",
          "ListSets answers in one list: it gives no resumption tokens",
        );
      }
      const { modules } = await published(deps);
      const sets = new Map<string, string>([["area", "Areas"], ["track", "Tracks"]]);
      const sorted = (xs: string[]) => [...new Set(xs.filter(Boolean))].sort();
      for (const a of sorted(modules.map((m) => m.area))) {
        sets.set(`area:${setWord(a)}`, `Area: ${a}`);
      }
      for (const t of sorted(modules.map((m) => m.track))) {
        sets.set(`track:${setWord(t)}`, `Track: ${t}`);
      }
      return `<ListSets>${
        [...sets].map(([spec, name]) => `<set>${el("setSpec", spec)}${el("setName", name)}</set>`)
          .join("")
      }</ListSets>`;
    }
    case "GetRecord": {
      const it = await find(deps, a.identifier);
      if (!Object.hasOwn(FORMATS, a.metadataPrefix)) {
        oaiError("cannotDisseminateFormat", `This repository gives no ${a.metadataPrefix} records`);
      }
      return `<GetRecord>${await record(deps, it, a.metadataPrefix as Prefix)}</GetRecord>`;
    }
    case "ListIdentifiers":
    case "ListRecords":
      return await list(deps, verb, a);
  }
}

async function find(deps: Deps, identifier: string): Promise<Item> {
  const slug = slugOfIdentifier(deps, identifier);
  const it = slug === null ? undefined : (await items(deps)).find((x) => x.slug === slug);
  if (!it) return oaiError("idDoesNotExist", `No record has the identifier ${identifier}`);
  return it;
}

async function handle(deps: Deps, c: Ctx, args: Map<string, string[]>) {
  const now = stampText(seconds(deps.clock.now()));
  const base = `${deps.config.baseUrl}/oai`;
  let request = el("request", base);
  let body: string;
  try {
    const { verb, a } = checkRequest(args);
    request = el("request", base, { verb, ...a });
    body = await answer(deps, verb, a);
  } catch (err) {
    if (!(err instanceof OaiError)) throw err;
    // badVerb and badArgument: the request element holds the base address alone.
    if (err.code === "badVerb" || err.code === "badArgument") request = el("request", base);
    body = el("error", err.message, { code: err.code });
  }
  c.header("Content-Type", "text/xml; charset=utf-8");
  return c.body(
    `<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="${OAI}" xmlns:xsi="${XSI}" xsi:schemaLocation="${OAI} http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">${
      el("responseDate", now)
    }${request}${body}</OAI-PMH>\n`,
  );
}

/** The query's arguments by name, repeated ones kept (a repeated argument is an error). */
function argsOf(pairs: Iterable<[string, string]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of pairs) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

/** The `amb` format's schema: one element holding the record's JSON-LD text. */
const AMB_XSD = `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="${FORMATS.amb.namespace}" elementFormDefault="qualified">
  <xs:element name="record">
    <xs:annotation><xs:documentation>An AMB record (https://w3id.org/kim/amb/) as JSON-LD text.</xs:documentation></xs:annotation>
    <xs:complexType><xs:simpleContent><xs:extension base="xs:string"><xs:attribute name="type" type="xs:string" fixed="application/ld+json"/></xs:extension></xs:simpleContent></xs:complexType>
  </xs:element>
</xs:schema>
`;

/** The OAI-PMH routes: another protocol's, outside the OpenAPI document (plain Hono routes). */
export function oaiRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();
  app.get("/oai", (c) => handle(deps, c, argsOf(new URL(c.req.url).searchParams)));
  // A request is a few short arguments: a body over 64 KiB is refused before it is read.
  app.post("/oai", limitBody(64 * 1024), async (c) => {
    const type = c.req.header("content-type") ?? "";
    const text = type.startsWith("application/x-www-form-urlencoded") ? await c.req.text() : "";
    return handle(deps, c, argsOf(new URLSearchParams(text)));
  });
  app.get("/oai/amb.xsd", (c) => {
    c.header("Content-Type", "application/xml; charset=utf-8");
    return c.body(AMB_XSD);
  });
  return app;
}
