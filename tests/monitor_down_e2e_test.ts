/**
 * The monitor's own downtime (issue 47, item 4), through the real server process: a server
 * stopped for a quarter of an hour (its test clock moved on while no process ran) reads "no data
 * (monitor down)" for that stretch in the service's history, API and page alike, counted
 * neither as up nor as down; a heartbeat whose deadline fell in it is judged when the server
 * returns, with one off alert that says so; and every minutely run pings the outside watchdog
 * (WATCHDOG_URL, a local receiver on 127.0.0.1 inside CHANNEL_NETWORKS) with `/start` and then
 * its success, before the stop and after the return.
 */
import assert from "node:assert/strict";
import { MINUTE } from "../lib/clock.ts";
import {
  alertBench,
  arrival,
  bearerApi,
  outboxDrained,
  signInByMail,
  testClock,
} from "./_real_server.ts";
import { type ServerProcess, spawnService } from "./_server.ts";
import { localHttp } from "./_servers.ts";

const OWNER = "ops@monitor-down.test";

Deno.test({
  name:
    "e2e: a server stopped for 15 minutes shows no data (monitor down), judges the late heartbeat once, and pings its watchdog",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using bench = await alertBench("monitor_down_e2e_", OWNER);
    const { sink, kvPath } = bench;
    await using clock = await testClock();
    const pings: string[] = [];
    const watchdog = localHttp((req) => {
      pings.push(new URL(req.url).pathname);
      return new Response("OK");
    });
    const env = {
      ...bench.env,
      ...clock.env,
      WATCHDOG_URL: `http://127.0.0.1:${watchdog.port}/ping/5f0c1a2e`,
      CHANNEL_NETWORKS: "127.0.0.0/8",
    };
    let server: ServerProcess | null = null;
    try {
      server = await spawnService(kvPath, env);
      const token = await signInByMail(server.url, sink, OWNER);
      const api = bearerApi(server.url, token);
      const made = await api("POST", "/api/me/services", {
        name: "Nightly export",
        check: "webhook:",
        interval: 5,
      });
      const id = made.item.id;
      const ping = await fetch(`${server.url}${new URL(made.hook_url).pathname}`);
      assert.equal(ping.status, 200);
      await ping.body?.cancel();

      // A minutely run: `/start`, then the success, in that order.
      await clock.runJobs();
      await arrival("the watchdog's success", () => [pings], (p) => p.length >= 2, 10_000);
      assert.deepEqual(pings.slice(0, 2), ["/ping/5f0c1a2e/start", "/ping/5f0c1a2e"]);
      const before = pings.length;

      // The server stops; fifteen minutes pass (the heartbeat's deadline, ten minutes after its
      // ping, falls in them); it starts again on the same KV.
      await server.stop();
      const stoppedAt = clock.now();
      await clock.advance(15 * MINUTE);
      server = await spawnService(kvPath, env);
      const back = bearerApi(server.url, token);

      const offs = () =>
        sink.mails.filter((m) => m.subject === 'Watched service "Nightly export" is off');
      await clock.runJobsUntil("the heartbeat's off alert", () => offs().length > 0, 3);
      const [off] = offs();
      assert.match(off.text, /deadline passed while this monitor was down/);
      assert.match(off.text, /judged now that the monitor runs again/);
      // The watchdog heard the return.
      await arrival(
        "the watchdog's pings after the restart",
        () => [pings.slice(before)],
        (p) => p.includes("/ping/5f0c1a2e/start") && p.includes("/ping/5f0c1a2e"),
        10_000,
      );

      // History: the stretch is no data, neither up nor down.
      const h = await back("GET", `/api/me/services/${id}/history`);
      assert.equal(h.monitor_down.length, 1, JSON.stringify(h.monitor_down));
      const gap = h.monitor_down[0];
      const span = Date.parse(gap.to) - Date.parse(gap.from);
      assert.ok(span >= 15 * MINUTE && span < 17 * MINUTE, `gap of ${span} ms`);
      assert.ok(Date.parse(gap.from) <= stoppedAt);
      // The last two days summed: the quarter of an hour may cross midnight (UTC).
      const days = h.days.slice(-2);
      const sum = (k: "monitor_down_s" | "down_s") =>
        days.reduce((n: number, d: Record<string, number>) => n + d[k], 0);
      assert.ok(sum("monitor_down_s") >= 15 * 60, JSON.stringify(days));
      // The heartbeat was up from its ping until the stop, and is off since its return: the
      // quarter of an hour in between counts for neither, so the days are not down 15 minutes.
      assert.ok(sum("down_s") < 5 * 60, JSON.stringify(days));

      // The service's page says it in words.
      const page = await fetch(`${server.url}/me/services/${id}`, {
        headers: { cookie: `session=${token}` },
      });
      const html = await page.text();
      assert.equal(page.status, 200);
      assert.match(html, /No data \(monitor down\)/);
      assert.match(html, /This monitor was not running then/);

      // One alert only: later runs do not say it again (once the outbox is empty, whatever the
      // run queued is at the relay).
      await clock.runJobs();
      await outboxDrained(server.url);
      assert.equal(offs().length, 1);
    } finally {
      await server?.stop();
      await watchdog.close();
    }
  },
});
