/**
 * OAI-PMH 2.0 at /oai, as a harvester reads it: every answer parsed with a W3C DOM parser
 * (@xmldom/xmldom, which reports any well-formedness fault), every verb, every error code of
 * the specification, from/until at both granularities, resumption tokens through a list longer
 * than a page, and a deleted record once a module is taken back.
 */
import assert from "node:assert/strict";
import { DOMParser } from "./_dev_deps.ts";
import { setModuleField } from "../kv/catalogue/modules.ts";
import { PAGE } from "../api/oai.ts";
import { seedModule } from "./_catalogue.ts";
import { type TestApp, testApp } from "./_helpers.ts";

const OAI = "http://www.openarchives.org/OAI/2.0/";
const DC = "http://purl.org/dc/elements/1.1/";

// deno-lint-ignore no-explicit-any
type Node = any;

function parse(text: string): Node {
  const faults: string[] = [];
  const doc = new DOMParser({
    onError: (level: string, msg: string) => {
      if (level !== "warning") faults.push(msg);
    },
  }).parseFromString(text, "text/xml");
  assert.deepEqual(faults, [], text);
  const root = doc.documentElement!;
  assert.equal(root.namespaceURI, OAI);
  assert.equal(root.localName, "OAI-PMH");
  return root;
}

const all = (n: Node, name: string, ns = OAI): Node[] =>
  Array.from(n.getElementsByTagNameNS(ns, name));
const one = (n: Node, name: string, ns = OAI): Node => {
  const found = all(n, name, ns);
  assert.ok(found.length > 0, `<${name}> in the answer`);
  return found[0];
};
const text = (n: Node, name: string, ns = OAI) => one(n, name, ns).textContent as string;

async function oai(t: TestApp, query: string, method: "GET" | "POST" = "GET") {
  const r = method === "GET" ? await t.req("GET", `/oai?${query}`) : await t.req("POST", "/oai", {
    raw: query,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get("content-type") ?? "", /^text\/xml/);
  const root = parse(r.text);
  assert.match(text(root, "responseDate"), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  return root;
}

function errorCode(root: Node): string | null {
  const e = all(root, "error");
  return e.length ? e[0].getAttribute("code") : null;
}

async function setup() {
  const t = await testApp();
  const ann = await t.account("ann@example.org", { name: "Ann", roles: ["contributor"] });
  await seedModule(t, "pond-life", [ann.account.id], {
    over: {
      title: "Pond life",
      track: "Outdoor learning",
      licence: "CC-BY-4.0",
      language: ["en"],
      subject: ["s1001"],
    },
  });
  t.clock.advance(60_000);
  await seedModule(t, "repair-cafe", [ann.account.id], {
    over: { title: "Repair café", area: "technical", track: "Making and repair" },
  });
  return { t, ann };
}

Deno.test("OAI-PMH: Identify, ListMetadataFormats, ListSets, GetRecord in both formats", async () => {
  const { t } = await setup();
  await using _ = t;
  const id = await oai(t, "verb=Identify");
  assert.equal(text(id, "baseURL"), "http://test.local/oai");
  assert.equal(text(id, "protocolVersion"), "2.0");
  assert.equal(text(id, "deletedRecord"), "persistent");
  assert.equal(text(id, "granularity"), "YYYY-MM-DDThh:mm:ssZ");
  assert.ok(text(id, "adminEmail").includes("@"));
  assert.match(text(id, "earliestDatestamp"), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  assert.equal(one(id, "request").getAttribute("verb"), "Identify");
  // A body far over a request's size is refused before it is read.
  const big = await t.req("POST", "/oai", {
    raw: "verb=Identify&x=" + "a".repeat(70 * 1024),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.equal(big.status, 413);
  // POST takes the same arguments.
  assert.equal(
    text(await oai(t, "verb=Identify", "POST"), "repositoryName"),
    text(id, "repositoryName"),
  );

  const formats = await oai(t, "verb=ListMetadataFormats");
  assert.deepEqual(all(formats, "metadataPrefix").map((n) => n.textContent), ["oai_dc", "amb"]);
  const amb = await t.req("GET", "/oai/amb.xsd");
  assert.equal(amb.status, 200);
  parseXsd(amb.text);

  const sets = await oai(t, "verb=ListSets");
  const specs = all(sets, "setSpec").map((n) => n.textContent);
  for (
    const s of ["area", "track", "area:nature-based", "area:technical", "track:outdoor-learning"]
  ) {
    assert.ok(specs.includes(s), s);
  }

  const dc = await oai(
    t,
    "verb=GetRecord&identifier=oai:test.local:pond-life&metadataPrefix=oai_dc",
  );
  assert.equal(text(dc, "identifier"), "oai:test.local:pond-life");
  assert.equal(text(dc, "title", DC), "Pond life");
  assert.equal(text(dc, "rights", DC), "https://creativecommons.org/licenses/by/4.0/");
  assert.equal(text(dc, "language", DC), "en");
  assert.ok(all(dc, "subject", DC).some((n) => n.textContent === "Biology"));
  assert.ok(all(dc, "setSpec").some((n) => n.textContent === "track:outdoor-learning"));

  const rec = await oai(t, "verb=GetRecord&identifier=oai:test.local:pond-life&metadataPrefix=amb");
  const json = JSON.parse(text(rec, "record", "https://w3id.org/kim/amb/"));
  assert.equal(json.id, "http://test.local/modules/pond-life");
  assert.deepEqual(json.license, { id: "https://creativecommons.org/licenses/by/4.0/" });
});

function parseXsd(text: string) {
  const faults: string[] = [];
  new DOMParser({ onError: (l: string, m: string) => l !== "warning" && faults.push(m) })
    .parseFromString(text, "text/xml");
  assert.deepEqual(faults, []);
}

Deno.test("OAI-PMH: every error code of the specification", async () => {
  const { t } = await setup();
  await using _ = t;
  const cases: [string, string][] = [
    ["", "badVerb"],
    ["verb=Explode", "badVerb"],
    ["verb=Identify&verb=Identify", "badVerb"],
    ["verb=Identify&extra=1", "badArgument"],
    ["verb=GetRecord&identifier=oai:test.local:pond-life", "badArgument"],
    ["verb=ListRecords", "badArgument"],
    ["verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=amb", "badArgument"],
    ["verb=ListRecords&metadataPrefix=oai_dc&from=2026-13-45", "badArgument"],
    ["verb=ListRecords&metadataPrefix=oai_dc&from=yesterday", "badArgument"],
    [
      "verb=ListRecords&metadataPrefix=oai_dc&from=2026-01-01&until=2026-01-02T00:00:00Z",
      "badArgument",
    ],
    ["verb=ListRecords&metadataPrefix=oai_dc&from=2027-01-02&until=2027-01-01", "badArgument"],
    ["verb=ListRecords&resumptionToken=abc&metadataPrefix=oai_dc", "badArgument"],
    ["verb=ListRecords&resumptionToken=not-a-token", "badResumptionToken"],
    ["verb=ListIdentifiers&resumptionToken=e30", "badResumptionToken"],
    ["verb=ListSets&resumptionToken=abc", "badResumptionToken"],
    ["verb=ListRecords&metadataPrefix=marc21", "cannotDisseminateFormat"],
    [
      "verb=GetRecord&identifier=oai:test.local:pond-life&metadataPrefix=marc21",
      "cannotDisseminateFormat",
    ],
    ["verb=GetRecord&identifier=oai:test.local:nope&metadataPrefix=oai_dc", "idDoesNotExist"],
    ["verb=GetRecord&identifier=pond-life&metadataPrefix=oai_dc", "idDoesNotExist"],
    ["verb=ListMetadataFormats&identifier=oai:test.local:nope", "idDoesNotExist"],
    ["verb=ListRecords&metadataPrefix=oai_dc&from=2099-01-01", "noRecordsMatch"],
    ["verb=ListIdentifiers&metadataPrefix=oai_dc&set=area:social", "noRecordsMatch"],
  ];
  for (const [query, code] of cases) {
    const root = await oai(t, query);
    assert.equal(errorCode(root), code, query);
    const request = one(root, "request");
    if (code === "badVerb" || code === "badArgument") {
      // The request element holds the base address alone (no attributes).
      assert.equal(request.attributes.length, 0, query);
    }
    assert.equal(request.textContent, "http://test.local/oai");
  }
  // noMetadataFormats and noSetHierarchy: every record has both formats, and sets exist; the
  // repository never has cause to answer them (docs/api.md says so).
});

Deno.test("OAI-PMH: from and until, sets, resumption tokens, and a deleted record", async () => {
  const { t, ann } = await setup();
  await using _ = t;
  const ids = async (q: string) =>
    all(await oai(t, `verb=ListIdentifiers&metadataPrefix=oai_dc&${q}`), "identifier").map((n) =>
      n.textContent
    );
  const first = text(
    await oai(t, "verb=GetRecord&identifier=oai:test.local:pond-life&metadataPrefix=oai_dc"),
    "datestamp",
  );
  const second = text(
    await oai(t, "verb=GetRecord&identifier=oai:test.local:repair-cafe&metadataPrefix=oai_dc"),
    "datestamp",
  );
  assert.ok(second > first);
  assert.deepEqual(await ids(`from=${second}`), ["oai:test.local:repair-cafe"]);
  assert.deepEqual(await ids(`until=${first}`), ["oai:test.local:pond-life"]);
  // A day includes all of it, at either end.
  assert.equal((await ids(`from=${first.slice(0, 10)}&until=${second.slice(0, 10)}`)).length, 2);
  assert.deepEqual(await ids("set=area:technical"), ["oai:test.local:repair-cafe"]);

  // More records than a page: tokens lead through them all, each record once.
  for (let i = 0; i < PAGE + 20; i++) {
    await seedModule(t, `extra-${String(i).padStart(3, "0")}`, [ann.account.id]);
  }
  const seen: string[] = [];
  let root = await oai(t, "verb=ListRecords&metadataPrefix=oai_dc");
  let pages = 1;
  for (;;) {
    seen.push(...all(root, "identifier").map((n) => n.textContent));
    const token = all(root, "resumptionToken")[0];
    assert.ok(token, "a list over a page has a token");
    assert.equal(token.getAttribute("completeListSize"), String(PAGE + 22));
    if (!token.textContent) break;
    root = await oai(
      t,
      `verb=ListRecords&resumptionToken=${encodeURIComponent(token.textContent)}`,
    );
    pages++;
  }
  assert.equal(pages, 2);
  assert.equal(seen.length, PAGE + 22);
  assert.equal(new Set(seen).size, seen.length);

  // Taken back: the record stays, deleted, with a newer datestamp and no metadata.
  t.clock.advance(120_000);
  assert.ok(await setModuleField(t.kv, "pond-life", { published: false }, "owner", t.clock.now()));
  const gone = await oai(
    t,
    "verb=GetRecord&identifier=oai:test.local:pond-life&metadataPrefix=oai_dc",
  );
  const h = one(gone, "header");
  assert.equal(h.getAttribute("status"), "deleted");
  assert.ok(text(gone, "datestamp") > second);
  assert.equal(all(gone, "metadata").length, 0);
  const since = text(gone, "datestamp");
  const changed = await oai(t, `verb=ListIdentifiers&metadataPrefix=amb&from=${since}`);
  assert.deepEqual(all(changed, "identifier").map((n) => n.textContent), [
    "oai:test.local:pond-life",
  ]);
  // Published again: the record is back, not deleted.
  t.clock.advance(60_000);
  await setModuleField(t.kv, "pond-life", { published: true }, "owner", t.clock.now());
  const back = await oai(
    t,
    "verb=GetRecord&identifier=oai:test.local:pond-life&metadataPrefix=oai_dc",
  );
  assert.equal(one(back, "header").getAttribute("status"), null);
});
