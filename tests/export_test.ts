import assert from "node:assert/strict";
import { testApp } from "./_helpers.ts";

Deno.test("export: a JSON download with every section, the caller's data only", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const other = await t.account("bob@example.org", { name: "Bob" });
  await t.req("PATCH", "/api/me", { token, body: { org: "Society", bio: "Long bio" } });
  await t.req("POST", "/api/me/journal", { token, body: { text: "public one" } });
  await t.req("POST", "/api/me/journal", { token, body: { text: "private one", public: false } });
  await t.req("POST", "/api/me/journal", { token: other.token, body: { text: "bob's note" } });
  await t.req("POST", "/api/me/apply", { token, body: { text: "Twenty characters or more." } });
  await t.req("POST", "/api/me/invites", {
    token,
    body: { email: "carl@example.org", message: "hi" },
  });
  const r = await t.req("GET", "/api/me/export", { token });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get("content-disposition")!, /^attachment; filename="[^"]+\.json"$/);
  assert.match(r.headers.get("content-type")!, /application\/json/);
  assert.equal(r.headers.get("cache-control"), "no-store");
  const d = r.body;
  for (
    const s of [
      "account",
      "profile",
      "journal",
      "applications",
      "proposals",
      "requests",
      "invitations",
      "services",
      "files",
      "trail",
    ]
  ) assert.ok(s in d, `section ${s}`);
  assert.equal(d.account.id, account.id);
  assert.equal(d.account.email, "ada@example.org");
  assert.equal(d.profile.org, "Society");
  assert.deepEqual(d.journal.map((j: { text: string }) => j.text), ["private one", "public one"]);
  assert.equal(d.applications.length, 1);
  assert.equal(d.applications[0].text, "Twenty characters or more.");
  assert.equal(d.invitations[0].email, "carl@example.org");
  assert.deepEqual(d.proposals, []);
  assert.deepEqual(d.requests, []);
  assert.deepEqual(d.services, []);
  assert.deepEqual(d.files, []);
  const actions = d.trail.map((l: { action: string }) => l.action);
  assert.ok(actions.includes("profile.update"));
  assert.ok(actions.includes("application.create"));
  assert.ok(d.trail.every((l: { hash: string }) => /^[0-9a-f]{64}$/.test(l.hash)));
  assert.ok(!r.text.includes("bob"));
  assert.equal((await t.req("GET", "/api/me/export")).status, 401);
});

Deno.test("export: every area fills its own section", async () => {
  await using t = await testApp({ config: { teamInbox: "team@inbox.test" } });
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const svc = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly job", check: "webhook:" },
  });
  assert.equal(svc.status, 200, svc.text);
  const bytes = new TextEncoder().encode("notes");
  const up = await t.req("PUT", "/api/me/files", {
    token,
    raw: bytes,
    headers: { "content-length": String(bytes.length), "x-file-name": "notes.txt" },
  });
  assert.equal(up.status, 201, up.text);
  const p = await t.req("POST", "/api/contributions", {
    token,
    body: {
      name: "Ada",
      email: "ada@example.org",
      title: "Engines",
      area: "technical",
      summary: "About engines",
      attribution: "keep",
    },
  });
  assert.equal(p.status, 201, p.text);
  await t.req("POST", "/api/requests", {
    body: { name: "Ada", email: "ada@example.org", kind: "tool", text: "A tool for engines" },
  });
  let d = (await t.req("GET", "/api/me/export", { token })).body;
  assert.deepEqual(d.alert_settings, { grouping: true, pending: [] });
  const off = await t.req("PATCH", "/api/me/alert-settings", { token, body: { grouping: false } });
  assert.equal(off.status, 200, off.text);
  d = (await t.req("GET", "/api/me/export", { token })).body;
  assert.deepEqual(d.alert_settings, { grouping: false, pending: [] });
  assert.deepEqual(d.services.map((s: { name: string }) => s.name), ["Nightly job"]);
  assert.deepEqual(d.files.map((f: { name: string }) => f.name), ["notes.txt"]);
  assert.deepEqual(d.proposals.map((x: { title: string }) => x.title), ["Engines"]);
  assert.deepEqual(d.requests.map((x: { text: string }) => x.text), ["A tool for engines"]);
  // The hook's secret address is never exported (only its hash is stored).
  assert.ok(!JSON.stringify(d).includes(new URL(svc.body.hook_url).pathname));
});
