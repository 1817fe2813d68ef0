/**
 * Heartbeat runs end to end: the real server process (main.ts) with its minutely jobs (run at
 * once by the test clock's switch), mailing through a local SMTP relay, its clock moved by the test clock
 * (TEST_CLOCK_FILE). A heartbeat with `threshold: 2` that misses one run is late and alerts
 * nobody; the second missing run mails the one off alert. Paused, its failure and hours of
 * silence alert nobody.
 */
import assert from "node:assert/strict";
import { MINUTE } from "../lib/clock.ts";
import { bearerApi, lookedSince, withClockedServer } from "./_real_server.ts";

const OPS = "ops@runs.test";

Deno.test({
  name: "e2e: two missing runs in a row alert once through the minutely job; paused, nothing",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await withClockedServer("runs_e2e_", { email: OPS, name: "Rita Ops" }, async (
      { token, clock, sink, server },
    ) => {
      const api = bearerApi(server.url, token);
      const mails = () => sink.mails.filter((m) => m.to === OPS);
      const made = await api("POST", "/api/me/services", {
        name: "Nightly export",
        check: "webhook:",
        interval: 5,
        threshold: 2,
      });
      const id = made.item.id;
      const hook = made.hook_url.replace("http://127.0.0.1", server.url);
      const beat = await fetch(hook);
      assert.equal(beat.status, 200);
      await beat.body?.cancel();
      const item = async () =>
        (await api("GET", "/api/me/services")).items.find((s: { id: number }) => s.id === id);

      // One missing run (past twice the interval): late, counted, nobody alerted.
      let mark = server.stdout.text.length;
      await clock.advance(11 * MINUTE);
      await clock.runJobsUntil("a review", () => lookedSince(server.stdout, mark));
      let s = await item();
      assert.equal(s.state, "warn");
      assert.equal(s.failed_checks, 1);
      assert.equal(mails().length, 0, "nobody alerted below the threshold");

      // The second missing run: the runner's look in the minute after mails the one alert.
      await clock.advance(5 * MINUTE);
      await clock.runJobsUntil("the off alert", () => mails().length > 0);
      assert.equal(mails().length, 1, "the off alert");
      assert.match(mails()[0].text, /Nightly export/);
      assert.match(mails()[0].text, /2 failed or missing runs in a row/);
      s = await item();
      assert.equal(s.state, "off");
      assert.equal(s.failed_checks, 2);

      // Paused: a failure (its nudge brings a look this minute) and an hour of silence
      // alert nobody, and the heartbeat reads paused.
      const paused = await api("PATCH", `/api/me/services/${id}`, { paused: true });
      assert.equal(paused.item.paused, true);
      mark = server.stdout.text.length;
      const failed = await fetch(`${hook}/fail`);
      assert.equal(failed.status, 200);
      await failed.body?.cancel();
      await clock.advance(60 * MINUTE);
      await clock.runJobsUntil("a review", () => lookedSince(server.stdout, mark));
      assert.equal(mails().length, 1, "nothing while paused");
      s = await item();
      assert.equal(s.state, "wait");
      assert.equal(s.paused, true);
    });
  },
});
