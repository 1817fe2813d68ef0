/**
 * Following a status page end to end: the real server process (main.ts) mailing through a
 * local SMTP relay, its KV file, and its minutely jobs (run at once by the test clock's switch). A follower confirms through the mailed
 * link, gets the service's off alert and an incident note, and the minutely job finishes the
 * followers' mail a stopped process left queued; the unfollow link ends it all.
 */
import assert from "node:assert/strict";
import { atomic, commit, openKv, transact } from "../kv/_atomic.ts";
import { prepareAccount } from "../kv/accounts/accounts.ts";
import { enqueueFollowers } from "../kv/alerts/outbox.ts";
import { runMigrations } from "../kv/store/migrations.ts";
import { prepareSession } from "../kv/accounts/sessions.ts";
import { outboxDrained, testClock } from "./_real_server.ts";
import { spawnService } from "./_server.ts";
import { localHttp } from "./_servers.ts";
import { type Received, smtpSink } from "./_smtp.ts";

const FAN = "fan@follow.test";

/** The n-th mail to an address, waiting up to `ms`. */
async function mailTo(mails: Received[], to: string, n: number, ms = 20_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const got = mails.filter((m) => m.to === to);
    if (got.length >= n) return got[n - 1];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail #${n} to ${to} within ${ms} ms`);
}

const link = (text: string, what: string) => {
  const m = text.match(new RegExp(`(/status/[a-z0-9-]+/${what}\\?token=[0-9]+\\.[A-Za-z0-9_-]+)`));
  if (!m) throw new Error(`no ${what} link`);
  return { path: m[1], token: m[1].split("token=")[1] };
};

Deno.test({
  name:
    "e2e: follow a status page, confirm, get an alert and notes (the minutely job too), unfollow",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "follow_e2e_" });
    const kvPath = `${dir}/kv.sqlite3`;
    let failing = false;
    const srv = localHttp(() =>
      failing ? new Response("down", { status: 503 }) : new Response("up")
    );
    try {
      // The owner (who may watch a loopback address) and a session, written before the start.
      const seed = await openKv(kvPath);
      await runMigrations(seed, Date.now());
      const owner = await transact(async () => {
        const acc = await prepareAccount(seed, "ops@follow.test", "Rita Ops", Date.now(), [
          "owner",
        ]);
        const s = await prepareSession(seed, acc.account.id, Date.now());
        return {
          op: s.apply(acc.apply(atomic(seed))),
          result: { ...acc.account, token: s.token },
        };
      });
      seed.close();

      await using sink = await smtpSink();
      await using clock = await testClock();
      await using server = await spawnService(kvPath, {
        SMTP_URL: sink.url,
        BASE_URL: "http://127.0.0.1",
        MAIL_FROM: "noreply@e2e.test",
        ...clock.env,
      });
      const api = async (method: string, path: string, body?: unknown, token?: string) => {
        const res = await fetch(`${server.url}${path}`, {
          method,
          headers: {
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await res.json() };
      };

      const site = await api("POST", "/api/me/services", {
        name: "Riverside LAN",
        check: `url:http://127.0.0.1:${srv.port}/`,
      }, owner.token);
      assert.equal(site.status, 200, JSON.stringify(site.body));
      const id = site.body.item.id;
      const page = await api("PUT", "/api/me/status-page", {
        enabled: true,
        title: "Riverside school",
        services: [{ id }],
      }, owner.token);
      assert.equal(page.status, 200);
      const slug = page.body.path.split("/").pop();

      // Follow; opening the mailed link shows a button and confirms nothing.
      assert.equal((await api("POST", `/api/status/${slug}/follow`, { email: FAN })).status, 202);
      const confirmMail = await mailTo(sink.mails, FAN, 1);
      const confirm = link(confirmMail.text, "confirm");
      const opened = await fetch(`${server.url}${confirm.path}`);
      assert.equal(opened.status, 200);
      assert.match(await opened.text(), /Confirm following/);
      assert.equal(
        (await api("GET", "/api/me/status-page", undefined, owner.token)).body.followers,
        0,
      );
      const done = await api("POST", `/api/status/${slug}/confirm`, { token: confirm.token });
      assert.equal(done.status, 200);
      assert.equal(
        (await api("GET", "/api/me/status-page", undefined, owner.token)).body.followers,
        1,
      );

      // The service goes off: the follower's mail comes with the owner's alert.
      failing = true;
      await api("POST", `/api/me/services/${id}/check`, undefined, owner.token);
      const off = await mailTo(sink.mails, FAN, 2);
      assert.match(off.text, /"Riverside LAN" on the status page "Riverside school" is off/);
      // A note.
      const note = await api("POST", "/api/me/status-page/notes", {
        kind: "investigating",
        text: "The switch in room 4 lost power.",
      }, owner.token);
      assert.equal(note.status, 201);
      const noted = await mailTo(sink.mails, FAN, 3);
      assert.equal(noted.subject, "Riverside school: Investigating");

      // A process that stopped after queuing a note's mail: the minutely job sends it.
      const kv = await openKv(kvPath);
      const op = atomic(kv);
      enqueueFollowers(
        op,
        owner.id,
        { kind: "note", note: "resolved", text: "Power is back." },
        Date.now(),
      );
      assert.ok((await commit(op)).ok);
      kv.close();
      await clock.runJobsUntil(
        "the queued note's mail",
        () => sink.mails.filter((m) => m.to === FAN).length >= 4,
      );
      const late = await mailTo(sink.mails, FAN, 4);
      assert.equal(late.subject, "Riverside school: Resolved");
      assert.match(late.text, /Power is back\./);
      // The minutely job, or its run 45 s after the start (what a crash left, jobs/mod.ts).
      await server.stdout.waitFor(/"job":"outbox(-resume)?"[^\n]*"sent":1/, 20_000);

      // Unfollow from the last mail: the page has a button; the POST ends it.
      const out = link(late.text, "unfollow");
      const outPage = await fetch(`${server.url}${out.path}`);
      assert.match(await outPage.text(), /Stop following/);
      assert.equal(
        (await api("POST", `/api/status/${slug}/unfollow`, { token: out.token })).status,
        200,
      );
      assert.equal(
        (await api("GET", "/api/me/status-page", undefined, owner.token)).body.followers,
        0,
      );
      await api(
        "POST",
        "/api/me/status-page/notes",
        { kind: "note", text: "Quiet now." },
        owner.token,
      );
      // The note's followers' delivery is queued with it: once the outbox is empty, any mail it
      // made has reached the relay.
      await outboxDrained(server.url);
      assert.equal(sink.mails.filter((m) => m.to === FAN).length, 4, "no mail after unfollowing");
      // No address of the follower in the logs.
      assert.doesNotMatch(server.stdout.text + server.stderr.text, /fan@|follow\.test/);
    } finally {
      await srv.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
