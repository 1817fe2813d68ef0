/**
 * The public forms' rules live in kv/ (kv/forms/requests.ts createRequest, kv/catalogue/proposal_changes.ts
 * submitProposal), so the API and the pages refuse alike: a report naming an unknown module,
 * records and chain over their JSON size; a refused form stores nothing and does not use up
 * the hour's limit.
 */
import assert from "node:assert/strict";
import { proposal } from "./_forms_fixtures.ts";
import { seedModule } from "./_catalogue.ts";
import { dumpKv, testApp } from "./_helpers.ts";

const ORIGIN = "http://localhost";
const inboxes = { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" };
const post = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
});
const request = (o: Record<string, string> = {}) => ({
  name: "Grace Hopper",
  email: "grace@example.org",
  kind: "report",
  text: "The module's second session has a broken link.",
  ...o,
});

Deno.test("form rules: a report names a module that exists (API and page); other kinds carry none", async () => {
  await using t = await testApp({ config: inboxes });
  await seedModule(t, "pond-life", []);
  const before = await dumpKv(t.kv);
  const api = await t.req("POST", "/api/requests", { body: request({ module: "no-such" }) });
  assert.equal(api.status, 400);
  assert.deepEqual(api.body, { error: "module: no such module", field: "module" });
  const page = await t.req("POST", "/request", post(request({ module: "no-such" })));
  assert.equal(page.status, 400);
  assert.match(page.text, /<p class="error" id="f-module-error">No such module\.<\/p>/);
  assert.equal(await dumpKv(t.kv), before, "nothing stored");
  assert.equal(t.mail.sent.length, 0, "nothing mailed");

  const ok = await t.req("POST", "/api/requests", { body: request({ module: "pond-life" }) });
  assert.equal(ok.status, 202, ok.text);
  const sent = await t.req("POST", "/request", post(request({ module: "pond-life" })));
  assert.equal(sent.status, 303, sent.text);
  // A request that is not a report keeps no module, known or not.
  const plain = await t.req("POST", "/api/requests", {
    body: request({ kind: "module", module: "no-such" }),
  });
  assert.equal(plain.status, 202, plain.text);
  const list = await t.req("GET", "/api/requests", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.deepEqual(
    list.body.items.map((i: { kind: string; module: string }) => [i.kind, i.module]).sort(),
    [["module", null], ["report", "pond-life"], ["report", "pond-life"]],
  );
});

Deno.test("form rules: records over their size refused (API and page), the limit not used up", async () => {
  await using t = await testApp({ config: inboxes });
  const wide = "ж".repeat(120);
  const records = Array.from({ length: 80 }, (_, i) => ({
    seq: i + 1,
    at: "2026-01-01T00:00:00.000Z",
    actor: wide,
    action: wide,
  }));
  const before = await dumpKv(t.kv);
  // More than the 5 an hour of one origin and one address: each refused for its size, not 429.
  for (let i = 0; i < 6; i++) {
    const r = await t.req("POST", "/api/contributions", { body: proposal({ records }) });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.field, "records");
    assert.match(r.body.error, /^records: records and chain over 16000 characters of JSON$/);
  }
  const fd = new FormData();
  fd.append("name", "Ada Lovelace");
  fd.append("email", "ada@example.org");
  fd.append("title", "Analytical engines");
  fd.append("summary", "A module that explains the engine.");
  fd.append("records", new File([JSON.stringify(records)], "records.json"));
  const page = await t.req("POST", "/contribute", {
    raw: fd,
    headers: { origin: "http://test.local" },
  });
  assert.equal(page.status, 400);
  assert.match(page.text, /The records file is over 16,000 characters/);
  assert.equal(await dumpKv(t.kv), before, "nothing stored, no limit counted");
  const good = await t.req("POST", "/api/contributions", { body: proposal() });
  assert.equal(good.status, 201, good.text);
});
