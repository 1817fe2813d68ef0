import assert from "node:assert/strict";
import { formsPart } from "../kv/parts/forms.ts";
import { MAX_DECISIONS } from "../kv/catalogue/proposals.ts";
import { proposal } from "./_forms_fixtures.ts";
import { dumpKv, type TestApp, testApp } from "./_helpers.ts";

const inboxes = { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" };
const SLUG = "analytical-engines-for-beginners";

async function setup(t: TestApp) {
  const rev = await t.account("rev@example.org", { name: "Reviewer", roles: ["reviewer"] });
  const owner = await t.account("own@example.org", { name: "Owner", roles: ["owner"] });
  return { rev: rev.token, owner: owner.token };
}

/** A proposal sent by a signed-in submitter and admitted by the team. */
async function admitted(t: TestApp, rev: string, o: Record<string, unknown> = {}) {
  const email = (o.email as string | undefined) ?? "ada@example.org";
  const sub = await t.account(email, { name: (o.name as string | undefined) ?? "Ada Lovelace" });
  const r = await t.req("POST", "/api/contributions", { token: sub.token, body: proposal(o) });
  assert.equal(r.status, 201, r.text);
  const id = r.body.id as number;
  assert.equal((await patch(t, id, rev, { status: "reviewing" })).status, 200);
  const a = await patch(t, id, rev, { status: "admitted", reason: "Good work" });
  assert.equal(a.status, 200, a.text);
  return { id, token: sub.token, account: sub.account };
}

const patch = (t: TestApp, id: number, token: string, body: unknown) =>
  t.req("PATCH", `/api/contributions/${id}`, { token, body });

async function catalogue(t: TestApp) {
  const r = await t.req("GET", "/api/catalogue");
  assert.equal(r.status, 200);
  return r.body.modules as {
    slug: string;
    title: string;
    by: string;
    lede: string;
    contributors: { id: number; name: string }[];
  }[];
}

/** The slugs of the modules GET /api/search finds for `q`. */
const found = async (t: TestApp, q: string) =>
  ((await t.req("GET", `/api/search?q=${encodeURIComponent(q)}`)).body.modules as {
    slug: string;
  }[]).map((h) => h.slug);

Deno.test("publication: the owner publishes; the module is in the catalogue and search at once", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  assert.deepEqual(await catalogue(t), []);
  const r = await patch(t, a.id, owner, { status: "published", reason: "Ready to go" });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.item.status, "published");
  assert.equal(r.body.item.slug, SLUG);
  assert.equal(r.body.item.module_url, `/modules/${SLUG}`);
  const mods = await catalogue(t);
  assert.equal(mods.length, 1);
  assert.equal(mods[0].slug, SLUG);
  assert.equal(mods[0].title, "Analytical engines for beginners");
  assert.equal(mods[0].by, "Ada Lovelace");
  assert.equal(mods[0].lede, "A module that explains the engine.");
  assert.deepEqual(mods[0].contributors.map((c) => c.id), [a.account.id]);
  assert.deepEqual(await found(t, "analytical engine"), [SLUG]);
  // The submitter is the module's contributor; the module's meta lists them.
  const mine = await t.req("GET", `/api/me/modules/${SLUG}`, { token: a.token });
  assert.equal(mine.status, 200, mine.text);
  assert.equal(mine.body.item.by, "Ada Lovelace");
  const meta = await t.req("GET", "/api/modules/meta");
  assert.deepEqual(meta.body.items[SLUG].contributors.map((c: { id: number }) => c.id), [
    a.account.id,
  ]);
  const mail = t.mail.last("ada@example.org")!;
  assert.match(mail.subject, /published/);
  assert.match(mail.text, new RegExp(`http://test\\.local/modules/${SLUG}`));
  // A published proposal is neither withdrawn nor deleted.
  assert.equal(
    (await patch(t, a.id, a.token, { status: "withdrawn", reason: "mine" })).status,
    409,
  );
  assert.equal((await t.req("DELETE", `/api/contributions/${a.id}`, { token: owner })).status, 409);
  assert.equal((await patch(t, a.id, owner, { status: "published" })).status, 409);
  const status = await t.req("GET", `/api/contributions/${a.id}/status`);
  assert.equal(status.body.status, "published");
});

Deno.test("publication: the owner takes a module back; it leaves catalogue and search at once", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  await patch(t, a.id, owner, { status: "published" });
  assert.equal((await patch(t, a.id, rev, { status: "admitted" })).status, 403);
  assert.equal((await catalogue(t)).length, 1, "the reviewer changed nothing");
  const back = await patch(t, a.id, owner, { status: "admitted", reason: "Needs a fix" });
  assert.equal(back.status, 200, back.text);
  assert.equal(back.body.item.status, "admitted");
  assert.equal(back.body.item.module_url, null);
  assert.deepEqual(await catalogue(t), []);
  assert.deepEqual(await found(t, "analytical"), []);
  assert.match(t.mail.last("ada@example.org")!.text, /no longer published[\s\S]*Needs a fix/);
  // Published again under its own slug: the gate does not call its own module taken.
  const item = await t.req("GET", `/api/contributions/${a.id}`, { token: owner });
  assert.equal(item.body.item.gate.open, true, JSON.stringify(item.body.item.gate));
  const again = await patch(t, a.id, owner, { status: "published" });
  assert.equal(again.status, 200, again.text);
  assert.deepEqual((await catalogue(t)).map((m) => m.slug), [SLUG]);
  const lines: string[] = [];
  for await (const e of t.kv.list<{ action: string; subject: string }>({ prefix: ["trail"] })) {
    if (e.value.subject === `proposal:${a.id}`) lines.push(e.value.action);
  }
  assert.deepEqual(lines, [
    "proposal.create",
    "proposal.review",
    "proposal.admit",
    "proposal.publish",
    "proposal.unpublish",
    "proposal.publish",
  ]);
});

Deno.test("publication: a taken slug closes the gate: 409 naming it, nothing changes", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  await patch(t, a.id, owner, { status: "published" });
  const b = await admitted(t, rev, { email: "bob@example.org", name: "Bob Builder" });
  const r = await patch(t, b.id, owner, { status: "published" });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.failed, ["slug"]);
  assert.match(r.body.error, /slug/);
  const mods = await catalogue(t);
  assert.equal(mods.length, 1);
  assert.equal(mods[0].by, "Ada Lovelace");
  const got = await t.req("GET", `/api/contributions/${b.id}`, { token: owner });
  assert.equal(got.body.item.status, "admitted");
  // Reviewing may be published directly when the gate is open.
  const c = await t.account("cy@example.org", { name: "Cy" });
  const rc = await t.req("POST", "/api/contributions", {
    token: c.token,
    body: proposal({ email: "cy@example.org", title: "Tidal gardens" }),
  });
  await patch(t, rc.body.id, rev, { status: "reviewing" });
  assert.equal((await patch(t, rc.body.id, owner, { status: "published" })).status, 200);
  assert.deepEqual((await catalogue(t)).map((m) => m.slug).sort(), [SLUG, "tidal-gardens"]);
});

Deno.test("publication: decisions stay capped through many publish cycles", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  const reason = "ж".repeat(1000);
  for (let i = 0; i < 12; i++) {
    assert.equal((await patch(t, a.id, owner, { status: "published", reason })).status, 200);
    assert.equal((await patch(t, a.id, owner, { status: "admitted", reason })).status, 200);
  }
  const got = await t.req("GET", `/api/contributions/${a.id}`, { token: owner });
  assert.equal(got.body.item.decisions.length, MAX_DECISIONS);
  assert.equal(got.body.item.decisions[0].status, "confirmed");
  assert.equal(got.body.item.decisions.at(-1).status, "admitted");
});

Deno.test("publication: erasure keeps or removes the name per published proposal", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev, { attribution: "keep" });
  const sub = a.account;
  await patch(t, a.id, owner, { status: "published" });
  const r2 = await t.req("POST", "/api/contributions", {
    token: a.token,
    body: proposal({ title: "Tidal gardens", attribution: "keep" }),
  });
  await patch(t, r2.body.id, rev, { status: "reviewing" });
  await patch(t, r2.body.id, owner, { status: "published" });
  const r3 = await t.req("POST", "/api/contributions", {
    token: a.token,
    body: proposal({ title: "Never published" }),
  });
  // The body's decision wins over the proposal's own attribution.
  const counts = await formsPart.erase(t.deps, sub, {
    keep: new Set([a.id]),
    remove: new Set([r2.body.id]),
  });
  assert.deepEqual(counts, { kept: 1, unpublished: 1, deleted: 1 });
  const mods = await catalogue(t);
  assert.deepEqual(mods.map((m) => m.slug), [SLUG]);
  assert.equal(mods[0].by, "Ada Lovelace");
  assert.deepEqual(await found(t, "tidal"), []);
  const kept = await t.req("GET", `/api/contributions/${a.id}`, { token: owner });
  assert.equal(kept.body.item.status, "published");
  assert.equal(kept.body.item.email, null);
  assert.equal(kept.body.item.submitter.account, null);
  assert.equal(
    (await t.req("GET", `/api/contributions/${r2.body.id}`, { token: owner })).status,
    404,
  );
  assert.equal(
    (await t.req("GET", `/api/contributions/${r3.body.id}`, { token: owner })).status,
    404,
  );
  const dump = await dumpKv(t.kv);
  const own = dump.split("\n").filter((l) =>
    /^\["(proposal|request)/.test(l) && l.includes("ada@")
  );
  assert.deepEqual(own, []);
});

Deno.test("publication: without a body decision each proposal's attribution applies", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev, { attribution: "remove" });
  await patch(t, a.id, owner, { status: "published" });
  const counts = await formsPart.erase(t.deps, a.account, {
    keep: new Set(),
    remove: new Set(),
  });
  assert.deepEqual(counts, { kept: 0, unpublished: 1, deleted: 0 });
  assert.deepEqual(await catalogue(t), []);
});

Deno.test("publication: two proposals racing for one slug: one wins, the other gets 409", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  const b = await admitted(t, rev, { email: "bob@example.org", name: "Bob Builder" });
  const [ra, rb] = await Promise.all([
    patch(t, a.id, owner, { status: "published" }),
    patch(t, b.id, owner, { status: "published" }),
  ]);
  assert.deepEqual([ra.status, rb.status].sort(), [200, 409], `${ra.text} ${rb.text}`);
  const loser = ra.status === 409 ? ra : rb;
  assert.deepEqual(loser.body.failed, ["slug"]);
  const winner = ra.status === 200 ? "Ada Lovelace" : "Bob Builder";
  const mods = await catalogue(t);
  assert.equal(mods.length, 1);
  assert.equal(mods[0].by, winner);
  assert.equal(mods[0].contributors.length, 1);
  // The winner's proposal deleted later (after being taken back) frees nothing the module holds.
  const winnerId = ra.status === 200 ? a.id : b.id;
  await patch(t, winnerId, owner, { status: "admitted" });
  assert.equal(
    (await t.req("DELETE", `/api/contributions/${winnerId}`, { token: owner })).status,
    200,
  );
  const loserId = winnerId === a.id ? b.id : a.id;
  const again = await patch(t, loserId, owner, { status: "published" });
  assert.equal(again.status, 409, "the module still holds the slug");
  assert.ok(!(await dumpKv(t.kv)).includes(`["proposal_slugs"`));
});

Deno.test("publication: the keyed status page links the published module", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const r = await t.req("POST", "/api/contributions", { body: proposal() });
  const key = t.mail.last("ada@example.org")!.text.match(/&key=([\w-]+)/)![1];
  await t.req("GET", `/api/verify?token=${t.mail.linkToken("ada@example.org")}`);
  await patch(t, r.body.id, rev, { status: "reviewing" });
  await patch(t, r.body.id, owner, { status: "published", reason: "Lovely" });
  const page = await t.req("GET", `/contribute/status?id=${r.body.id}&key=${key}`);
  assert.equal(page.status, 200);
  assert.match(page.text, new RegExp(`href="/modules/${SLUG}"`));
  assert.match(page.text, /Lovely/);
  const plain = await t.req("GET", `/contribute/status?id=${r.body.id}`);
  assert.match(plain.text, /published/);
  assert.ok(!plain.text.includes("Lovely") && !plain.text.includes("Ada"));
});

Deno.test("publication: search finds the module at once, and not once it is taken back", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  const search = async () =>
    (await t.req("GET", "/api/search?q=analytical%20engines")).body.modules.map((
      m: { slug: string; name: string },
    ) => `${m.slug} ${m.name}`);
  assert.deepEqual(await search(), []);
  await patch(t, a.id, owner, { status: "published" });
  assert.deepEqual(await search(), [`${SLUG} Ada Lovelace`]);
  await patch(t, a.id, owner, { status: "admitted" });
  assert.deepEqual(await search(), []);
});

Deno.test("publication: DELETE /api/me applies keep/remove and answers the counts", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev, { attribution: "remove" });
  await patch(t, a.id, owner, { status: "published" });
  const r2 = await t.req("POST", "/api/contributions", {
    token: a.token,
    body: proposal({ title: "Tidal gardens" }),
  });
  await patch(t, r2.body.id, rev, { status: "reviewing" });
  await patch(t, r2.body.id, owner, { status: "published" });
  await t.req("POST", "/api/contributions", { token: a.token, body: proposal({ title: "Draft" }) });
  await t.req("POST", "/api/requests", {
    body: { name: "Ada", email: "ada@example.org", kind: "tool", text: "A tool for engines" },
  });
  // The team sees the count; the export holds proposals (with files) and requests.
  const actors = await t.req("GET", "/api/actors", { token: owner });
  const me = actors.body.items.find((i: { id: number }) => i.id === a.account.id);
  assert.equal(me.counts.contributions, 3);
  const ex = await t.req("GET", "/api/me/export", { token: a.token });
  assert.equal(ex.status, 200);
  assert.deepEqual(ex.body.proposals.map((p: { title: string }) => p.title).sort(), [
    "Analytical engines for beginners",
    "Draft",
    "Tidal gardens",
  ]);
  assert.deepEqual(ex.body.proposals[0].files, proposal().files);
  assert.deepEqual(ex.body.requests.map((r: { text: string }) => r.text), ["A tool for engines"]);
  // Erasure: the body keeps the first (its own attribution says remove); the second follows
  // its attribution (keep); the draft is deleted.
  const gone = await t.req("DELETE", "/api/me", { token: a.token, body: { keep: [a.id] } });
  assert.equal(gone.status, 200, gone.text);
  assert.deepEqual(gone.body, { ok: true, kept: 2, unpublished: 0, deleted: 1 });
  assert.deepEqual((await catalogue(t)).map((m) => `${m.slug} ${m.by}`).sort(), [
    `${SLUG} Ada Lovelace`,
    "tidal-gardens Ada Lovelace",
  ]);
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes("ada@example.org"), "the address is gone everywhere");
  assert.ok(!dump.includes("A tool for engines"));
});

Deno.test("publication: erasure with remove takes the module back and drops the name", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  await patch(t, a.id, owner, { status: "published" });
  const gone = await t.req("DELETE", "/api/me", { token: a.token, body: { remove: [a.id] } });
  assert.equal(gone.status, 200, gone.text);
  assert.deepEqual(gone.body, { ok: true, kept: 0, unpublished: 1, deleted: 0 });
  assert.deepEqual(await catalogue(t), []);
  const all = await t.req("GET", "/api/me/modules", { token: owner });
  const mod = all.body.items.find((m: { slug: string }) => m.slug === SLUG);
  assert.equal(mod.by, "");
  assert.equal((await t.req("GET", `/api/contributions/${a.id}`, { token: owner })).status, 404);
});

Deno.test("publication: two publishes of one proposal at once: it and its module stay published", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  const [r1, r2] = await Promise.all([
    patch(t, a.id, owner, { status: "published" }),
    patch(t, a.id, owner, { status: "published" }),
  ]);
  assert.deepEqual([r1.status, r2.status].sort(), [200, 409], `${r1.text} ${r2.text}`);
  const got = await t.req("GET", `/api/contributions/${a.id}`, { token: owner });
  assert.equal(got.body.item.status, "published");
  const mods = await catalogue(t);
  assert.deepEqual(mods.map((m) => m.slug), [SLUG], "the loser does not take the module back");
  assert.deepEqual(await found(t, "analytical engines"), [SLUG]);
  assert.ok((await dumpKv(t.kv)).includes(`["proposal_slugs","${SLUG}"]`), "the claim stays");
});

Deno.test("publication: a take-back that loses to a concurrent change leaves the module published", async () => {
  await using t = await testApp({ config: inboxes });
  const { rev, owner } = await setup(t);
  const a = await admitted(t, rev);
  assert.equal((await patch(t, a.id, owner, { status: "published" })).status, 200);
  const [back, attr] = await Promise.all([
    patch(t, a.id, owner, { status: "admitted" }),
    patch(t, a.id, a.token, { attribution: "remove" }),
  ]);
  assert.equal(attr.status, 200, attr.text);
  const got = await t.req("GET", `/api/contributions/${a.id}`, { token: owner });
  const published = got.body.item.status === "published";
  assert.equal(back.status, published ? 409 : 200, back.text);
  assert.deepEqual(
    (await catalogue(t)).map((m) => m.slug),
    published ? [SLUG] : [],
    `proposal ${got.body.item.status}: the catalogue agrees`,
  );
});
