import assert from "node:assert/strict";
import { DAY, MINUTE } from "../lib/clock.ts";
import { expireReceived } from "../kv/catalogue/proposals.ts";
import { MINUTELY, runJobs } from "../jobs/mod.ts";
import { proposal } from "./_forms_fixtures.ts";
import { dumpKv, type TestApp, testApp } from "./_helpers.ts";

const inboxes = { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" };
const SUBMITTER = "ada@example.org";

async function trailActions(t: TestApp): Promise<string[]> {
  const out: string[] = [];
  for await (const e of t.kv.list<{ action: string; subject: string }>({ prefix: ["trail"] })) {
    out.push(`${e.value.action} ${e.value.subject}`);
  }
  return out;
}

/** A proposal confirmed through the mailed link; answers the submitter's token. */
async function confirmed(t: TestApp, o: Record<string, unknown> = {}) {
  const r = await t.req("POST", "/api/contributions", { body: proposal(o) });
  assert.equal(r.status, 201, r.text);
  const email = (o.email as string | undefined) ?? SUBMITTER;
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken(email)}`);
  assert.equal(v.status, 200, v.text);
  return { id: r.body.id as number, token: v.body.token as string };
}

async function team(t: TestApp) {
  const rev = await t.account("rev@example.org", { name: "Reviewer", roles: ["reviewer"] });
  const owner = await t.account("own@example.org", { name: "Owner", roles: ["owner"] });
  return { rev: rev.token, owner: owner.token };
}

const patch = (t: TestApp, id: number, token: string, body: unknown) =>
  t.req("PATCH", `/api/contributions/${id}`, { token, body });

Deno.test("contributions: without a session: received, link mailed, opening it confirms", async () => {
  await using t = await testApp({ config: inboxes });
  const r = await t.req("POST", "/api/contributions", { body: proposal() });
  assert.equal(r.status, 201, r.text);
  const id1 = r.body.id;
  assert.ok(Number.isSafeInteger(id1) && id1 > 0);
  assert.deepEqual(r.body, {
    ok: true,
    id: id1,
    status: "received",
    status_url: `http://test.local/contribute/status?id=${id1}`,
  });
  const mail = t.mail.last(SUBMITTER)!;
  assert.match(mail.text, /^http:\/\/test\.local\/me\?verify=[A-Za-z0-9_-]+$/m);
  assert.match(mail.text, /7 days/);
  assert.match(
    mail.text,
    new RegExp(`^http://test\\.local/contribute/status\\?id=${id1}&key=[A-Za-z0-9_-]+$`, "m"),
  );
  assert.equal(t.mail.last("team@inbox.test"), undefined, "team waits for the confirmation");
  // A second proposal before the link is opened: one link confirms both.
  const r2 = await t.req("POST", "/api/contributions", { body: proposal({ title: "Second one" }) });
  assert.equal(r2.body.status, "received");
  const id2 = r2.body.id;
  assert.ok(id2 > id1, "ids follow creation");
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken(SUBMITTER)}`);
  assert.equal(v.status, 200, v.text);
  assert.equal(v.body.confirmed, 2);
  assert.equal(v.body.actor.name, "Ada Lovelace", "the link names the new account");
  const got = await t.req("GET", `/api/contributions/${id1}`, { token: v.body.token });
  assert.equal(got.status, 200);
  assert.equal(got.body.item.status, "confirmed");
  assert.equal(got.body.item.submitter.account, v.body.actor.id);
  assert.equal(got.body.item.confirmed, new Date(t.clock.now()).toISOString());
  const notices = t.mail.sent.filter((m) => m.to === "team@inbox.test");
  assert.equal(notices.length, 2);
  assert.match(notices[0].subject, new RegExp(`Proposal #${id1} confirmed`));
  // A later sign-in confirms nothing more.
  const again = await t.signIn(SUBMITTER);
  assert.equal(again.confirmed, 0);
  assert.deepEqual((await trailActions(t)).filter((l) => l.startsWith("proposal")), [
    `proposal.create proposal:${id1}`,
    `proposal.create proposal:${id2}`,
    `proposal.confirm proposal:${id1}`,
    `proposal.confirm proposal:${id2}`,
  ]);
});

Deno.test("contributions: signed in with the same address: confirmed at once, team notified", async () => {
  await using t = await testApp({ config: inboxes });
  const { token } = await t.account(SUBMITTER, { name: "Ada" });
  const r = await t.req("POST", "/api/contributions", { token, body: proposal() });
  assert.equal(r.status, 201);
  assert.equal(r.body.status, "confirmed");
  assert.equal(t.mail.last(SUBMITTER), undefined, "no link needed");
  assert.match(t.mail.last("team@inbox.test")!.subject, new RegExp(`Proposal #${r.body.id} c`));
  // Signed in with another address: the given address must confirm.
  const other = await t.account("bob@example.org", { name: "Bob" });
  const r2 = await t.req("POST", "/api/contributions", { token: other.token, body: proposal() });
  assert.equal(r2.body.status, "received");
  assert.ok(t.mail.linkToken(SUBMITTER));
});

Deno.test("contributions: unconfirmed proposals are deleted after seven days", async () => {
  await using t = await testApp({ config: inboxes });
  const { id } = (await t.req("POST", "/api/contributions", {
    body: proposal({ records: [], chain: [] }),
  })).body;
  const token = t.mail.linkToken(SUBMITTER);
  t.clock.advance(7 * DAY - 1);
  assert.equal(await expireReceived(t.deps), 0);
  t.clock.advance(1);
  await runJobs(t.deps, MINUTELY);
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes(`["proposals"`), dump);
  assert.ok(!dump.includes(`"proposals_by_`), dump);
  assert.ok(!dump.includes("Analytical"), "no text left");
  assert.equal((await t.req("GET", `/contribute/status?id=${id}`)).status, 404);
  // The link expired with it.
  assert.equal((await t.req("GET", `/api/verify?token=${token}`)).status, 410);
  assert.ok((await trailActions(t)).includes(`proposal.expire proposal:${id}`));
});

Deno.test("contributions: a proposal past seven days is not confirmed by a later sign-in", async () => {
  await using t = await testApp({ config: inboxes });
  await t.req("POST", "/api/contributions", { body: proposal() });
  t.clock.advance(7 * DAY);
  const v = await t.signIn(SUBMITTER);
  assert.equal(v.confirmed, 0);
});

Deno.test("contributions: a filled honeypot answers as a real proposal and leaves no trace", async () => {
  await using t = await testApp({ config: inboxes });
  const before = await dumpKv(t.kv);
  const r = await t.req("POST", "/api/contributions", { body: proposal({ website: "x.example" }) });
  assert.equal(await dumpKv(t.kv), before);
  assert.equal(t.mail.sent.length, 0);
  // Same status, same shape, a plausible id as a stored proposal's answer.
  const real = await t.req("POST", "/api/contributions", { body: proposal() });
  assert.equal(r.status, real.status);
  assert.deepEqual(Object.keys(r.body), Object.keys(real.body));
  assert.equal(r.body.status, real.body.status);
  assert.ok(
    Number.isSafeInteger(r.body.id) && String(r.body.id).length === String(real.body.id).length,
  );
  assert.equal(r.body.status_url, `http://test.local/contribute/status?id=${r.body.id}`);
});

Deno.test("contributions: every field rule answers 400 naming the field, nothing stored", async () => {
  await using t = await testApp({ config: inboxes });
  const before = await dumpKv(t.kv);
  const files = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ label: `f${i}`, url: `https://e.org/${i}` }));
  const cases: [Record<string, unknown>, string][] = [
    [{ name: "A" }, "name"],
    [{ email: "nope" }, "email"],
    [{ title: "ab" }, "title"],
    [{ title: "x".repeat(161) }, "title"],
    [{ area: "space" }, "area"],
    [{ summary: "   " }, "summary"],
    [{ summary: "x".repeat(4001) }, "summary"],
    [{ trail: "x".repeat(12001) }, "trail"],
    [{ files: files(11) }, "files"],
    [{ files: [{ label: "a", url: "http://e.org/x" }] }, "files: url of item 1"],
    [{ files: [{ label: "a", url: "https://u:p@e.org/x" }] }, "files: url of item 1"],
    [{ files: [{ label: "x".repeat(121), url: "https://e.org/x" }] }, "files: label of item 1"],
    [{ files: [{ label: "a", url: "https://e.org/" + "x".repeat(500) }] }, "files: url of item 1"],
    [{ attribution: "maybe" }, "attribution"],
    [{ title: "Two\nlines" }, "title"],
    [{ name: "Ada\u0000" }, "name"],
    [{ summary: "broken \ud800 text" }, "summary"],
    [{ files: [{ label: "tab\u0007", url: "https://e.org/x" }] }, "files: label of item 1"],
    [{ records: [{ seq: 0, at: "", actor: "", action: "" }] }, "records: seq of item 1"],
    [{ chain: "not-a-hash" }, "chain"],
  ];
  // A list's entry is named by its list; the sentence says which entry and which part of it.
  for (const [o, where] of cases) {
    const r = await t.req("POST", "/api/contributions", { body: proposal(o) });
    const field = where.split(":")[0];
    assert.equal(r.status, 400, `${field}: ${r.text}`);
    assert.equal(r.body.field, field, r.text);
    assert.ok(r.body.error.startsWith(where.includes(":") ? where : `${field}: `), r.text);
  }
  assert.equal(await dumpKv(t.kv), before);
  assert.equal(t.mail.sent.length, 0);
  // The limits themselves pass, even in two-byte characters (stored values stay < 64 KiB).
  const wide = (n: number) => "ж".repeat(n);
  const records = Array.from({ length: 40 }, (_, i) => ({
    seq: i + 1,
    at: wide(40),
    actor: wide(120),
    action: wide(120),
  }));
  assert.ok(JSON.stringify([records, null]).length <= 16000);
  const edge = await t.req("POST", "/api/contributions", {
    body: proposal({
      name: wide(120),
      title: wide(160),
      files: Array.from({ length: 10 }, () => ({
        label: wide(120),
        url: "https://e.org/" + wide(486),
      })),
      trail: wide(12000),
      summary: wide(4000),
      records,
    }),
  });
  assert.equal(edge.status, 201, edge.text);
  const tooMany = await t.req("POST", "/api/contributions", {
    body: proposal({ records: [...records, ...records] }),
  });
  assert.equal(tooMany.status, 400);
  assert.equal(tooMany.body.field, "records");
});

Deno.test("contributions: 5 an hour per address and per origin, then 429", async () => {
  await using t = await testApp();
  for (let i = 0; i < 5; i++) {
    const r = await t.req("POST", "/api/contributions", { body: proposal(), from: `10.0.0.${i}` });
    assert.equal(r.status, 201);
  }
  const over = await t.req("POST", "/api/contributions", { body: proposal(), from: "10.0.1.1" });
  assert.equal(over.status, 429);
  assert.ok(Number(over.headers.get("retry-after")) > 0);
  for (let i = 0; i < 5; i++) {
    const r = await t.req("POST", "/api/contributions", {
      body: proposal({ email: `p${i}@example.org` }),
      from: "10.9.9.9",
    });
    assert.equal(r.status, 201);
  }
  const origin = await t.req("POST", "/api/contributions", {
    body: proposal({ email: "fresh@example.org" }),
    from: "10.9.9.9",
  });
  assert.equal(origin.status, 429);
  // Once the Retry-After it said has passed, one more goes through.
  t.clock.advance(Number(over.headers.get("retry-after")) * 1000);
  const later = await t.req("POST", "/api/contributions", { body: proposal(), from: "10.0.1.1" });
  assert.equal(later.status, 201);
});

Deno.test("contributions: who sees a proposal", async () => {
  await using t = await testApp({ config: inboxes });
  const { id, token } = await confirmed(t);
  const { rev } = await team(t);
  const stranger = await t.account("eve@example.org", { name: "Eve" });
  assert.equal((await t.req("GET", `/api/contributions/${id}`)).status, 401);
  assert.equal(
    (await t.req("GET", `/api/contributions/${id}`, { token: stranger.token })).status,
    404,
  );
  assert.equal((await t.req("GET", `/api/contributions/99`, { token })).status, 404);
  const mine = await t.req("GET", `/api/contributions/${id}`, { token });
  assert.equal(mine.status, 200);
  assert.equal(mine.body.item.email, SUBMITTER);
  assert.equal(mine.body.item.summary, proposal().summary);
  assert.deepEqual(mine.body.item.files, proposal().files);
  assert.equal(mine.body.item.decisions[0].by, undefined, "submitters do not see who decided");
  const seen = await t.req("GET", `/api/contributions/${id}`, { token: rev });
  assert.equal(seen.status, 200);
  assert.equal(seen.body.item.decisions[0].by, "public");
  const svc = await t.req("GET", `/api/contributions/${id}`, {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(svc.status, 200);
  // Team listing: state, submitter, gate.
  assert.equal((await t.req("GET", "/api/contributions")).status, 401);
  assert.equal((await t.req("GET", "/api/contributions", { token })).status, 403);
  const list = await t.req("GET", "/api/contributions", { token: rev });
  assert.equal(list.status, 200);
  const item = list.body.items[0];
  assert.equal(item.status, "confirmed");
  assert.deepEqual(item.submitter, {
    name: "Ada Lovelace",
    email: SUBMITTER,
    account: (await t.req("GET", "/api/me", { token })).body.id,
  });
  assert.equal(item.gate.open, true);
  assert.deepEqual(
    item.gate.checks.map((c: { name: string }) => c.name),
    ["confirmed", "name", "title", "summary", "records", "files", "slug"],
  );
  const filtered = await t.req("GET", "/api/contributions?status=received", { token: rev });
  assert.deepEqual(filtered.body.items, []);
  assert.equal((await t.req("GET", "/api/contributions?status=nope", { token: rev })).status, 400);
});

Deno.test("contributions: review, admit and reject follow the table, reasons mailed", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev } = await team(t);
  const a = await confirmed(t);
  const b = await confirmed(t, { email: "bob@example.org", name: "Bob Builder" });
  const c = await t.req("POST", "/api/contributions", {
    body: proposal({ email: "cy@example.org" }),
  });
  // received: no team move at all.
  for (const status of ["reviewing", "admitted", "rejected"]) {
    const r = await patch(t, c.body.id, rev, { status, reason: "because" });
    assert.equal(r.status, 409, `${status}: ${r.text}`);
    assert.equal(r.body.status, "received");
  }
  // confirmed -> admitted is not allowed; -> reviewing is.
  assert.equal((await patch(t, a.id, rev, { status: "admitted", reason: "fine" })).status, 409);
  const quiet = t.mail.sent.length;
  const reviewing = await patch(t, a.id, rev, { status: "reviewing" });
  assert.equal(reviewing.status, 200, reviewing.text);
  assert.equal(t.mail.sent.length, quiet, "review mails nobody");
  assert.equal(reviewing.body.item.status, "reviewing");
  assert.equal((await patch(t, a.id, rev, { status: "reviewing" })).status, 409);
  // Reasons: at least 3 characters.
  const short = await patch(t, a.id, rev, { status: "admitted", reason: " ok " });
  assert.equal(short.status, 400);
  assert.equal(short.body.field, "reason");
  assert.equal((await patch(t, a.id, rev, { status: "admitted" })).status, 400);
  const before = t.mail.sent.length;
  const admitted = await patch(t, a.id, rev, { status: "admitted", reason: "Well made." });
  assert.equal(admitted.status, 200);
  assert.equal(admitted.body.item.status, "admitted");
  assert.equal(admitted.body.item.reason, "Well made.");
  assert.equal(t.mail.sent.length, before + 1);
  const m = t.mail.last(SUBMITTER)!;
  assert.match(m.subject, /admitted/);
  assert.match(m.text, /Reason: Well made\./);
  // admitted cannot be rejected or reviewed again.
  assert.equal((await patch(t, a.id, rev, { status: "rejected", reason: "no way" })).status, 409);
  assert.equal((await patch(t, a.id, rev, { status: "reviewing" })).status, 409);
  // confirmed -> rejected directly.
  const rejected = await patch(t, b.id, rev, { status: "rejected", reason: "Out of scope." });
  assert.equal(rejected.status, 200);
  assert.equal(rejected.body.item.status, "rejected");
  assert.match(t.mail.last("bob@example.org")!.text, /Reason: Out of scope\./);
  assert.equal((await patch(t, b.id, rev, { status: "admitted", reason: "changed" })).status, 409);
  // The submitter cannot move their own proposal like the team.
  assert.equal((await patch(t, a.id, a.token, { status: "published" })).status, 403);
  assert.equal((await patch(t, b.id, b.token, { status: "reviewing" })).status, 403);
  // Others do not learn it exists; signed-out callers get 401.
  assert.equal(
    (await patch(t, a.id, b.token, { status: "withdrawn", reason: "mine" })).status,
    404,
  );
  assert.equal(
    (await t.req("PATCH", `/api/contributions/${a.id}`, { body: { status: "reviewing" } }))
      .status,
    401,
  );
  // Unknown status values and empty bodies.
  assert.equal((await patch(t, a.id, rev, { status: "confirmed" })).status, 400);
  assert.equal((await patch(t, a.id, rev, {})).status, 400);
  const actions = await trailActions(t);
  assert.ok(actions.includes(`proposal.review proposal:${a.id}`));
  assert.ok(actions.includes(`proposal.admit proposal:${a.id}`));
  assert.ok(actions.includes(`proposal.reject proposal:${b.id}`));
});

Deno.test("contributions: only the owner publishes, and only with the gate open", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await team(t);
  const { id } = await confirmed(t, {
    title: "x".repeat(130),
    records: [{ seq: 1, at: "2026-01-01T00:00:00.000Z", actor: "me", action: "start" }],
    chain: "0".repeat(64),
  });
  assert.equal((await patch(t, id, owner, { status: "published" })).status, 409, "from confirmed");
  await patch(t, id, rev, { status: "reviewing" });
  const byReviewer = await patch(t, id, rev, { status: "published", reason: "ship it" });
  assert.equal(byReviewer.status, 403);
  const bySvc = await t.req("PATCH", `/api/contributions/${id}`, {
    headers: { "x-service-token": t.deps.config.serviceToken! },
    body: { status: "published" },
  });
  assert.equal(bySvc.status, 403);
  const closed = await patch(t, id, owner, { status: "published", reason: "ship it" });
  assert.equal(closed.status, 409);
  assert.deepEqual(closed.body.failed, ["title", "records"]);
  assert.match(closed.body.error, /title, records/);
  assert.equal(closed.body.checks.length, 7);
  const got = await t.req("GET", `/api/contributions/${id}`, { token: owner });
  assert.equal(got.body.item.status, "reviewing", "unchanged");
  assert.equal(got.body.item.gate.open, false);
  assert.equal(got.body.item.records.length, 1);
  assert.equal(got.body.item.chain, "0".repeat(64));
});

Deno.test("contributions: the submitter withdraws an open proposal with a reason", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev } = await team(t);
  const a = await confirmed(t);
  await patch(t, a.id, rev, { status: "reviewing" });
  await patch(t, a.id, rev, { status: "admitted", reason: "Good work" });
  assert.equal(
    (await patch(t, a.id, rev, { status: "withdrawn", reason: "not yours" })).status,
    403,
  );
  assert.equal((await patch(t, a.id, a.token, { status: "withdrawn" })).status, 400);
  const quiet = t.mail.sent.length;
  const w = await patch(t, a.id, a.token, { status: "withdrawn", reason: "Changed my mind" });
  assert.equal(w.status, 200, w.text);
  assert.equal(t.mail.sent.length, quiet, "withdrawal mails nobody");
  assert.equal(w.body.item.status, "withdrawn");
  assert.equal(w.body.item.reason, "Changed my mind");
  assert.equal(
    (await patch(t, a.id, a.token, { status: "withdrawn", reason: "again" })).status,
    409,
  );
  assert.equal((await patch(t, a.id, rev, { status: "reviewing" })).status, 409);
  // A rejected proposal is not open.
  const b = await confirmed(t, { email: "bob@example.org" });
  await patch(t, b.id, rev, { status: "rejected", reason: "Not for us" });
  assert.equal(
    (await patch(t, b.id, b.token, { status: "withdrawn", reason: "fine" })).status,
    409,
  );
  // received is open: a signed-in submitter whose proposal still waits (other address link).
  const c = await t.account("cy@example.org", { name: "Cy" });
  t.clock.advance(MINUTE);
  const r = await t.req("POST", "/api/contributions", {
    body: proposal({ email: "cy@example.org" }),
  });
  assert.equal(r.body.status, "received");
  const wr = await patch(t, r.body.id, c.token, { status: "withdrawn", reason: "oops wrong" });
  assert.equal(wr.status, 200);
  assert.ok((await trailActions(t)).includes(`proposal.withdraw proposal:${a.id}`));
});

Deno.test("contributions: attribution needs the submitter and a fresh token", async () => {
  await using t = await testApp({ config: inboxes });
  const { owner } = await team(t);
  const a = await confirmed(t, { attribution: "remove" });
  assert.equal((await patch(t, a.id, owner, { attribution: "keep" })).status, 403);
  assert.equal((await patch(t, a.id, a.token, { attribution: "sometimes" })).status, 400);
  const both = await patch(t, a.id, a.token, { attribution: "keep", status: "withdrawn" });
  assert.equal(both.status, 400);
  const ok = await patch(t, a.id, a.token, { attribution: "keep" });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.item.attribution, "keep");
  t.clock.advance(15 * MINUTE);
  const stale = await patch(t, a.id, a.token, { attribution: "remove" });
  assert.equal(stale.status, 409);
  assert.equal(stale.body.fresh_required, true);
  const got = await t.req("GET", `/api/contributions/${a.id}`, { token: owner });
  assert.equal(got.body.item.attribution, "keep");
  assert.ok((await trailActions(t)).includes(`proposal.attribution proposal:${a.id}`));
});

Deno.test("contributions: the submitter or the owner deletes an unpublished proposal", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await team(t);
  const a = await confirmed(t);
  const stranger = await t.account("eve@example.org", { name: "Eve" });
  assert.equal((await t.req("DELETE", `/api/contributions/${a.id}`)).status, 401);
  assert.equal(
    (await t.req("DELETE", `/api/contributions/${a.id}`, { token: stranger.token }))
      .status,
    404,
  );
  assert.equal((await t.req("DELETE", `/api/contributions/${a.id}`, { token: rev })).status, 403);
  const svc = await t.req("DELETE", `/api/contributions/${a.id}`, {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(svc.status, 403);
  const del = await t.req("DELETE", `/api/contributions/${a.id}`, { token: a.token });
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { ok: true, deleted: a.id });
  assert.equal((await t.req("GET", `/api/contributions/${a.id}`, { token: owner })).status, 404);
  const b = await confirmed(t, { email: "bob@example.org", records: [], chain: [] });
  const byOwner = await t.req("DELETE", `/api/contributions/${b.id}`, { token: owner });
  assert.equal(byOwner.status, 200);
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes(`["proposals"`));
  assert.ok(!dump.includes(`"proposals_by_`));
  assert.ok(!dump.includes(`"proposal_data"`));
  const actions = await trailActions(t);
  assert.ok(actions.includes(`proposal.delete proposal:${a.id}`));
  assert.ok(actions.includes(`proposal.delete proposal:${b.id}`));
});

Deno.test("contributions: the status page shows no address or text without the secret", async () => {
  await using t = await testApp({ config: inboxes });
  const { id } = (await t.req("POST", "/api/contributions", { body: proposal() })).body;
  const link = t.mail.last(SUBMITTER)!.text.match(
    new RegExp(`(/contribute/status\\?id=${id}&key=[\\w-]+)`),
  )![1];
  const plain = await t.req("GET", `/contribute/status?id=${id}`);
  assert.equal(plain.status, 200);
  assert.match(plain.text, /received/);
  for (const secret of [SUBMITTER, "Ada Lovelace", "Analytical", "explains the engine"]) {
    assert.ok(!plain.text.includes(secret), secret);
  }
  const api = await t.req("GET", `/api/contributions/${id}/status`);
  assert.equal(api.status, 200);
  assert.equal(api.body.status, "received");
  assert.equal(api.body.title, undefined);
  assert.ok(!api.text.includes(SUBMITTER) && !api.text.includes("Ada"));
  const wrong = await t.req("GET", `/api/contributions/${id}/status?key=wrong-key`);
  assert.equal(wrong.body.title, undefined);
  const keyed = await t.req("GET", link);
  assert.equal(keyed.status, 200);
  assert.match(keyed.text, /Analytical engines for beginners/);
  assert.ok(!keyed.text.includes(SUBMITTER), "never the address");
  const keyedApi = await t.req(
    "GET",
    "/api" + link.replace(`/contribute/status?id=${id}&`, `/contributions/${id}/status?`),
  );
  assert.equal(keyedApi.body.title, "Analytical engines for beginners");
  assert.equal((await t.req("GET", "/contribute/status?id=9")).status, 404);
  assert.equal((await t.req("GET", "/contribute/status?id=abc")).status, 404);
  assert.equal((await t.req("GET", "/api/contributions/9/status")).status, 404);
});

Deno.test("contributions: gate slugs come from the title, or the id when it gives none", async () => {
  await using t = await testApp({ config: inboxes });
  const { owner } = await team(t);
  const { token } = await t.account(SUBMITTER, { name: "Ada" });
  await t.req("POST", "/api/contributions", {
    token,
    body: proposal({ title: "  Über die Gärten: Teil 2! " }),
  });
  const second = await t.req("POST", "/api/contributions", {
    token,
    body: proposal({ title: "Сады у моря" }),
  });
  const list = await t.req("GET", "/api/contributions", { token: owner });
  const slugOf = (i: { gate: { checks: { name: string; detail: string }[] } }) =>
    i.gate.checks.find((c) => c.name === "slug")!.detail;
  assert.deepEqual(list.body.items.map(slugOf), [
    `slug proposal-${second.body.id} is free`,
    "slug uber-die-garten-teil-2 is free",
  ]);
});

Deno.test("contributions: a sign-in link of any purpose confirms waiting proposals", async () => {
  await using t = await testApp({ config: inboxes });
  await t.req("POST", "/api/contributions", { body: proposal() });
  const v = await t.signIn(SUBMITTER);
  assert.equal(v.confirmed, 1);
  await t.req("POST", "/api/contributions", { body: proposal({ email: "bob@example.org" }) });
  await t.req("POST", "/api/verify/request", {
    body: { email: "bob@example.org", purpose: "address" },
  });
  const a = await t.req("GET", `/api/verify?token=${t.mail.linkToken("bob@example.org")}`);
  assert.equal(a.status, 200);
  assert.equal(a.body.confirmed, 1);
});
