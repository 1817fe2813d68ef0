/**
 * Healthchecks' documented calls and its tests' expectations for periods, grace, OnCalendar,
 * run ids, ping methods and badges, through the real server process (main.ts on 127.0.0.1,
 * its clock the test clock). The app-level cases are in tests/hc_parity_test.ts; here the same
 * calls cross the process's front, its group commit and its jobs.
 */
import assert from "node:assert/strict";
import { bearerApi, withClockedServer } from "./_real_server.ts";

Deno.test({
  name:
    "e2e: Healthchecks' periods, grace, OnCalendar, rid pairing and ping methods, through the real server",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withClockedServer("hc_parity_", { email: "ops@example.org", name: "Ops" }, async (s) => {
      const base = s.server.url;
      const api = bearerApi(base, s.token);
      const key: string = (await api("POST", "/api/me/api-keys", { name: "rw" })).key;
      const hc = async (method: string, path: string, body?: unknown) => {
        const r = await fetch(`${base}${path}`, {
          method,
          headers: { "X-Api-Key": key },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, body: await r.json() };
      };

      // templates/docs/api.md: "timeout": 3600, "grace": 60; then ten minutes, a week, a year.
      for (const [timeout, grace] of [[3600, 60], [600, 120], [604800, 691200], [31536000, 60]]) {
        const r = await hc("POST", "/api/v3/checks/", { name: `t${timeout}`, timeout, grace });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        assert.equal(r.body.timeout, timeout);
        assert.equal(r.body.grace, grace);
      }
      const ten = (await hc("GET", "/api/v3/checks/")).body.checks
        .find((c: { name: string }) => c.name === "t600");
      const uuid: string = ten.uuid;

      // Pinged by GET, POST and HEAD: each ping's method is recorded.
      for (const method of ["GET", "POST", "HEAD"]) {
        const r = await fetch(`${base}/ping/${uuid}`, { method });
        await r.body?.cancel();
        assert.equal(r.status, 200, method);
      }
      const pings = (await hc("GET", `/api/v3/checks/${uuid}/pings/`)).body.pings;
      assert.deepEqual(pings.map((p: { method: string }) => p.method), ["HEAD", "POST", "GET"]);

      // Ten minutes and two of grace: late past 600 s, down past 720 s, as the runner sees it.
      const status = async () => (await hc("GET", `/api/v3/checks/${uuid}`)).body.status;
      assert.equal(await status(), "up");
      await s.clock.advance(601_000);
      assert.equal(await status(), "grace");
      await s.clock.advance(120_000);
      assert.equal(await status(), "down");
      const native = async () =>
        (await api("GET", "/api/me/services")).items.find((i: { uuid: string }) => i.uuid === uuid);
      await s.clock.runJobsUntil(
        "the runner sees it off",
        async () => (await native()).state === "off",
      );
      const item = await native();
      assert.equal(item.interval, 5, "the interval of the list below the period");
      assert.equal(item.period_seconds, 600);
      assert.equal(item.grace_seconds, 120);

      // Overlapping runs by rid (test_it_calculates_overlapping_durations): A's end keeps B open.
      const a = "7918b17b-a745-4db1-8575-9d2e07c97f79";
      const b = "f618072a-7bde-4eee-af63-71a77c5723bc";
      const ping = async (path: string) => {
        const r = await fetch(`${base}/ping/${uuid}${path}`);
        assert.equal(await r.text(), "OK", path);
      };
      await ping(`/start?rid=${a}`);
      await s.clock.advance(60_000);
      await ping(`/start?rid=${b}`);
      await s.clock.advance(60_000);
      await ping(`?rid=${a}`);
      assert.equal((await hc("GET", `/api/v3/checks/${uuid}`)).body.started, true);
      await s.clock.advance(60_000);
      await ping(`?rid=${b}`);
      const ended = (await hc("GET", `/api/v3/checks/${uuid}`)).body;
      assert.equal(ended.started, false);
      assert.equal(ended.last_duration, 120);

      // OnCalendar (test_it_supports_oncalendar_syntax), and its refusal.
      const cal = await hc("POST", "/api/v3/checks/", {
        schedule: "12:34",
        tz: "Europe/Riga",
        grace: 60,
      });
      assert.equal(cal.status, 201);
      assert.equal(cal.body.schedule, "12:34");
      assert.equal(cal.body.tz, "Europe/Riga");
      assert.ok(!("timeout" in cal.body));
      const bad = await hc("POST", "/api/v3/checks/", { schedule: "12:34\nsurprise" });
      assert.equal(bad.status, 400);
      assert.equal(
        bad.body.error,
        "json validation error: schedule is not a valid cron or OnCalendar expression",
      );
    }),
});
