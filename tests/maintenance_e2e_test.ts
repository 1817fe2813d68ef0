/**
 * A maintenance window end to end: the real server process (main.ts) with its minutely jobs
 * (run at once by the test clock's switch), mailing through a local SMTP relay, its clock moved by the test clock (TEST_CLOCK_FILE). A
 * heartbeat that fails inside a window alerts nobody at the runner's look; when the window has
 * ended with the heartbeat still off, the next minute's look mails the off alert, and an hour
 * later its reminder (remind: 1).
 */
import assert from "node:assert/strict";
import { MINUTE } from "../lib/clock.ts";
import { lookedSince, withClockedServer } from "./_real_server.ts";

const OPS = "ops@window.test";

Deno.test({
  name: "e2e: a failure inside a maintenance window alerts nobody, and alerts when it outlasts it",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await withClockedServer("window_e2e_", { email: OPS, name: "Wendy Ops" }, async (
      { token, clock, sink, server },
    ) => {
      const api = async (method: string, path: string, body?: unknown) => {
        const r = await fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, body: await r.json() };
      };
      const made = await api("POST", "/api/me/services", {
        name: "Nightly backup",
        check: "webhook:",
        interval: 5,
        remind: 1,
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      const hook = made.body.hook_url.replace("http://127.0.0.1", server.url);
      assert.equal((await fetch(hook)).status, 200);

      const now = clock.now();
      const w = await api("POST", "/api/me/maintenance", {
        name: "Disk swap",
        services: [made.body.item.id],
        from: new Date(now - MINUTE).toISOString(),
        to: new Date(now + 30 * MINUTE).toISOString(),
      });
      assert.equal(w.status, 201, JSON.stringify(w.body));
      assert.ok(w.body.item.running_until);

      // It fails in the window: the runner's look (this minute) alerts nobody.
      const mark = server.stdout.text.length;
      const failed = await fetch(`${hook}/fail`);
      assert.equal(failed.status, 200);
      await failed.body?.cancel();
      await clock.runJobsUntil("a review", () => lookedSince(server.stdout, mark));
      assert.equal(sink.mails.filter((m) => m.to === OPS).length, 0, "nobody alerted");
      const svg = await fetch(`${server.url}/api/me/services/${made.body.item.id}/history`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.ok((await svg.json()).days.at(-1).maintenance_s > 0, "the day marks the window");

      // The window ends, the heartbeat is still off: the next look mails the alert.
      await clock.advance(31 * MINUTE);
      await clock.runJobsUntil("the off alert", () => sink.mails.some((m) => m.to === OPS));
      const mail = sink.mails.find((m) => m.to === OPS);
      assert.ok(mail, "the off alert after the window");
      assert.match(mail.text, /Nightly backup/);
      assert.match(mail.text, /is off/);

      // Still off an hour later: the minutely job sends the reminder (remind: 1 hour).
      await clock.advance(61 * MINUTE);
      await clock.runJobsUntil(
        "the reminder",
        () => sink.mails.filter((m) => m.to === OPS).length >= 2,
      );
      const reminder = sink.mails.filter((m) => m.to === OPS)[1];
      assert.ok(reminder, "the reminder an hour on");
      assert.match(reminder.text, /is still off/);
      assert.match(reminder.text, /repeats every 1 hour while it stays off/);
    });
  },
});
