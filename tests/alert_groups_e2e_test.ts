/**
 * One alert for one outage end to end (issue 24, part 1): the real server process (main.ts)
 * with its minutely Deno.cron job, mailing through a local SMTP relay and posting to an alert
 * channel on 127.0.0.1 over HTTPS, its clock moved by the test clock (TEST_CLOCK_FILE). Three
 * of four heartbeats at the place "LAN" fail: the minutely look puts them in one pending
 * group; two minutes on, the minutely job sends one mail and one signed post naming the three.
 * They come back: one mail and one post again.
 */
import assert from "node:assert/strict";
import { MINUTE } from "../lib/clock.ts";
import { arrival, bearerApi, signInByMail, testClock } from "./_real_server.ts";
import { type OutputLog, runTask, startServer } from "./_server.ts";
import { hmacSignature, makeCerts, webhookReceiver } from "./_servers.ts";
import { smtpSink } from "./_smtp.ts";

const OPS = "ops@lan.test";

/**
 * Waits until the minutely job's runs that started after `since` (real time) looked at
 * `count` heartbeats in all: the alerts of those looks are in their group then.
 */
async function reviewed(log: OutputLog, since: number, count: number) {
  const until = Date.now() + 150_000;
  while (Date.now() < until) {
    let seen = 0;
    for (const line of log.text.split("\n")) {
      if (!line.includes('"job":"checks"')) continue;
      const j = JSON.parse(line);
      if (Date.parse(j.t) - j.ms >= since) seen += j.heartbeats_reviewed ?? 0;
    }
    if (seen >= count) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the minutely job did not look at ${count} heartbeats within 150 s`);
}

Deno.test({
  name: "e2e: three heartbeats of one place off together give one mail and one post, and back",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "groups_e2e_" });
    const kvPath = `${dir}/kv.sqlite3`;
    const ca = `${dir}/ca.pem`;
    try {
      const certs = await makeCerts(["127.0.0.1"], 30);
      await Deno.writeTextFile(ca, certs.ca);
      // The owner may post to a channel on 127.0.0.1.
      const granted = await runTask("roles", ["grant", OPS, "owner"], { KV_PATH: kvPath });
      assert.equal(granted.code, 0, granted.stderr);
      await using clock = await testClock();
      await using sink = await smtpSink();
      await using pager = webhookReceiver(certs);
      await using server = await startServer(kvPath, {
        SMTP_URL: sink.url,
        BASE_URL: "http://127.0.0.1",
        DENO_CERT: ca,
        ...clock.env,
      });
      const token = await signInByMail(server.url, sink, OPS);
      const api = bearerApi(server.url, token);
      const ch = await api("POST", "/api/me/channels", { name: "Pager", url: pager.url });
      const hooks: string[] = [];
      for (const name of ["Router", "Printer", "NAS", "Camera"]) {
        const made = await api("POST", "/api/me/services", {
          name,
          check: "webhook:",
          interval: 60,
          place: "LAN",
          channels: [ch.item.id],
        });
        hooks.push(made.hook_url.replace("http://127.0.0.1", server.url));
      }
      const ping = async (url: string) => {
        const r = await fetch(url);
        assert.equal(r.status, 200);
        await r.body?.cancel();
      };
      for (const h of hooks) await ping(h);
      const alerts = () => sink.mails.filter((m) => m.to === OPS && m.subject.startsWith("LAN"));
      const others = () => sink.mails.filter((m) => m.to === OPS && m.subject.includes("Watched"));

      // Three fail: each minutely look adds its alert to the group of "LAN"; none is mailed.
      for (const h of hooks.slice(0, 3)) await ping(`${h}/fail`);
      await reviewed(server.stdout, 0, 3);
      assert.equal(alerts().length + others().length, 0, "the group waits");
      // Two minutes on (the server's clock): the next minutely run sends the group.
      await clock.advance(3 * MINUTE);
      const off = await arrival("the grouped off mail", alerts, () => true, 90_000);
      assert.equal(off.subject, "LAN: 3 of 4 services off");
      for (const name of ["Router", "Printer", "NAS"]) assert.match(off.text, new RegExp(name));
      const post = await arrival("the grouped off post", () => pager.posts, () => true, 30_000);
      assert.equal(post.body.title, "LAN: 3 of 4 services off");
      assert.equal(post.body.event, "off");
      assert.equal((post.body.services as unknown[]).length, 3);
      assert.equal(post.signature, await hmacSignature(ch.secret, post.raw));

      // Back together: one mail and one post again.
      const backAt = Date.now();
      for (const h of hooks.slice(0, 3)) await ping(h);
      await reviewed(server.stdout, backAt, 3);
      await clock.advance(3 * MINUTE);
      const back = await arrival(
        "the grouped back mail",
        alerts,
        (m) => m.subject.endsWith("back"),
        90_000,
      );
      assert.equal(back.subject, "LAN: 3 of 4 services back");
      await arrival(
        "the grouped back post",
        () => pager.posts,
        (p) => p.body.event === "back",
        30_000,
      );
      assert.deepEqual(alerts().map((m) => m.subject), [
        "LAN: 3 of 4 services off",
        "LAN: 3 of 4 services back",
      ]);
      assert.equal(others().length, 0, "no mail per service");
      assert.equal(pager.posts.length, 2);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
