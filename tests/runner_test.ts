import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { LEASE_MS } from "../kv/service/store.ts";
import { atomic, openKv } from "../kv/_atomic.ts";
import { MINUTE } from "../lib/clock.ts";
import { render } from "../lib/metrics.ts";
import type { Connector } from "../lib/net.ts";
import { testApp } from "./_helpers.ts";

type T = Awaited<ReturnType<typeof testApp>>;

/** A local TCP listener that accepts and closes every connection. */
function listener() {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const loop = (async () => {
    for await (const c of l) c.close();
  })().catch(() => {});
  return {
    port: (l.addr as Deno.NetAddr).port,
    async close() {
      l.close();
      await loop;
    },
  };
}

/** Connects to the listener, counting calls and concurrency; `up` false refuses. */
function counting(port: number, delayMs = 0) {
  const s = { calls: 0, active: 0, max: 0, up: true };
  const connector: Connector = async () => {
    s.calls++;
    s.active++;
    s.max = Math.max(s.max, s.active);
    try {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (!s.up) throw Object.assign(new Error("refused"), { name: "ConnectionRefused" });
      return await Deno.connect({ hostname: "127.0.0.1", port });
    } finally {
      s.active--;
    }
  };
  return { s, connector };
}

async function tcpService(t: T, token: string, port: number, extra = {}) {
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Port", check: `tcp:127.0.0.1:${port}`, interval: 5, ...extra },
  });
  assert.equal(r.status, 200, r.text);
  return r.body.item;
}

/** The app on a KV file, plus a second handle on that file: another server process. */
async function onFile(t: T, path: string) {
  const kvA = await openKv(path);
  const kvB = await openKv(path);
  Object.assign(t.deps, { kv: kvA });
  const { transact } = await import("../kv/_atomic.ts");
  const { prepareAccount } = await import("../kv/accounts/accounts.ts");
  const { prepareSession } = await import("../kv/accounts/sessions.ts");
  const token = await transact(async () => {
    const acc = await prepareAccount(kvA, "o@example.org", "Owner", t.clock.now(), ["owner"]);
    const ses = await prepareSession(kvA, acc.account.id, t.clock.now());
    return { op: ses.apply(acc.apply(atomic(kvA))), result: ses.token };
  });
  return {
    token,
    other: { ...t.deps, kv: kvB },
    close() {
      kvA.close();
      kvB.close();
    },
  };
}

const owner = (t: T) => t.account("owner@example.org", { name: "Owner", roles: ["owner"] });

Deno.test("runner: due checks come from the index and run once per interval", async () => {
  const srv = listener();
  try {
    const { s, connector } = counting(srv.port);
    await using t = await testApp({ connector });
    const { token } = await owner(t);
    t.clock.set(Math.floor(t.clock.now() / MINUTE) * MINUTE + 20_000);
    const item = await tcpService(t, token, srv.port);
    assert.equal(s.calls, 1, "the first check ran at creation");
    assert.deepEqual(await runDueChecks(t.deps), {
      due: 0,
      ran: 0,
      heartbeats_reviewed: 0,
      errors: 0,
    });
    t.clock.advance(4 * MINUTE);
    assert.equal((await runDueChecks(t.deps)).ran, 0, "not due before its interval");
    t.clock.advance(1 * MINUTE - 20_000);
    assert.equal((await runDueChecks(t.deps)).ran, 1, "due on the minute");
    assert.equal(s.calls, 2);
    assert.equal((await runDueChecks(t.deps)).ran, 0, "not twice in one minute");
    const got = (await t.req("GET", "/api/me/services", { token })).body.items[0];
    assert.equal(got.id, item.id);
    assert.equal(got.checked, new Date(t.clock.now()).toISOString());
    t.clock.advance(5 * MINUTE);
    assert.equal((await runDueChecks(t.deps)).ran, 1);
    // After a long pause the schedule restarts from now instead of running many times.
    t.clock.advance(300 * MINUTE);
    assert.equal((await runDueChecks(t.deps)).ran, 1);
    assert.equal((await runDueChecks(t.deps)).ran, 0);
  } finally {
    await srv.close();
  }
});

Deno.test("runner: at most three checks at a time", async () => {
  const srv = listener();
  try {
    const { s, connector } = counting(srv.port, 40);
    await using t = await testApp({ connector });
    const { token } = await owner(t);
    for (let i = 0; i < 10; i++) await tcpService(t, token, srv.port);
    s.max = 0;
    s.calls = 0;
    t.clock.advance(6 * MINUTE);
    const okChecks = () => {
      const line = render([]).split("\n")
        .find((l) => l.startsWith('catalogue_checks_total{kind="tcp",outcome="ok"} '));
      return line ? Number(line.split(" ")[1]) : 0;
    };
    const before = okChecks();
    const done = await runDueChecks(t.deps);
    assert.deepEqual(done, { due: 10, ran: 10, heartbeats_reviewed: 0, errors: 0, ok: 10 });
    // /metrics counts them by kind and outcome.
    assert.equal(okChecks() - before, 10);
    assert.equal(s.calls, 10);
    assert.equal(s.max, 3);
  } finally {
    await srv.close();
  }
});

Deno.test("runner: two runners on one KV run each due check once (lease)", async () => {
  const srv = listener();
  const path = await Deno.makeTempFile({ suffix: ".sqlite3" });
  try {
    // Each check holds its slot long enough that one runner cannot lease all eight before the
    // other has listed them, even on a loaded machine.
    const { s, connector } = counting(srv.port, 40);
    await using t = await testApp({ connector });
    const { token, other, close } = await onFile(t, path);
    for (let i = 0; i < 8; i++) await tcpService(t, token, srv.port);
    s.calls = 0;
    t.clock.advance(6 * MINUTE);
    const [ra, rb] = await Promise.all([runDueChecks(t.deps), runDueChecks(other)]);
    assert.equal(ra.ran + rb.ran, 8);
    assert.ok(ra.ran > 0 && rb.ran > 0, "both runners took part");
    assert.equal(s.calls, 8, "each due check connected once");
    close();
  } finally {
    await srv.close();
    await Deno.remove(path);
  }
});

Deno.test("runner: a check still running is not started twice (its lease outlives the check's limit)", async () => {
  const srv = listener();
  const path = await Deno.makeTempFile({ suffix: ".sqlite3" });
  try {
    let release!: () => void;
    const gate = new Promise<void>((r) => release = r);
    let calls = 0;
    let blocking = false;
    let entered!: () => void;
    const started = new Promise<void>((r) => entered = r);
    const connector: Connector = async () => {
      calls++;
      if (blocking) {
        entered();
        await gate;
      }
      return await Deno.connect({ hostname: "127.0.0.1", port: srv.port });
    };
    await using t = await testApp({ connector });
    const { token, other, close } = await onFile(t, path);
    await tcpService(t, token, srv.port);
    blocking = true;
    t.clock.advance(6 * MINUTE);
    const first = runDueChecks(t.deps);
    await started;
    // Within the lease (40 s: a check has 10 s), as a run of another process may come.
    t.clock.advance(LEASE_MS - 1_000);
    assert.equal((await runDueChecks(other)).ran, 0, "another process does not start it");
    assert.equal((await runDueChecks(t.deps)).ran, 0, "nor does this one");
    assert.equal(calls, 2);
    release();
    assert.equal((await first).ran, 1);
    close();
  } finally {
    await srv.close();
    await Deno.remove(path);
  }
});

Deno.test("runner: one mail when a service turns off and one when it is back", async () => {
  const srv = listener();
  try {
    const { s, connector } = counting(srv.port);
    await using t = await testApp({ connector });
    const { token } = await owner(t);
    const to = "owner@example.org";
    s.up = false;
    const item = await tcpService(t, token, srv.port, { name: "Gateway" });
    assert.equal(item.state, "off");
    const step = async () => {
      t.clock.advance(5 * MINUTE);
      await runDueChecks(t.deps);
      return t.mail.sent.filter((m) => m.to === to).map((m) => m.subject);
    };
    // Off from its first result (shown at creation, without a mail): the next look alerts.
    assert.deepEqual(await step(), ['Watched service "Gateway" is off']);
    assert.deepEqual(await step(), ['Watched service "Gateway" is off'], "not repeated");
    s.up = true;
    assert.deepEqual(await step(), [
      'Watched service "Gateway" is off',
      'Watched service "Gateway" is back',
    ]);
    assert.deepEqual((await step()).length, 2);
    assert.match(t.mail.last(to)!.text, /port open/);

    const quiet = await tcpService(t, token, srv.port, { name: "Quiet", alerts: false });
    assert.equal(quiet.alerts, false);
    const before = t.mail.sent.length;
    s.up = false;
    await step();
    s.up = true;
    await step();
    assert.equal(
      t.mail.sent.slice(before).filter((m) => m.subject.includes("Quiet")).length,
      0,
    );
  } finally {
    await srv.close();
  }
});

Deno.test("runner: a heartbeat that stops beating mails off, and back once it beats", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  t.clock.set(Math.floor(t.clock.now() / MINUTE) * MINUTE);
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Backup", check: "webhook:", interval: 5 },
  });
  const hook = new URL(r.body.hook_url).pathname;
  const subjects = () =>
    t.mail.sent.filter((m) => m.to === "cron@example.org").map((m) => m.subject);
  const minute = async (n = 1) => {
    for (let i = 0; i < n; i++) {
      t.clock.advance(MINUTE);
      await runDueChecks(t.deps);
    }
  };
  await minute(30);
  assert.deepEqual(subjects(), [], "never beaten: wait, no mail");
  assert.equal((await t.req("GET", hook)).status, 200);
  await minute(10);
  assert.deepEqual(subjects(), [], "warn is no alert");
  await minute(1);
  assert.deepEqual(subjects(), ['Watched service "Backup" is off']);
  await minute(20);
  assert.equal(subjects().length, 1, "not repeated");
  assert.equal((await t.req("GET", hook)).status, 200);
  await minute(1);
  assert.deepEqual(subjects(), [
    'Watched service "Backup" is off',
    'Watched service "Backup" is back',
  ]);
});
