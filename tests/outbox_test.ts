import assert from "node:assert/strict";
import {
  deliver,
  deliverDue as retryOutbox,
  enqueueMail,
  type QueuedMail,
  sendMail,
} from "../kv/alerts/outbox.ts";
import { dailyPassed, MINUTELY, runJobs } from "../jobs/mod.ts";
import { MINUTE } from "../lib/clock.ts";
import { captureLog } from "../lib/log.ts";
import { dumpKv, expectLog, type TestApp, testApp } from "./_helpers.ts";
import { atomic, commit } from "../kv/_atomic.ts";
import { payloadJson } from "../kv/alerts/channels.ts";
import { MIGRATIONS, runMigrations } from "../kv/store/migrations.ts";
import { addChannel, OFF, receiver } from "./_channels.ts";

async function queued(t: TestApp): Promise<QueuedMail[]> {
  const out: QueuedMail[] = [];
  for await (const e of t.kv.list<QueuedMail>({ prefix: ["outbox"] })) out.push(e.value);
  return out;
}

/** Runs `fn` with the operator log captured, so tests can prove what is (not) logged. */
async function captured<T>(fn: () => Promise<T>): Promise<{ result: T; logs: string }> {
  const lines: string[] = [];
  const restore = captureLog((l) => lines.push(l));
  let result: T;
  try {
    result = await fn();
  } finally {
    restore(); // writes what is buffered into `lines`
  }
  return { result, logs: lines.join("\n") };
}

Deno.test("outbox: a failing mailer keeps the mail; the job retries with backoff until delivered", async () => {
  await using t = await testApp();
  const addr = "ada.private@example.org";
  t.mail.failWith = new Error(`550 mailbox ${addr} unavailable`);
  const { result: r, logs: requestLogs } = await captured(() =>
    t.req("POST", "/api/verify/request", { body: { email: addr, age_ok: true } })
  );
  // The client sees the same answer: the mail is queued, not lost.
  assert.equal(r.status, 202);
  assert.equal(t.mail.sent.length, 0);
  let q = await queued(t);
  assert.equal(q.length, 1);
  assert.equal(q[0].to, addr);
  assert.equal(q[0].attempts, 1);
  assert.equal(q[0].next, t.clock.now() + 2 * MINUTE);

  const { logs } = await captured(async () => {
    t.clock.advance(2 * MINUTE - 1);
    assert.equal((await retryOutbox(t.deps)).due, 0, "not due before its backoff");
    assert.equal((await queued(t))[0].attempts, 1);
    t.clock.advance(1);
    await runJobs(t.deps, MINUTELY); // attempt 2 fails: next try 4 minutes later
    q = await queued(t);
    assert.equal(q[0].attempts, 2);
    assert.equal(q[0].next, t.clock.now() + 4 * MINUTE);
    t.clock.advance(4 * MINUTE);
    await runJobs(t.deps, MINUTELY); // attempt 3 fails: 8 minutes
    q = await queued(t);
    assert.equal(q[0].attempts, 3);
    assert.equal(q[0].next, t.clock.now() + 8 * MINUTE);
  });
  // Failures are logged, without the address or the text.
  for (const text of [requestLogs, logs]) {
    const failure = text.split("\n").map((l) => JSON.parse(l))
      .find((l) => l.msg === "mail delivery failed");
    // The relay's reason, with the address cut out.
    assert.equal(failure?.reason, "550 mailbox address unavailable", text);
    assert.ok(!text.includes(addr), text);
    assert.ok(!text.includes("ada.private"), text);
    assert.ok(!text.includes("verify="), text);
  }

  t.mail.failWith = null;
  t.clock.advance(8 * MINUTE - 1);
  await runJobs(t.deps, MINUTELY);
  assert.equal(t.mail.sent.length, 0);
  t.clock.advance(1);
  const { logs: sentLogs } = await captured(() => runJobs(t.deps, MINUTELY));
  assert.equal(t.mail.sent.length, 1);
  assert.deepEqual(await queued(t), []);
  // The operator sees it went out in the end, and the job's counts.
  const sent = sentLogs.split("\n").map((l) => JSON.parse(l));
  assert.ok(sent.some((l) => l.msg === "mail sent after retry" && l.attempt === 4), sentLogs);
  const job = sent.find((l) => l.msg === "job" && l.job === "outbox");
  assert.deepEqual([job?.due, job?.sent, job?.failed, job?.retried], [1, 1, 0, 1], sentLogs);
  // The mail delivered late is the one whose link was stored with it (14 min later, the
  // login link still has 6 minutes to live).
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken(addr)}`);
  assert.equal(v.status, 200);
  // Delivered once only: later runs send nothing more.
  t.clock.advance(60 * MINUTE);
  await runJobs(t.deps, MINUTELY);
  assert.equal(t.mail.sent.length, 1);
});

Deno.test("outbox: a mail delivered by the retry job carries a working link", async () => {
  await using t = await testApp();
  t.mail.failWith = new Error("ECONNREFUSED");
  await captured(() =>
    t.req("POST", "/api/verify/request", { body: { email: "a@b.org", age_ok: true } })
  );
  t.mail.failWith = null;
  t.clock.advance(2 * MINUTE);
  await captured(() => runJobs(t.deps, MINUTELY));
  assert.equal(t.mail.sent.length, 1);
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken("a@b.org")}`);
  assert.equal(v.status, 200);
});

Deno.test("outbox: backoff doubles up to six hours", async () => {
  await using t = await testApp();
  t.mail.failWith = Object.assign(new Error("x"), { responseCode: 451 });
  const { logs } = await captured(async () => {
    await sendMail(t.deps, { to: "a@b.org", subject: "s", text: "t" });
    for (let i = 0; i < 10; i++) {
      const [m] = await queued(t);
      t.clock.set(m.next);
      await retryOutbox(t.deps);
    }
  });
  const [m] = await queued(t);
  assert.equal(m.attempts, 11);
  assert.equal(m.next - t.clock.now(), 6 * 60 * MINUTE);
  assert.match(logs, /SMTP 451/);
});

Deno.test("outbox: concurrent deliveries of one mail send it once", async () => {
  await using t = await testApp();
  const op = atomic(t.kv);
  const id = enqueueMail(op, { to: "a@b.org", subject: "s", text: "t" }, t.clock.now());
  await commit(op);
  await Promise.all([deliver(t.deps, [id]), deliver(t.deps, [id]), retryOutbox(t.deps)]);
  assert.equal(t.mail.sent.length, 1);
  assert.deepEqual(await queued(t), []);
});

Deno.test("outbox: a mail is queued only if its atomic commits", async () => {
  await using t = await testApp();
  await t.kv.set(["guard"], 1);
  const stale = await t.kv.get(["guard"]);
  await t.kv.set(["guard"], 2);
  const op = atomic(t.kv).check(stale);
  const id = enqueueMail(op, { to: "a@b.org", subject: "s", text: "t" }, t.clock.now());
  assert.equal((await commit(op)).ok, false);
  await deliver(t.deps, [id]);
  assert.equal(t.mail.sent.length, 0);
  assert.deepEqual(await queued(t), []);
});

Deno.test("jobs: one slow or failing job holds back no other", async () => {
  await using t = await testApp();
  const ran: string[] = [];
  let release!: () => void;
  const slow = new Promise<void>((r) => release = r);
  const done = expectLog([/"msg":"job failed","job":"broken"/], () =>
    runJobs(t.deps, [
      { name: "slow", run: () => slow.then(() => ran.push("slow")) },
      { name: "broken", run: () => Promise.reject(new Error("boom")) },
      { name: "quick", run: () => Promise.resolve(ran.push("quick")) },
    ]));
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(ran, ["quick"], "the quick job ran while the slow one was still running");
  release();
  await done;
  assert.deepEqual(ran, ["quick", "slow"]);
});

Deno.test("jobs: under a test clock the daily jobs run once the clock passed 03:17 UTC", () => {
  const at = (s: string) => Date.parse(s);
  assert.equal(dailyPassed(at("2026-03-02T03:16:00Z"), at("2026-03-02T03:17:00Z")), true);
  assert.equal(dailyPassed(at("2026-03-02T03:17:00Z"), at("2026-03-02T03:18:00Z")), false);
  assert.equal(dailyPassed(at("2026-03-02T04:00:00Z"), at("2026-03-03T03:16:59Z")), false);
  assert.equal(dailyPassed(at("2026-03-02T04:00:00Z"), at("2027-03-03T00:00:00Z")), true, "a jump");
  assert.equal(dailyPassed(Infinity, at("2026-03-02T03:17:00Z")), false, "before the first run");
});

Deno.test("outbox: one person's mails go out in the order they were queued, others' beside them", async () => {
  await using t = await testApp();
  // A relay that holds the first mail to ops until the other person's mail went out (at most
  // 5 s): sent side by side, ops' "back" would overtake its "off"; sent all in one line, the
  // other person's mail would wait behind ops' mails.
  const send = t.mail.send;
  let otherSent: () => void = () => {};
  const other = new Promise<void>((r) => otherSent = r);
  let held = false;
  t.mail.send = async (mail) => {
    if (mail.to === "ops@b.org" && !held) {
      held = true;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([other, new Promise((r) => timer = setTimeout(r, 5_000))]);
      clearTimeout(timer);
    }
    await send(mail);
    if (mail.to === "else@b.org") otherSent();
  };
  const ids: string[] = [];
  for (let round = 0; round < 20; round++) {
    const op = atomic(t.kv);
    ids.push(enqueueMail(op, { to: "ops@b.org", subject: `off ${round}`, text: "t" }, 1000));
    ids.push(enqueueMail(op, { to: "ops@b.org", subject: `back ${round}`, text: "t" }, 1000));
    await commit(op);
  }
  const op = atomic(t.kv);
  ids.push(enqueueMail(op, { to: "else@b.org", subject: "other", text: "t" }, 1000));
  await commit(op);
  t.clock.set(1000);
  await deliver(t.deps, ids.slice(0, 10).reverse().concat(ids.slice(10)));
  const ops = t.mail.sent.filter((m) => m.to === "ops@b.org").map((m) => m.subject);
  assert.deepEqual(ops, [...Array(20).keys()].flatMap((r) => [`off ${r}`, `back ${r}`]));
  // The other person's mail did not wait behind the held one.
  assert.equal(t.mail.sent[0].subject, "other");
});

Deno.test("outbox: a back queued while its off is being sent follows it at once, not at the next run", async () => {
  await using t = await testApp();
  // A relay that holds the off until the back's own delivery has found it being sent.
  const send = t.mail.send;
  const held = Promise.withResolvers<void>();
  const sending = Promise.withResolvers<void>();
  t.mail.send = async (mail) => {
    if (mail.subject === "off") {
      sending.resolve();
      await held.promise;
    }
    await send(mail);
  };
  t.clock.set(1000);
  const queue = async (subject: string) => {
    const op = atomic(t.kv);
    const id = enqueueMail(op, { to: "ops@b.org", subject, text: "t" }, 1000, [7]);
    await commit(op);
    return id;
  };
  const off = deliver(t.deps, [await queue("off")]);
  await sending.promise;
  const back = await deliver(t.deps, [await queue("back")]);
  assert.deepEqual(back, { sent: 0, failed: 0, retried: 0 }, "the back waits behind its off");
  held.resolve();
  assert.equal((await off).sent, 2, "the off's delivery sent the back after it");
  assert.deepEqual(t.mail.sent.map((m) => m.subject), ["off", "back"]);
  assert.deepEqual(await queued(t), [], "nothing left for the retry job");
});

Deno.test("outbox: migration 9 moves the old queues' pending posts and followers' mail in, ids kept", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const ch = await addChannel(r.t, token, { name: "Hook", url: "https://hooks.example.org/a" });
  const at = r.t.clock.now();
  // What a store of the three queues held: a post, a followers' item, a mail without a kind.
  const op = atomic(r.t.kv)
    .set(["channel_outbox", "old-post"], {
      id: "old-post",
      account: ch.account,
      channel: ch.id,
      body: payloadJson(OFF),
      event: "off",
      created: at,
      attempts: 1,
      next: at,
      thread: [7],
    })
    .set(["follow_fanout", "old-fan"], {
      id: "old-fan",
      account: ch.account,
      event: { kind: "note", note: "resolved", text: "Power is back." },
      at,
      cursor: null,
    })
    .set(["outbox", "old-mail"], {
      id: "old-mail",
      to: "a@b.org",
      subject: "old",
      text: "t",
      created: at,
      attempts: 0,
      next: at,
    });
  assert.ok((await commit(op)).ok);
  const step = MIGRATIONS.findIndex((m) => m.name.startsWith("deliveries: ")) + 1;
  assert.equal(step, 9);
  await r.t.kv.delete(["migrations", step]);
  await runMigrations(r.t.kv, at);
  const dump = await dumpKv(r.t.kv);
  assert.doesNotMatch(dump, /"channel_outbox"|"follow_fanout"/);
  const kinds = (await queued(r.t)).map((d) => [d.id, (d as { kind?: string }).kind]);
  assert.deepEqual(kinds, [["old-fan", "followers"], ["old-mail", "mail"], ["old-post", "post"]]);
  // Sent by the job as any delivery: the post with its old id as X-Webhook-Id, the mail as its
  // Message-ID; the followers' item leaves (the page is not published: nobody to mail).
  const out = await retryOutbox(r.t.deps);
  assert.deepEqual([out.due, out.failed], [3, 0]);
  assert.equal(r.got.length, 1);
  assert.equal(r.last().headers.get("x-webhook-id"), "old-post");
  assert.equal(r.t.mail.sent.find((m) => m.subject === "old")?.id, "old-mail");
  assert.deepEqual(await queued(r.t), []);
});
