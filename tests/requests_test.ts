import assert from "node:assert/strict";
import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import { publishModule } from "../kv/catalogue/catalogue_api.ts";
import { expireRequests } from "../kv/forms/requests.ts";
import { dumpKv, testApp } from "./_helpers.ts";

const inboxes = { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" };

const form = (o: Record<string, unknown> = {}) => ({
  name: "Grace Hopper",
  email: "grace@example.org",
  kind: "module",
  text: "Please add a module about compilers.",
  org: "Navy",
  ...o,
});

Deno.test("requests: stored, sender gets a short receipt, team inbox gets the text", async () => {
  await using t = await testApp({ config: inboxes });
  const r = await t.req("POST", "/api/requests", { body: form({ email: " Grace@Example.ORG " }) });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(Object.keys(r.body), ["ok", "id"]);
  assert.ok(r.body.ok === true && Number.isSafeInteger(r.body.id) && r.body.id > 0);
  const receipt = t.mail.last("grace@example.org")!;
  assert.ok(receipt, "receipt mailed");
  assert.ok(!receipt.text.includes("compilers"), "receipt carries no text");
  const team = t.mail.last("team@inbox.test")!;
  assert.match(team.text, /Please add a module about compilers\./);
  assert.match(team.text, /grace@example\.org/);
  assert.equal(t.mail.last("reports@inbox.test"), undefined);
  const list = await t.req("GET", "/api/requests", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(list.status, 200);
  assert.equal(list.body.items.length, 1);
  const item = list.body.items[0];
  assert.equal(item.email, "grace@example.org");
  assert.equal(item.kind, "module");
  assert.equal(item.org, "Navy");
  assert.equal(item.handled, null);
  assert.equal(item.module, null);
});

Deno.test("requests: unknown kind becomes other and goes to the team inbox", async () => {
  await using t = await testApp({ config: inboxes });
  const r = await t.req("POST", "/api/requests", { body: form({ kind: "gossip" }) });
  assert.equal(r.status, 202);
  const { token } = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const list = await t.req("GET", "/api/requests", { token });
  assert.equal(list.body.items[0].kind, "other");
  assert.ok(t.mail.last("team@inbox.test"));
  const none = await t.req("POST", "/api/requests", { body: form({ kind: undefined }) });
  assert.equal(none.status, 202);
  const long = await t.req("POST", "/api/requests", { body: form({ kind: "g".repeat(41) }) });
  assert.equal(long.status, 202, long.text);
  const again = await t.req("GET", "/api/requests", { token });
  assert.equal(again.body.items[0].id, long.body.id);
  assert.equal(again.body.items[0].kind, "other");
});

Deno.test("requests: reports go to the report inbox; an unknown module answers 400", async () => {
  await using t = await testApp({ config: inboxes });
  const r = await t.req("POST", "/api/requests", { body: form({ kind: "report" }) });
  assert.equal(r.status, 202);
  assert.match(t.mail.last("reports@inbox.test")!.text, /Please add/);
  assert.equal(t.mail.last("team@inbox.test"), undefined);
  const before = t.mail.sent.length;
  const bad = await t.req("POST", "/api/requests", {
    body: form({ kind: "contribute", module: "no-such-module" }),
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "module");
  assert.equal(t.mail.sent.length, before);
});

Deno.test("requests: unset inboxes print the team mail to standard output", async () => {
  await using t = await testApp();
  const r = await t.req("POST", "/api/requests", { body: form({ kind: "report" }) });
  assert.equal(r.status, 202);
  assert.equal(t.printed.length, 1);
  assert.match(t.printed[0], /Report #\d+ \(report\)/);
  assert.match(t.printed[0], /Please add a module/);
  // The sender's receipt still goes out by mail.
  assert.equal(t.mail.sent.length, 1);
  assert.equal(t.mail.sent[0].to, "grace@example.org");
});

Deno.test("requests: a filled honeypot answers 202 as a real one and leaves no trace", async () => {
  await using t = await testApp({ config: inboxes });
  const before = await dumpKv(t.kv);
  for (const website of ["http://spam.example", 1, "  x "]) {
    const r = await t.req("POST", "/api/requests", { body: form({ website }) });
    assert.equal(r.status, 202);
    assert.deepEqual(Object.keys(r.body), ["ok", "id"]);
    assert.ok(Number.isSafeInteger(r.body.id) && r.body.id > 1e12, "a plausible id");
  }
  // Even an otherwise invalid body: the bot learns nothing.
  const r = await t.req("POST", "/api/requests", { body: { website: "x", text: "short" } });
  assert.equal(r.status, 202);
  assert.equal(await dumpKv(t.kv), before);
  assert.equal(t.mail.sent.length, 0);
  const empty = await t.req("POST", "/api/requests", { body: form({ website: "" }) });
  assert.equal(empty.status, 202);
  assert.equal((await t.kv.get(["requests", empty.body.id])).value !== null, true);
  assert.equal(String(empty.body.id).length, String(r.body.id).length, "same kind of id");
});

Deno.test("requests: bad fields answer 400 naming the field and store nothing", async () => {
  await using t = await testApp({ config: inboxes });
  const before = await dumpKv(t.kv);
  const cases: [Record<string, unknown>, string][] = [
    [{ text: "too short" }, "text"],
    [{ text: "x".repeat(4001) }, "text"],
    [{ name: "A" }, "name"],
    [{ name: "x".repeat(121) }, "name"],
    [{ email: "not-an-address" }, "email"],
    [{ email: undefined }, "email"],
    [{ org: "x".repeat(201) }, "org"],
    [{ kind: 5 }, "kind"],
    [{ name: "Grace\nHopper" }, "name"],
    [{ text: "long enough but \u001b[31m coloured" }, "text"],
  ];
  for (const [o, field] of cases) {
    const r = await t.req("POST", "/api/requests", { body: form(o) });
    assert.equal(r.status, 400, `${field}: ${r.text}`);
    assert.equal(r.body.field, field);
    assert.match(r.body.error, new RegExp(`^${field}`));
  }
  const notJson = await t.req("POST", "/api/requests", {
    raw: "{nope",
    headers: { "content-type": "application/json" },
  });
  assert.equal(notJson.status, 400);
  assert.equal(await dumpKv(t.kv), before);
  assert.equal(t.mail.sent.length, 0);
});

Deno.test("requests: team listing, handled marking, access", async () => {
  await using t = await testApp({ config: inboxes });
  const one = (await t.req("POST", "/api/requests", { body: form() })).body.id;
  const two = (await t.req("POST", "/api/requests", { body: form({ kind: "tool" }) })).body.id;
  assert.equal((await t.req("GET", "/api/requests")).status, 401);
  const { token: plain } = await t.account("p@example.org", { name: "Plain" });
  assert.equal((await t.req("GET", "/api/requests", { token: plain })).status, 403);
  assert.equal(
    (await t.req("PATCH", `/api/requests/${one}`, { token: plain, body: { handled: true } }))
      .status,
    403,
  );
  const { token } = await t.account("o@example.org", { name: "Owner", roles: ["owner"] });
  const list = await t.req("GET", "/api/requests", { token });
  assert.deepEqual(list.body.items.map((i: { id: number }) => i.id), [two, one]);
  const bad = await t.req("PATCH", `/api/requests/${one}`, { token, body: { handled: "yes" } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "handled");
  const done = await t.req("PATCH", `/api/requests/${one}`, { token, body: { handled: true } });
  assert.equal(done.status, 200);
  assert.equal(done.body.item.handled, new Date(t.clock.now()).toISOString());
  const open = await t.req("GET", "/api/requests", { token });
  assert.deepEqual(open.body.items.map((i: { id: number }) => i.id), [two]);
  const all = await t.req("GET", "/api/requests?all=1", { token });
  assert.deepEqual(all.body.items.map((i: { id: number }) => i.id), [two, one]);
  assert.equal(
    (await t.req("PATCH", "/api/requests/99", { token, body: { handled: true } }))
      .status,
    404,
  );
  assert.equal(
    (await t.req("PATCH", "/api/requests/x", { token, body: { handled: true } }))
      .status,
    404,
  );
  const lines = [];
  for await (const e of t.kv.list<{ action: string; subject: string }>({ prefix: ["trail"] })) {
    lines.push(`${e.value.action} ${e.value.subject}`);
  }
  assert.ok(lines.includes(`request.handle request:${one}`));
});

Deno.test("requests: kept 180 days, then removed by the daily job", async () => {
  await using t = await testApp({ config: inboxes });
  const one = (await t.req("POST", "/api/requests", { body: form() })).body.id;
  t.clock.advance(DAY);
  const two = (await t.req("POST", "/api/requests", { body: form({ email: "other@example.org" }) }))
    .body.id;
  t.clock.advance(179 * DAY - 1);
  assert.equal(await expireRequests(t.deps), 0);
  t.clock.advance(1);
  assert.equal(await expireRequests(t.deps), 1);
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes('grace@example.org"'), "first request gone, index too");
  assert.ok(!dump.includes(`["requests",${one}]`));
  assert.ok(dump.includes(`["requests",${two}]`));
  t.clock.advance(DAY);
  assert.equal(await expireRequests(t.deps), 1);
  assert.ok(!(await dumpKv(t.kv)).includes(`"requests`));
});

Deno.test("requests: at most 5 receipts an hour to one address; requests still stored", async () => {
  await using t = await testApp({ config: inboxes });
  let last = 0;
  for (let i = 0; i < 7; i++) {
    const r = await t.req("POST", "/api/requests", { body: form() });
    assert.equal(r.status, 202);
    assert.ok(r.body.id > last, "ids follow creation");
    last = r.body.id;
  }
  assert.equal(t.mail.sent.filter((m) => m.to === "grace@example.org").length, 5);
  assert.equal(t.mail.sent.filter((m) => m.to === "team@inbox.test").length, 7);
  // Judged over the hour that ends now: at the next clock hour's start the five still count;
  // a fifth of an hour later one more receipt goes.
  t.clock.advance(HOUR);
  await t.req("POST", "/api/requests", { body: form() });
  assert.equal(t.mail.sent.filter((m) => m.to === "grace@example.org").length, 5);
  t.clock.advance(12 * MINUTE);
  await t.req("POST", "/api/requests", { body: form() });
  assert.equal(t.mail.sent.filter((m) => m.to === "grace@example.org").length, 6);
});

Deno.test({
  name: "requests: a report on an existing module reaches the report inbox with its link",
  fn: async () => {
    await using t = await testApp({ config: inboxes });
    const { account } = await t.account("c@example.org", { name: "Cy" });
    await publishModule(t.deps, {
      slug: "tidal-gardens",
      title: "Tidal gardens",
      who: "",
      lede: "Gardens by the sea",
      about: "",
      area: "nature-based",
      track: "",
      by: "Cy",
      facts: [],
      gets: [],
      contributors: [account.id],
      proposal: 0,
    }, "owner");
    const r = await t.req("POST", "/api/requests", {
      body: form({ kind: "report", module: "tidal-gardens", text: "A broken link on the page." }),
    });
    assert.equal(r.status, 202, r.text);
    const mail = t.mail.last("reports@inbox.test")!;
    assert.match(mail.text, /^http:\/\/test\.local\/modules\/tidal-gardens$/m);
    assert.match(mail.text, /A broken link on the page\./);
    const offer = await t.req("POST", "/api/requests", {
      body: form({ kind: "contribute", module: "tidal-gardens" }),
    });
    assert.equal(offer.status, 202);
    // Other kinds do not keep a module.
    const other = await t.req("POST", "/api/requests", {
      body: form({ kind: "tool", module: "tidal-gardens" }),
    });
    assert.equal(other.status, 202);
    const list = await t.req("GET", "/api/requests", {
      headers: { "x-service-token": t.deps.config.serviceToken! },
    });
    assert.deepEqual(list.body.items.map((i: { module: string | null }) => i.module), [
      null,
      "tidal-gardens",
      "tidal-gardens",
    ]);
  },
});
