/**
 * Healthchecks' Management API through the real server process (main.ts on 127.0.0.1): the
 * curl lines of its documentation (templates/docs/api.md) run verbatim by `sh` with only
 * SITE_ROOT, the key and the example UUIDs replaced; then every endpoint's statuses: missing,
 * wrong and read-only keys, another account's checks, bodies over the limit, wrong methods,
 * and two `?create=1` pings of one new slug at once. Only 127.0.0.1 is contacted.
 */
import assert from "node:assert/strict";
import { bearerApi, startFreshServer } from "./_real_server.ts";
import { sh } from "./_sh.ts";

/** The server's BASE_URL (tests/_real_server.ts), which the answers' addresses start with. */
const BASE_URL = "http://127.0.0.1";

/** The example UUIDs of Healthchecks' api.md, each replaced by a check made here. */
const DOC_UUIDS = ["7918b17b-a745-4db1-8575-9d2e07c97f79", "f618072a-7bde-4eee-af63-71a77c5723bc"];

Deno.test({
  name: "e2e: Healthchecks' Management API: its documented curl lines verbatim, then every status",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using s = await startFreshServer();
    const api = bearerApi(s.base, await s.signIn("ops@example.org"));
    const rw: string = (await api("POST", "/api/me/api-keys", { name: "rw" })).key;
    const ro: string = (await api("POST", "/api/me/api-keys", { name: "ro", readonly: true }))
      .key;
    assert.equal(rw.length, 32);
    assert.equal(ro.length, 32);
    const vars = (more: Record<string, string> = {}) => ({
      SITE_ROOT: s.base,
      "your-api-key": rw,
      ...more,
    });
    const curl = async (line: string, more: Record<string, string> = {}) => {
      const r = await sh(line, vars(more));
      assert.equal(r.code, 0, `${line}\n${r.stderr}`);
      return r.stdout;
    };

    // Create a new check, both forms (the key in a header, then in the body).
    let created = JSON.parse(
      await curl(`curl SITE_ROOT/api/v3/checks/ \\
    --header "X-Api-Key: your-api-key" \\
    --data '{"name": "Backups", "tags": "prod www", "timeout": 3600, "grace": 60}'`),
    );
    assert.equal(created.name, "Backups");
    assert.equal(created.tags, "prod www");
    assert.equal(created.timeout, 3600);
    assert.equal(created.grace, 60);
    assert.equal(created.status, "new");
    assert.equal(created.ping_url, `${BASE_URL}/ping/${created.uuid}`);
    assert.equal(created.update_url, `${BASE_URL}/api/v3/checks/${created.uuid}`);
    const first: string = created.uuid;
    created = JSON.parse(
      await curl(`curl SITE_ROOT/api/v3/checks/ \\
    --data '{"api_key": "your-api-key", "name": "Backups", "tags": "prod www", "timeout": 3600, "grace": 60}'`),
    );
    const second: string = created.uuid;
    assert.notEqual(second, first, "without unique, each create makes a check");

    // List checks, get one.
    const list = JSON.parse(
      await curl('curl --header "X-Api-Key: your-api-key" SITE_ROOT/api/v3/checks/'),
    );
    assert.deepEqual(
      list.checks.map((c: { uuid: string }) => c.uuid).sort(),
      [first, second].sort(),
    );
    const one = JSON.parse(
      await curl(`curl --header "X-Api-Key: your-api-key" SITE_ROOT/api/v3/checks/<uuid>`, {
        "<uuid>": first,
      }),
    );
    assert.equal(one.uuid, first);

    // Update, both forms.
    const uuidVars = { [DOC_UUIDS[0]]: first, [DOC_UUIDS[1]]: first };
    for (
      const line of [
        `curl SITE_ROOT/api/v3/checks/7918b17b-a745-4db1-8575-9d2e07c97f79 \\
    --header "X-Api-Key: your-api-key" \\
    --data '{"name": "Backups", "tags": "prod www", "timeout": 3600, "grace": 60}'`,
        `curl SITE_ROOT/api/v3/checks/7918b17b-a745-4db1-8575-9d2e07c97f79 \\
    --data '{"api_key": "your-api-key", "name": "Backups", "tags": "prod www", "timeout": 3600, "grace": 60}'`,
      ]
    ) {
      const updated = JSON.parse(await curl(line, uuidVars));
      assert.equal(updated.uuid, first);
      assert.equal(updated.timeout, 3600);
    }

    // Pings: a start, a success with a body, through the check's own ping address.
    const rid = crypto.randomUUID();
    for (const [path, body] of [[`/start?rid=${rid}`, ""], [`?rid=${rid}`, "all good"]]) {
      const r = await fetch(`${s.base}/ping/${first}${path}`, { method: "POST", body });
      assert.equal(await r.text(), "OK");
    }
    const pings = JSON.parse(
      await curl(
        `curl SITE_ROOT/api/v3/checks/f618072a-7bde-4eee-af63-71a77c5723bc/pings/ \\
    --header "X-Api-Key: your-api-key"`,
        uuidVars,
      ),
    ).pings;
    assert.deepEqual(pings.map((p: { type: string; n: number }) => [p.type, p.n]), [
      ["success", 2],
      ["start", 1],
    ]);
    assert.equal(pings[0].rid, rid);
    assert.equal(pings[0].body_url, `${BASE_URL}/api/v3/checks/${first}/pings/2/body`);
    assert.equal(typeof pings[0].duration, "number");
    const body = await curl(
      `curl SITE_ROOT/api/v3/checks/f618072a-7bde-4eee-af63-71a77c5723bc/pings/397/body \\
    --header "X-Api-Key: your-api-key"`,
      { ...uuidVars, "/397/": "/2/" },
    );
    assert.equal(body, "all good");
    const up = JSON.parse(
      await curl(`curl --header "X-Api-Key: your-api-key" SITE_ROOT/api/v3/checks/<uuid>`, {
        "<uuid>": first,
      }),
    );
    assert.equal(up.status, "up");
    assert.equal(up.n_pings, 2);
    assert.equal(typeof up.last_duration, "number");

    // Pause, resume (the documented --data "" forms), flips, channels, badges.
    const paused = JSON.parse(
      await curl(
        `curl SITE_ROOT/api/v3/checks/7918b17b-a745-4db1-8575-9d2e07c97f79/pause \\
    --request POST --header "X-Api-Key: your-api-key" --data ""`,
        uuidVars,
      ),
    );
    assert.equal(paused.status, "paused");
    const resumeLine = `curl SITE_ROOT/api/v3/checks/7918b17b-a745-4db1-8575-9d2e07c97f79/resume \\
    --request POST --header "X-Api-Key: your-api-key" --data ""`;
    const resumed = JSON.parse(await curl(resumeLine, uuidVars));
    assert.equal(resumed.status, "new", JSON.stringify(resumed));
    assert.deepEqual(JSON.parse(await curl(resumeLine, uuidVars)), {
      error: "check is not paused",
    });
    const flips = JSON.parse(
      await curl(
        `curl SITE_ROOT/api/v3/checks/f618072a-7bde-4eee-af63-71a77c5723bc/flips/ \\
    --header "X-Api-Key: your-api-key"`,
        uuidVars,
      ),
    ).flips;
    // The pause is a flip at once (0); resumed, the check reads `new` (0) until its next success,
    // whenever the runner looks.
    assert.equal(flips[0].up, 0);
    assert.match(flips[0].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    const channels = JSON.parse(
      await curl('curl --header "X-Api-Key: your-api-key" SITE_ROOT/api/v3/channels/'),
    );
    assert.deepEqual(channels, { channels: [] });
    const badges = JSON.parse(
      await curl('curl --header "X-Api-Key: your-api-key" SITE_ROOT/api/v3/badges/'),
    );
    // `*` and each tag of the checks ("prod www"), their addresses answering through the server.
    assert.ok(["*", "prod", "www"].every((tag) => tag in badges.badges), JSON.stringify(badges));
    const svg = await curl(`curl -fsS '${badges.badges.prod.svg3.replace(BASE_URL, s.base)}'`);
    assert.match(svg, /^<svg /);
    const shields = JSON.parse(
      await curl(`curl -fsS '${badges.badges["*"].shields.replace(BASE_URL, s.base)}'`),
    );
    assert.equal(shields.schemaVersion, 1);

    // Delete: the check as it was; then it is gone.
    const deleted = JSON.parse(
      await curl(
        `curl SITE_ROOT/api/v3/checks/7918b17b-a745-4db1-8575-9d2e07c97f79 \\
    --request DELETE --header "X-Api-Key: your-api-key"`,
        { [DOC_UUIDS[0]]: second },
      ),
    );
    assert.equal(deleted.uuid, second);

    // --- Statuses, through fetch.
    const call = async (
      method: string,
      path: string,
      init: { key?: string; body?: BodyInit } = {},
    ) => {
      const headers: Record<string, string> = {};
      if (init.key !== undefined) headers["X-Api-Key"] = init.key;
      const r = await fetch(`${s.base}${path}`, { method, headers, body: init.body });
      const text = await r.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch { /* a text answer */ }
      return { status: r.status, json, text, headers: r.headers };
    };
    const checkPath = `/api/v3/checks/${first}`;
    const writes: [string, string][] = [
      ["POST", "/api/v3/checks/"],
      ["POST", checkPath],
      ["DELETE", checkPath],
      ["POST", `${checkPath}/pause`],
      ["POST", `${checkPath}/resume`],
      ["GET", `${checkPath}/pings/`],
      ["GET", `${checkPath}/pings/1/body`],
      ["GET", "/api/v3/channels/"],
    ];
    const reads: [string, string][] = [
      ["GET", "/api/v3/checks/"],
      ["GET", checkPath],
      ["GET", `${checkPath}/flips/`],
      ["GET", "/api/v3/badges/"],
    ];
    for (const [method, path] of [...writes, ...reads]) {
      for (const key of [undefined, "short", "x".repeat(33)]) {
        const r = await call(method, path, { key });
        assert.equal(r.status, 401, `${method} ${path} ${key}`);
        assert.deepEqual(r.json, { error: "missing api key" });
      }
      const wrong = await call(method, path, { key: "hcw_" + "A".repeat(28) });
      assert.equal(wrong.status, 401, `${method} ${path}`);
      assert.deepEqual(wrong.json, { error: "wrong api key" });
    }
    // A read-only key: refused on every write as Healthchecks' `authorize` refuses it.
    for (const [method, path] of writes) {
      const r = await call(method, path, { key: ro });
      assert.equal(r.status, 401, `${method} ${path}`);
      assert.deepEqual(r.json, { error: "wrong api key" });
    }
    // ... and reads what it may, with unique_key instead of the uuid and its addresses.
    const roList = await call("GET", "/api/v3/checks/", { key: ro });
    assert.equal(roList.status, 200);
    const roCheck = (roList.json as { checks: Record<string, unknown>[] }).checks[0];
    assert.equal(roCheck.uuid, undefined);
    assert.equal(roCheck.ping_url, undefined);
    assert.match(String(roCheck.unique_key), /^[0-9a-f]{40}$/);
    const byKey = await call("GET", `/api/v3/checks/${roCheck.unique_key}`, { key: ro });
    assert.equal(byKey.status, 200);
    assert.equal((await call("GET", `${checkPath}/flips/`, { key: ro })).status, 200);

    // Another account's check is none of this account's: 404 on every path naming it.
    const other = bearerApi(s.base, await s.signIn("other@example.org"));
    const otherKey: string = (await other("POST", "/api/me/api-keys", { name: "k" })).key;
    for (const [method, path] of [...writes, ...reads]) {
      if (!path.includes(first)) continue;
      const r = await call(method, path, { key: otherKey });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.deepEqual(r.json, { error: "not found" });
    }
    assert.deepEqual((await call("GET", "/api/v3/checks/", { key: otherKey })).json, {
      checks: [],
    });
    // A check that is none: 404; a path that is no uuid: 404.
    for (const path of [`/api/v3/checks/${crypto.randomUUID()}`, "/api/v3/checks/not-a-uuid"]) {
      assert.equal((await call("GET", path, { key: rw })).status, 404, path);
    }

    // Bodies: not JSON, not an object, over the limit.
    const bad = await call("POST", "/api/v3/checks/", { key: rw, body: "{name" });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, { error: "could not parse request body" });
    const list2 = await call("POST", "/api/v3/checks/", { key: rw, body: "[1]" });
    assert.deepEqual(list2.json, { error: "json validation error: value is not an object" });
    const huge = await call("POST", "/api/v3/checks/", {
      key: rw,
      body: JSON.stringify({ name: "Huge", desc: "x".repeat(1024 * 1024) }),
    });
    assert.equal(huge.status, 413);
    assert.equal(typeof (huge.json as { error: string }).error, "string");
    const tooLong = await call("POST", "/api/v3/checks/", {
      key: rw,
      body: JSON.stringify({ name: "x".repeat(101) }),
    });
    assert.equal(tooLong.status, 400);
    assert.deepEqual(tooLong.json, { error: "json validation error: name is too long" });

    // Wrong methods: 405 with the path's methods; OPTIONS answers CORS.
    for (
      const [method, path, allow] of [
        ["PUT", "/api/v3/checks/", "GET, POST, OPTIONS"],
        ["PATCH", checkPath, "POST, DELETE, GET, OPTIONS"],
        ["GET", `${checkPath}/pause`, "POST, OPTIONS"],
        ["POST", `${checkPath}/flips/`, "GET, OPTIONS"],
      ]
    ) {
      const r = await call(method, path, { key: rw });
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.get("allow"), allow);
    }
    const pre = await call("OPTIONS", "/api/v3/checks/");
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-headers"), "X-Api-Key");
    // Status: no key, text.
    const status = await call("GET", "/api/v3/status/");
    assert.equal(status.status, 200);
    assert.equal(status.text, "OK");

    // Every version answers; v1's status of a run under way is "started".
    await fetch(`${s.base}/ping/${first}/start`).then((r) => r.body?.cancel());
    for (const v of [1, 2, 3]) {
      const r = await call("GET", `/api/v${v}/checks/${first}`, { key: rw });
      assert.equal(r.status, 200);
      const c = r.json as Record<string, unknown>;
      assert.equal(c.status, v === 1 ? "started" : "new");
      assert.equal(c.started, true);
      assert.equal(c.update_url, `${BASE_URL}/api/v${v}/checks/${first}`);
    }

    // Auto-provisioning: two `?create=1` pings of one new slug at once make one check.
    const pingKey: string = (await api("POST", "/api/me/ping-key")).ping_key;
    const both = await Promise.all(
      [1, 2].map(() =>
        fetch(`${s.base}/ping/${pingKey}/nightly-db?create=1`, { method: "POST" }).then(
          async (r) => [r.status, await r.text()],
        )
      ),
    );
    assert.deepEqual(both.map(([, t]) => t).sort(), ["Created", "OK"]);
    assert.deepEqual(both.map(([st]) => st).sort(), [200, 201]);
    const slugged = await call("GET", "/api/v3/checks/", { key: rw });
    const named = (slugged.json as { checks: { name: string }[] }).checks
      .filter((c) => c.name === "nightly-db");
    assert.equal(named.length, 1);
  },
});
