/**
 * What docs/api.md promises to happen later, end to end: the real server process and its
 * jobs, mailing through a local SMTP relay and posting to an alert channel on 127.0.0.1. The
 * server's test clock (TEST_CLOCK_FILE) lets minutes, days and a year pass, and its switch runs
 * the minutely jobs at once (the daily jobs run at the first minutely run after 03:17 of that
 * clock):
 * - mail and channel posts whose first delivery failed are retried by the minutely job after
 *   their backoff (2 minutes), once, the post with the same X-Webhook-Id;
 * - a received proposal not confirmed within seven days is deleted by the minutely job;
 * - a certificate with 14 days or less left alerts once, by mail and on the channel;
 * - an account nothing signed in for a year gets one dormant notice (daily job);
 * - requests older than 180 days are deleted (daily job).
 */
import assert from "node:assert/strict";
import { signInByMail, testClock } from "./_real_server.ts";
import { runTask, spawnService } from "./_server.ts";
import { hmacSignature, localTls, makeCerts, webhookReceiver } from "./_servers.ts";
import { smtpSink } from "./_smtp.ts";

const OWNER = "ops@example.org";
const TEAM_TOKEN = "team-token-for-the-later-e2e-test";
const DAY = 86_400_000;

Deno.test("later e2e: retries, proposal expiry, certificate expiry, dormant notices, old requests", async () => {
  const dir = await Deno.makeTempDir({ prefix: "later_e2e_" });
  const kvPath = `${dir}/kv.sqlite3`;
  const ca = `${dir}/ca.pem`;
  try {
    // The certificate runs out 13 days after the year this test lets pass.
    const certs = await makeCerts(["127.0.0.1"], 366 + 13);
    await Deno.writeTextFile(ca, certs.ca);
    const granted = await runTask("roles", ["grant", "--create", OWNER, "owner"], {
      KV_PATH: kvPath,
    });
    assert.equal(granted.code, 0, granted.stderr);
    const site = localTls(certs);
    await using clock = await testClock();
    await using sink = await smtpSink();
    await using receiver = webhookReceiver(certs);
    await using server = await spawnService(kvPath, {
      SMTP_URL: sink.url,
      BASE_URL: "http://127.0.0.1",
      DENO_CERT: ca,
      SERVICE_TOKEN: TEAM_TOKEN,
      ...clock.env,
    });
    try {
      const token = await signInByMail(server.url, sink, OWNER);
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, body: await r.json() };
      };
      const channel = (await call("POST", "/api/me/channels", {
        name: "Pager",
        url: receiver.url,
      })).body;
      const tls = await call("POST", "/api/me/services", {
        name: "Shop certificate",
        check: `tls:127.0.0.1:${site.port}`,
        interval: 5,
        channels: [channel.item.id],
      });
      assert.equal(tls.status, 200, JSON.stringify(tls.body));
      assert.equal(tls.body.item.state, "ok", tls.body.item.status);

      // A proposal nobody confirms, and a request.
      const proposal = await call("POST", "/api/contributions", {
        name: "Pat Newcomer",
        email: "pat@example.org",
        title: "A module nobody confirms",
        summary: "It waits for a confirmation that never comes.",
      });
      assert.equal(proposal.status, 201, JSON.stringify(proposal.body));
      assert.equal(proposal.body.status, "received");
      const status = () => fetch(`${server.url}/api/contributions/${proposal.body.id}/status`);
      const kept = await status();
      assert.equal(kept.status, 200);
      await kept.body?.cancel();
      const request = await call("POST", "/api/requests", {
        name: "Quinn Asker",
        email: "quinn@example.org",
        kind: "tool",
        text: "Please add a tool for this.",
      });
      assert.equal(request.status, 202);
      const openRequests = async () => {
        const r = await fetch(`${server.url}/api/requests?all=1`, {
          headers: { "x-service-token": TEAM_TOKEN },
        });
        assert.equal(r.status, 200);
        return (await r.json()).items.length;
      };
      assert.equal(await openRequests(), 1);

      // Delivery fails: the relay refuses for now, the channel answers 503.
      sink.refusing = true;
      receiver.failing = true;
      const mailsBefore = sink.mails.length;
      const asked = await fetch(`${server.url}/api/verify/request`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: OWNER, purpose: "login", age_ok: true }),
      });
      assert.equal(asked.status, 202);
      await asked.body?.cancel();
      await server.stdout.waitFor(/"msg":"mail delivery failed"/);
      const test = await call("POST", `/api/me/channels/${channel.item.id}/test`);
      assert.equal(test.body.delivered, false);
      assert.equal(receiver.refused.length, 1);
      sink.refusing = false;
      receiver.failing = false;

      // Three minutes on: past the first backoff (2 minutes); the next minutely run retries.
      await clock.advance(3 * 60_000);
      const retriedMail = () =>
        sink.mails.slice(mailsBefore).find((m) =>
          m.to === OWNER && m.subject === "Your sign-in link"
        );
      const retriedPost = () => receiver.posts.find((p) => p.body.event === "test");
      await clock.runJobsUntil("the retries", () => !!retriedMail() && !!retriedPost());
      const retried = retriedMail()!;
      assert.match(retried.text, /verify=/);
      const post = retriedPost()!;
      assert.equal(post.id, receiver.refused[0], "the same X-Webhook-Id on the retry");
      assert.equal(post.signature, await hmacSignature(channel.secret, post.raw));

      // A year on (366 days): past the proposal's seven days, the requests' 180 days, a year
      // without sign-in, and into the certificate's last 14 days.
      const seen = sink.mails.length;
      await clock.advance(366 * DAY);
      const later = (pick: (m: { to: string; subject: string }) => boolean) => () =>
        sink.mails.slice(seen).find(pick);
      const expiryMail = later((m) => m.to === OWNER && /^Certificate/.test(m.subject));
      const dormantMail = later((m) => m.subject === "Your account has been quiet for a year");
      const expiryPosted = () => receiver.posts.find((p) => p.body.event === "expiry");
      await clock.runJobsUntil(
        "the certificate expiry mail and post and the dormant notice",
        () => !!expiryMail() && !!dormantMail() && !!expiryPosted(),
      );
      const [expiry, dormant, expiryPost] = [expiryMail()!, dormantMail()!, expiryPosted()!];
      assert.equal(expiry.subject, 'Certificate of "Shop certificate" expires within 14 days');
      assert.equal(dormant.to, OWNER);
      assert.match(dormant.text, /nothing is deleted/);
      assert.equal(expiryPost.body.service?.name, "Shop certificate");
      assert.equal(expiryPost.signature, await hmacSignature(channel.secret, expiryPost.raw));
      // The deletions run in the same minutely run, beside the jobs that mailed.
      const gone = async (what: string, done: () => Promise<boolean>) => {
        const until = Date.now() + 15_000;
        while (!await done()) {
          if (Date.now() > until) throw new Error(`${what} is still there`);
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      await gone("the unconfirmed proposal", async () => {
        const r = await status();
        await r.body?.cancel();
        return r.status === 404;
      });
      await gone("the old request", async () => await openRequests() === 0);

      // Each once: one retried link, one expiry alert each way, one notice.
      const to = (re: RegExp) => sink.mails.filter((m) => m.to === OWNER && re.test(m.subject));
      assert.equal(to(/^Your sign-in link$/).length, 2, "the first sign-in's and the retried");
      assert.equal(to(/^Certificate/).length, 1);
      assert.equal(to(/quiet for a year/).length, 1);
      assert.deepEqual(receiver.posts.map((p) => p.body.event), ["test", "expiry"]);
    } catch (err) {
      const runs = server.stdout.text.split("\n").filter((l) => /"msg":"job/.test(l));
      throw new Error(`${err instanceof Error ? err.message : err}\n${runs.join("\n")}`);
    } finally {
      await site.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
