/**
 * Alerts at the moment of change (issue 44 parts 2 to 5), through the real server process
 * (main.ts) mailing through a local SMTP relay and posting to a signed alert channel, pinged
 * with curl as cron lines do:
 * - flips: up, down, up within a minute are three flips of Healthchecks' API, each there
 *   within seconds of its ping;
 * - a url check failing from its first result alerts at its next look;
 * - a heartbeat past its deadline, a run past its grace and that failing url check alert
 *   within 5 s (plus a loaded machine's slack) of the moment they turned off;
 * - a follow-up of an outage within 35 s of its first alert (group_wait 30 s), and the back
 *   summary as fast.
 * The server's test clock (TEST_CLOCK_FILE) jumps to a few seconds before each moment; from
 * there everything runs in real time, and each delay is measured on the server's clock, from
 * the moment the service turned off to the mail's and the post's arrival.
 */
import assert from "node:assert/strict";
import {
  alertBench,
  arrival,
  bearerApi,
  cronPing,
  looksLogged,
  outboxDrained,
  signInByMail,
  testClock,
} from "./_real_server.ts";
import { spawnService } from "./_server.ts";
import { hmacSignature, localHttp, type ReceivedPost, webhookReceiver } from "./_servers.ts";
import type { Received } from "./_smtp.ts";

/** The promise: an alert within 5 s of the moment; a follow-up within 35 s of the first. */
const PROMISED_MS = 5_000;
const FOLLOW_UP_MS = 35_000;
/** What a loaded test machine (eight engineers on two cores) may add. */
const SLACK_MS = 5_000;
/**
 * How far before each moment the server's clock is put: that much is waited in real time. More
 * than the second within which the server notices a moved clock (lib/clock.ts `atTime`), so each
 * moment is met, not passed.
 */
const LEAD_MS = 1_500;
const OPS = "ops@moments.test";
const MINUTE = 60_000;

Deno.test({
  name: "e2e: flips at each ping; off alerts within seconds of their moment; follow-ups in 35 s",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using bench = await alertBench("moments_e2e_", OPS);
    const sink = bench.sink;
    await using clock = await testClock();
    await using pager = webhookReceiver(bench.certs);
    // "Local API": 500 from its very first check.
    const failingApi = localHttp(() => new Response("boom", { status: 500 }));
    await using server = await spawnService(bench.kvPath, { ...bench.env, ...clock.env });
    try {
      const token = await signInByMail(server.url, sink, OPS);
      const api = bearerApi(server.url, token);
      const ch = await api("POST", "/api/me/channels", { name: "Pager", url: pager.url });
      const make = async (name: string, more: Record<string, unknown> = {}) => {
        const made = await api("POST", "/api/me/services", {
          name,
          check: "webhook:",
          interval: 5,
          channels: [ch.item.id],
          ...more,
        });
        const hook = made.hook_url
          ? `${server.url}${new URL(made.hook_url).pathname}` // the server's own port
          : "";
        return { item: made.item, hook, name };
      };
      /** The server's time now. */
      const serverNow = () => clock.now();
      const mailsAt = new Map<Received, number>();
      const mails = () => {
        for (const m of sink.mails) if (!mailsAt.has(m)) mailsAt.set(m, serverNow());
        return sink.mails.filter((m) => m.to === OPS);
      };
      const figures: string[] = [];
      /**
       * The mail and the signed post titled `title`, both within `within` of `moment` (server
       * clock); answers the later arrival's time on the server's clock.
       */
      const arrived = async (title: string, moment: number, within: number) => {
        const wait = () => moment + within + SLACK_MS - serverNow();
        const [mail, post] = await Promise.all([
          arrival(`mail "${title}"`, mails, (m) => m.subject === title, wait()),
          arrival<ReceivedPost>(
            `post "${title}"`,
            () => pager.posts,
            (p) => p.body.title === title,
            wait(),
          ),
        ]).catch((err) => {
          throw new Error(
            `${err.message}; mails: ${mails().map((m) => m.subject).join(" | ")}; log: ${
              server.stdout.text.split("\n").filter((l) => /"job"|queued|poll|error|warn/.test(l))
                .slice(-20).join(" ")
            }`,
          );
        });
        assert.equal(post.signature, await hmacSignature(ch.secret, post.raw));
        const ms = { mail: mailsAt.get(mail)! - moment, post: post.at + clock.offset() - moment };
        figures.push(`${title}: mail ${ms.mail} ms, post ${ms.post} ms after the moment`);
        assert.ok(
          Math.max(ms.mail, ms.post) <= within + SLACK_MS,
          `${title}: ${JSON.stringify(ms)}`,
        );
        return moment + Math.max(ms.mail, ms.post);
      };
      /** Puts the server's clock LEAD_MS before `moment` (never back). */
      const leadUpTo = async (moment: number) => {
        const ahead = moment - LEAD_MS - serverNow();
        if (ahead > 0) await clock.advance(ahead);
      };
      const offTitle = (name: string) => `Watched service "${name}" is off`;
      const list = async () =>
        (await api("GET", "/api/me/services")).items as {
          id: number;
          state: string;
          beat: string | null;
          uuid: string | null;
        }[];

      // 1. Flips: up, down, up within a minute, each in Healthchecks' flips within seconds.
      const key = (await api("POST", "/api/me/api-keys", { name: "flips" })).key as string;
      const job = await make("Nightly backup");
      const flips = async () => {
        const r = await fetch(`${server.url}/api/v3/checks/${job.item.uuid}/flips/`, {
          headers: { "X-Api-Key": key },
        });
        assert.equal(r.status, 200);
        return (await r.json()).flips as { timestamp: string; up: number }[];
      };
      const flipsBegan = Date.now();
      for (const [i, exit] of ([0, "fail", 0] as const).entries()) {
        await cronPing(job.hook, exit);
        const until = Date.now() + PROMISED_MS + SLACK_MS;
        let got = await flips();
        while (got.length < i + 1 && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 100));
          got = await flips();
        }
        assert.equal(got.length, i + 1, `flip ${i + 1} within seconds: ${JSON.stringify(got)}`);
      }
      assert.deepEqual((await flips()).map((f) => f.up), [1, 0, 1], "newest first");
      assert.ok(Date.now() - flipsBegan < MINUTE, "up, down, up within a minute");

      // 2. and 3. A url check failing from its first result: the creation shows it off (no
      // mail); its next look, at the next minute (not an interval later), alerts within
      // seconds of that look's time.
      const localApi = await make("Local API", {
        check: `url:http://127.0.0.1:${failingApi.port}/`,
      });
      assert.equal(localApi.item.state, "off", "the first result, shown at creation");
      const nextLook = Math.floor(Date.parse(localApi.item.created) / MINUTE) * MINUTE + MINUTE;
      // No mail from the creation: its first result was judged before it answered, so once the
      // outbox is empty whatever that result queued is at the relay.
      await outboxDrained(server.url);
      assert.deepEqual(mails().filter((m) => m.subject.includes("Local API")), []);
      await leadUpTo(nextLook);
      await arrived(offTitle("Local API"), nextLook, PROMISED_MS);

      // A heartbeat past its deadline (interval 5 minutes: off past 10 minutes after its beat).
      const exporter = await make("Export");
      await cronPing(exporter.hook, 0);
      const beat = Date.parse((await list()).find((s) => s.id === exporter.item.id)!.beat!);
      const deadline = beat + 10 * MINUTE + 1;
      await leadUpTo(deadline);
      await arrived(offTitle("Export"), deadline, PROMISED_MS);

      // A run past its grace (the interval: 5 minutes after its start).
      const importer = await make("Import");
      await cronPing(importer.hook, 0);
      const started = await fetch(`${importer.hook}/start`);
      assert.equal(started.status, 200);
      const graceEnd = Date.parse((await started.json()).received) + 5 * MINUTE + 1;
      await leadUpTo(graceEnd);
      await arrived(offTitle("Import"), graceEnd, PROMISED_MS);

      // 4. Three of four at one place fail together: the first at once, the two others as one
      // follow-up within 35 s of it; back together: one summary as fast.
      const lan: Awaited<ReturnType<typeof make>>[] = [];
      for (const name of ["Router", "Printer", "NAS", "Camera"]) {
        const s = await make(name, { place: "LAN" });
        await cronPing(s.hook, 0);
        lan.push(s);
      }
      const failedAt = serverNow();
      const failing = server.stdout.text.length;
      await Promise.all(lan.slice(0, 3).map((s) => cronPing(s.hook, "fail")));
      const first = await arrival(
        "the first LAN alert",
        mails,
        (m) => lan.some((s) => m.subject === offTitle(s.name)),
        PROMISED_MS + SLACK_MS,
      );
      const firstAt = await arrived(first.subject, failedAt, PROMISED_MS);
      // The three looks logged: whatever they sent at once is at the relay.
      const looks = () => [looksLogged(server.stdout, failing)];
      await arrival("the three looks at the failures", looks, (n) => n >= 3, PROMISED_MS);
      assert.equal(mails().filter((m) => /LAN|Router|Printer|NAS/.test(m.subject)).length, 1);
      // The window's 30 s: all but the last few pass at once on the server's clock.
      await leadUpTo(firstAt + 30_000);
      await arrived("LAN: 2 more services off", firstAt, FOLLOW_UP_MS);
      const backAt = serverNow();
      await Promise.all(lan.slice(0, 3).map((s) => cronPing(s.hook, 0)));
      // The looks the successes asked for open the window: the clock jumps once they did.
      const lastChange = async (id: number) =>
        (await api("GET", `/api/me/services/${id}/history`)).changes.at(-1)?.state;
      for (const until = Date.now() + PROMISED_MS + SLACK_MS; Date.now() < until;) {
        const states = await Promise.all(lan.slice(0, 3).map((s) => lastChange(s.item.id)));
        if (states.every((st) => st === "ok")) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await leadUpTo(backAt + 30_000);
      await arrived("LAN: 3 of 4 services back", backAt, FOLLOW_UP_MS);
      if (Deno.env.get("SHOW_FIGURES")) {
        console.log(`alert moments e2e:\n  ${figures.join("\n  ")}`);
      }
    } finally {
      await failingApi.close();
    }
  },
});
