/**
 * Alerts across a crash (issue 30, part 5): the real server process on one KV file, killed with
 * SIGKILL while it sends an alert (the mail relay and the alert channel have taken the alert but
 * not answered yet, so the server cannot know it was delivered), then started again on the same
 * file. First the off of a `/fail` is cut (the KV queue's look is sending it) and the job comes
 * back right after the restart, before the off could be sent again; then the back is cut while
 * the server sends it. The mail relay and the channel receiver stay up. Asserted: nothing is
 * lost, every copy of an alert carries the same identity (mail `Message-ID`, `X-Webhook-Id`), no
 * back arrives before the last copy of its off, and what a kill cut is sent again within a minute
 * of the restart by the server's clock: the test clock (TEST_CLOCK_FILE) lets the claims' 40 s and
 * the restart's 45 s pass at once, and the restarted process resumes on its own (no step asks).
 */
import assert from "node:assert/strict";
import { RESUME_AFTER_MS } from "../jobs/mod.ts";
import { alertBench, arrival, bearerApi, signInByMail, testClock } from "./_real_server.ts";
import { type ServerProcess, spawnService } from "./_server.ts";
import { type ReceivedPost, webhookReceiver } from "./_servers.ts";
import type { Received } from "./_smtp.ts";

/** docs/api.md: what a crash cut resumes within a minute of the restart (server's clock). */
const RESUME_MS = 60_000;
/** What a loaded machine may add, in real time, to a send after its time came. */
const SLACK_MS = 15_000;
const OPS = "ops@crash.test";
const OFF = 'Watched service "Backup" is off';
const BACK = 'Watched service "Backup" is back';

Deno.test({
  name:
    "e2e: killed while sending, every alert arrives, in order, with one identity, within a minute of the restart",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    // The owner may post to a channel on 127.0.0.1.
    await using bench = await alertBench("crash_e2e_", OPS);
    const { sink, kvPath } = bench;
    await using clock = await testClock();
    const env = { ...bench.env, ...clock.env };
    await using pager = webhookReceiver(bench.certs);
    let server: ServerProcess | null = null;
    try {
      server = await spawnService(kvPath, env);
      const token = await signInByMail(server.url, sink, OPS);
      const ch = await bearerApi(server.url, token)("POST", "/api/me/channels", {
        name: "Pager",
        url: pager.url,
      });
      const made = await bearerApi(server.url, token)("POST", "/api/me/services", {
        name: "Backup",
        check: "webhook:",
        channels: [ch.item.id],
      });
      const path = new URL(made.hook_url).pathname;
      const ping = async (signal = "") => {
        const r = await fetch(`${server!.url}${path}${signal}`);
        assert.equal(r.status, 200, await r.text());
      };
      await ping();
      const mails = () => sink.mails.filter((m) => m.to === OPS && m.subject.includes("Backup"));
      const copies = (title: string) => ({
        mails: () => mails().filter((m) => m.subject === title),
        posts: () => pager.posts.filter((p) => p.body.title === title),
      });
      /** Both the mail and the post of `title` arrived `n` times (or more), within `ms`. */
      const arrived = (title: string, n: number, ms: number) =>
        Promise.all([
          arrival(`mail "${title}" #${n}`, () => [copies(title).mails()], (l) => l.length >= n, ms),
          arrival(`post "${title}" #${n}`, () => [copies(title).posts()], (l) => l.length >= n, ms),
        ]).catch((err) => {
          throw new Error(
            `${err.message}; mails: ${mails().map((m) => m.subject).join(" | ")}; posts: ${
              pager.posts.map((p) => p.body.title).join(" | ")
            }; log: ${server?.stdout.text.split("\n").filter((l) => /job|fail/.test(l)).join(" ")}`,
          );
        });
      const holdAll = (title: string) => {
        sink.holding = (m: Received) => m.subject === title;
        pager.holding = (p: ReceivedPost) => p.body.title === title;
      };
      const release = () => {
        sink.holding = () => false;
        pager.holding = () => false;
      };
      /** Kills the server and starts it again; answers the server's time of the restart. */
      const restart = async () => {
        await server!.stop(); // SIGKILL
        release();
        server = await spawnService(kvPath, env);
        return clock.now();
      };
      /** The restart's wait, passed at once on the server's clock: the resume run is its own. */
      const resumeTime = () => clock.advance(RESUME_AFTER_MS + 1_000);

      // 1. The off, killed while it is being sent (the relay and the channel hold it).
      holdAll(OFF);
      await ping("/fail");
      await arrived(OFF, 1, 30_000);
      // The back must never overtake the off's second copy: hold the back when it comes.
      const restarted = await restart();
      holdAll(BACK);
      // The job succeeds again right after the restart: the next minutely look finds it back.
      await ping();
      await resumeTime();
      await arrived(OFF, 2, SLACK_MS);
      const offAgain = clock.now() - restarted;

      // 2. The back, killed while it is being sent. It comes with the next look after the off's
      // copies: the resume run's, else a minutely run asked for. Killed as soon as both copies
      // are held: a send held past its 10 s is a failed attempt, retried after its backoff.
      // Asked every 3 s until it comes, not once: on a loaded machine the one asked run could
      // come before the off's copies were done, and the back then waited for the wall clock's
      // minute. The run that brings the back is still sending it (held) when the kill comes.
      const backHeld = arrived(BACK, 1, 60_000);
      let held = false;
      void (async () => {
        while (!held) {
          await new Promise((r) => setTimeout(r, 3_000));
          if (!held) await clock.runJobs().catch(() => {});
        }
      })();
      await backHeld.finally(() => held = true);
      const restartedAgain = await restart();
      await resumeTime();
      await arrived(BACK, 2, SLACK_MS);
      const backAgain = clock.now() - restartedAgain;
      if (Deno.env.get("SHOW_FIGURES")) {
        console.log(
          `crash e2e: cut off sent again ${offAgain} ms after the restart, cut back ${backAgain} ms`,
        );
      }
      assert.ok(offAgain <= RESUME_MS + SLACK_MS, `off again after ${offAgain} ms`);
      assert.ok(backAgain <= RESUME_MS + SLACK_MS, `back again after ${backAgain} ms`);

      // Order: every copy of the off before the first back, by mail and by post.
      const order = mails().map((m) => m.subject);
      assert.ok(order.lastIndexOf(OFF) < order.indexOf(BACK), order.join(" | "));
      const postOrder = pager.posts.map((p) => p.body.title);
      assert.ok(postOrder.lastIndexOf(OFF) < postOrder.indexOf(BACK), postOrder.join(" | "));
      // One identity per alert: its copies share it, and the two alerts differ.
      for (const title of [OFF, BACK]) {
        const ids = new Set(copies(title).mails().map((m) => m.messageId));
        assert.equal(ids.size, 1, `${title}: Message-IDs ${[...ids].join(", ")}`);
        assert.ok([...ids][0], "a Message-ID");
        const hooks = new Set(copies(title).posts().map((p) => p.id));
        assert.equal(hooks.size, 1, `${title}: X-Webhook-Ids ${[...hooks].join(", ")}`);
      }
      assert.notEqual(copies(OFF).mails()[0].messageId, copies(BACK).mails()[0].messageId);
      assert.notEqual(copies(OFF).posts()[0].id, copies(BACK).posts()[0].id);
    } finally {
      await server?.stop();
    }
  },
});
