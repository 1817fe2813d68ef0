import assert from "node:assert/strict";
import { formsPart } from "../kv/parts/forms.ts";
import { dumpKv, testApp } from "./_helpers.ts";
import { proposal } from "./_forms_fixtures.ts";

const none = { keep: new Set<number>(), remove: new Set<number>() };

Deno.test("forms part: export holds proposals with files and records, and requests", async () => {
  await using t = await testApp({ config: { teamInbox: "team@inbox.test" } });
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const records = [{ seq: 1, at: "2026-01-01T00:00:00.000Z", actor: "me", action: "start" }];
  await t.req("POST", "/api/contributions", { token, body: proposal({ records }) });
  await t.req("POST", "/api/requests", {
    body: { name: "Ada", email: "ada@example.org", kind: "tool", text: "A tool for engines" },
  });
  // Someone else's data stays out.
  await t.req("POST", "/api/contributions", { body: proposal({ email: "bob@example.org" }) });
  await t.req("POST", "/api/requests", {
    body: { name: "Bob", email: "bob@example.org", kind: "tool", text: "Bob's own request" },
  });
  const out = await formsPart.export(t.deps, account) as {
    proposals: { id: number; files: unknown[]; records: unknown[]; email: string }[];
    requests: { text: string }[];
  };
  assert.equal(out.proposals.length, 1);
  assert.equal(out.proposals[0].email, "ada@example.org");
  assert.deepEqual(out.proposals[0].files, proposal().files);
  assert.deepEqual(out.proposals[0].records, records);
  assert.deepEqual(out.requests.map((r) => r.text), ["A tool for engines"]);
  assert.deepEqual(await formsPart.counts!(t.deps, account), { contributions: 1 });
});

Deno.test("forms part: erasure deletes unpublished proposals and requests of the address", async () => {
  await using t = await testApp({ config: { teamInbox: "team@inbox.test" } });
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  await t.req("POST", "/api/contributions", { token, body: proposal() });
  await t.req("POST", "/api/contributions", { token, body: proposal({ title: "Another" }) });
  await t.req("POST", "/api/requests", {
    body: { name: "Ada", email: "ada@example.org", kind: "tool", text: "A tool for engines" },
  });
  await t.req("POST", "/api/contributions", { body: proposal({ email: "bob@example.org" }) });
  const counts = await formsPart.erase(t.deps, account, none);
  assert.deepEqual(counts, { kept: 0, unpublished: 0, deleted: 2 });
  const dump = await dumpKv(t.kv);
  const own = dump.split("\n").filter((l) =>
    /^\["(proposals|proposal_records|requests)/.test(l) && l.includes("ada@example.org")
  );
  assert.deepEqual(own, []);
  assert.ok(!dump.includes("A tool for engines"));
  assert.ok(dump.includes("bob@example.org"), "others' proposals stay");
  assert.deepEqual(await formsPart.counts!(t.deps, account), { contributions: 0 });
});

Deno.test("forms part: afterVerify confirms received proposals of the address only", async () => {
  await using t = await testApp({ config: { teamInbox: "team@inbox.test" } });
  const one = (await t.req("POST", "/api/contributions", { body: proposal() })).body.id;
  const two = (await t.req("POST", "/api/contributions", {
    body: proposal({ email: "bob@example.org" }),
  })).body.id;
  const { account } = await t.account("ada@example.org", { name: "Ada" });
  const link = { purpose: "login" as const, email: account.email, created: 0, expires: 0 };
  assert.deepEqual(await formsPart.afterVerify!(t.deps, account, link), { confirmed: 1 });
  assert.deepEqual(await formsPart.afterVerify!(t.deps, account, link), { confirmed: 0 });
  const own = await t.req("GET", `/api/contributions/${one}`, {
    token: (await t.account("x@example.org", { roles: ["reviewer"] })).token,
  });
  assert.equal(own.body.item.status, "confirmed");
  assert.equal(own.body.item.submitter.account, account.id);
  const other = await t.req("GET", `/api/contributions/${two}`, {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(other.body.item.status, "received");
});
