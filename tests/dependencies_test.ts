/**
 * Dependencies between services (issue 47, item 1), in process: chosen through the API and
 * the service's form alike, cycles refused in a plain sentence (directly and through others),
 * a deleted parent taken off its children, and a child off behind an off parent read as
 * unreachable on the dashboard and its page.
 */
import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { testApp } from "./_helpers.ts";

const ORIGIN = "http://test.local";

Deno.test("dependencies: the API's rules, cycles refused, a deleted parent dropped", async () => {
  await using t = await testApp();
  const { token } = await t.account("lan@deps.test");
  const add = async (name: string, depends_on: number[] = []) => {
    const r = await t.req("POST", "/api/me/services", {
      token,
      body: { name, check: "webhook:", interval: 60, depends_on },
    });
    assert.equal(r.status, 200, r.text);
    return r.body.item as { id: number; depends_on: number[] };
  };
  const router = await add("LAN router");
  assert.deepEqual(router.depends_on, [], "none unless chosen");
  const sw = await add("Switch", [router.id]);
  assert.deepEqual(sw.depends_on, [router.id]);
  const nas = await add("NAS", [sw.id, sw.id]);
  assert.deepEqual(nas.depends_on, [sw.id], "without repeats");

  const patch = (id: number, depends_on: unknown) =>
    t.req("PATCH", `/api/me/services/${id}`, { token, body: { depends_on } });
  const refusals: [number, unknown, RegExp][] = [
    [router.id, [nas.id], /"NAS" already depends on "LAN router" \(through "Switch"\)/],
    [router.id, [sw.id], /"Switch" already depends on "LAN router", and a service cannot/],
    [nas.id, [nas.id], /cannot depend on itself/],
    [nas.id, [999999], /999999 is not one of your services/],
    [nas.id, "router", /depends_on/],
  ];
  for (const [id, value, words] of refusals) {
    const r = await patch(id, value);
    assert.equal(r.status, 400, `${JSON.stringify(value)}: ${r.text}`);
    assert.equal(r.body.field, "depends_on");
    assert.match(r.body.error, words);
  }
  const other = await t.account("else@deps.test");
  const theirs = await t.req("POST", "/api/me/services", {
    token: other.token,
    body: { name: "Their router", check: "webhook:", depends_on: [router.id] },
  });
  assert.equal(theirs.status, 400, "another account's service is not one of yours");
  // Stored data untouched by the refusals.
  const listed = (await t.req("GET", "/api/me/services", { token })).body.items as {
    id: number;
    depends_on: number[];
  }[];
  assert.deepEqual(listed.find((s) => s.id === router.id)!.depends_on, []);

  // The NAS on the router directly as well; the switch removed: the NAS keeps the router.
  assert.equal((await patch(nas.id, [sw.id, router.id])).status, 200);
  assert.equal((await t.req("DELETE", `/api/me/services/${sw.id}`, { token })).status, 200);
  const after = (await t.req("GET", "/api/me/services", { token })).body.items as {
    id: number;
    depends_on: number[];
  }[];
  assert.deepEqual(after.find((s) => s.id === nas.id)!.depends_on, [router.id]);
});

Deno.test("dependencies: the form, a cycle beside its field, unreachable on the dashboard and page", async () => {
  await using t = await testApp();
  const { token } = await t.account("form@deps.test");
  const cookie = `session=${token}`;
  const made = async (name: string) =>
    (await t.req("POST", "/api/me/services", {
      token,
      body: { name, check: "webhook:", interval: 60 },
    })).body as { item: { id: number }; hook_url: string };
  const router = await made("LAN router");
  const nas = await made("NAS");
  const post = (id: number, fields: Record<string, string>) =>
    t.req("POST", `/me/services/${id}`, {
      raw: new URLSearchParams({
        name: id === nas.item.id ? "NAS" : "LAN router",
        what: "",
        group: "Public",
        interval: "60",
        threshold: "1",
        alerts: "on",
        had_depends: "1",
        ...fields,
      }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
    });
  const page = await t.req("GET", `/me/services/${nas.item.id}`, { headers: { cookie } });
  assert.match(page.text, /<legend>Depends on<\/legend>/);
  assert.match(page.text, /<label for="[^"]+">LAN router<\/label>/);
  const saved = await post(nas.item.id, { [`d-${router.item.id}`]: "on" });
  assert.equal(saved.status, 303, saved.text.slice(0, 300));
  const item = async (id: number) =>
    ((await t.req("GET", "/api/me/services", { token })).body.items as {
      id: number;
      depends_on: number[];
    }[]).find((s) => s.id === id)!;
  assert.deepEqual((await item(nas.item.id)).depends_on, [router.item.id]);
  // The cycle, from the router's form: said beside the field, the form again.
  const cycle = await post(router.item.id, { [`d-${nas.item.id}`]: "on" });
  assert.equal(cycle.status, 400);
  assert.match(
    cycle.text,
    /id="f-depends_on-error"[^>]*>[^<]*(&quot;|")NAS(&quot;|") already depends on/,
  );
  assert.deepEqual((await item(router.item.id)).depends_on, []);
  // Unticked all: none.
  assert.equal((await post(nas.item.id, {})).status, 303);
  assert.deepEqual((await item(nas.item.id)).depends_on, []);
  assert.equal((await post(nas.item.id, { [`d-${router.item.id}`]: "on" })).status, 303);

  // Both fail: the NAS reads unreachable behind the router, the router down.
  for (const s of [router, nas]) {
    const r = await t.req("POST", `${new URL(s.hook_url).pathname}/fail`);
    assert.equal(r.status, 200);
  }
  // The looks the failures asked for (the KV queue's, in the server): off with their alerts.
  await runDueChecks(t.deps);
  const board = await t.req("GET", "/watch", { headers: { cookie } });
  assert.match(board.text, /unreachable \(LAN router off\)/);
  assert.match(board.text, /class="watched watched-unreachable"/);
  assert.match(board.text, /class="watched watched-off"/);
  const nasPage = await t.req("GET", `/me/services/${nas.item.id}`, { headers: { cookie } });
  assert.match(nasPage.text, /state-unreachable/);
  assert.match(nasPage.text, /unreachable \(LAN router off\)/);
  // The router back: the NAS is down on its own.
  t.clock.advance(1_000);
  await t.req("POST", new URL(router.hook_url).pathname);
  const later = await t.req("GET", "/watch", { headers: { cookie } });
  assert.doesNotMatch(later.text, /watched-unreachable/);
  assert.match(later.text, /class="watched watched-off"/);
});
