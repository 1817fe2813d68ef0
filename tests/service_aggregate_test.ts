/**
 * The watched service's invariant (kv/service/store.ts's header), driven at random (fast-check):
 * sequences of what changes a service (create, import; a new interval, schedule or name; pause,
 * resume, badge and key rotations, delete, erasure; pings and a flood of them, a manual check,
 * the runner's claims and looks, a failure's queued look) on an in-memory KV, and after each
 * step: the records are the services alive, each account's count is its records, every record
 * has its id entry and its regular due entry (the one its `due` names), and every other due
 * entry is a nudge a ping of that heartbeat left; once the runner has passed them, none is due
 * and a removed service has none.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { runDueChecks } from "../jobs/checks.ts";
import { handleQueued } from "../jobs/queue.ts";
import { beat, EVENTS_KEPT, type SignalKind, SUCCESS_SIGNAL } from "../kv/service/heartbeats.ts";
import {
  countServices,
  dueKey,
  getService,
  serviceEntries,
  serviceIdEntries,
} from "../kv/service/store.ts";
import { validSchedule } from "../kv/service/rules.ts";
import { recordResult } from "../kv/service/looks.ts";
import {
  createService,
  deleteService,
  eraseServices,
  importServices,
  INTERVALS,
  type NewService,
  patchService,
  rotateBadge,
  rotateHook,
  type Service,
} from "../kv/service/commands.ts";
import type { CheckState } from "../lib/checks/mod.ts";
import { DAY, MINUTE } from "../lib/clock.ts";
import { testApp } from "./_helpers.ts";

type T = Awaited<ReturnType<typeof testApp>>;

const pick = fc.nat({ max: 1_000 });
/** A weighted step: creations and pings come often, so most steps find a service to act on. */
const often = <S>(weight: number, arbitrary: fc.Arbitrary<S>) => ({ weight, arbitrary });
const step = fc.oneof(
  often(5, fc.record({ op: fc.constant("create" as const), beat: fc.boolean(), account: pick })),
  fc.record({
    op: fc.constant("interval" as const),
    pick,
    interval: fc.constantFrom(...INTERVALS),
  }),
  fc.record({
    op: fc.constant("import" as const),
    n: fc.integer({ min: 1, max: 3 }),
    account: pick,
  }),
  fc.record({ op: fc.constant("rename" as const), pick }),
  fc.record({ op: fc.constant("schedule" as const), pick, hourly: fc.boolean() }),
  fc.record({
    op: fc.constant("manual" as const),
    pick,
    state: fc.constantFrom<CheckState>("ok", "off"),
  }),
  fc.record({ op: fc.constant("pause" as const), pick, paused: fc.boolean() }),
  fc.record({ op: fc.constant("badge" as const), pick }),
  fc.record({ op: fc.constant("rotate" as const), pick }),
  fc.record({ op: fc.constant("delete" as const), pick }),
  fc.record({ op: fc.constant("erase" as const), account: pick }),
  often(
    4,
    fc.record({
      op: fc.constant("ping" as const),
      pick,
      kind: fc.constantFrom<SignalKind>("success", "start", "fail"),
    }),
  ),
  fc.record({ op: fc.constant("flood" as const), pick }),
  fc.record({ op: fc.constant("queued" as const), pick }),
  often(2, fc.record({ op: fc.constant("run" as const) })),
  often(
    2,
    fc.record({ op: fc.constant("wait" as const), minutes: fc.integer({ min: 0, max: 90 }) }),
  ),
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

/** What the test did: the services alive, those removed, and the nudges their pings allow. */
interface Model {
  accounts: number[];
  live: Map<number, { account: number; beat: boolean; key: string | null }>;
  removed: Set<number>;
  /**
   * Per heartbeat: the minutes of its failures and successes (the looks they may ask for),
   * its starts' times, the minutes it was pinged in (a flood's nudge), the looks asked for.
   */
  fails: Map<number, Set<number>>;
  pinged: Map<number, Set<number>>;
  starts: Map<number, number[]>;
  looks: Map<number, { account: number; id: number; due: number }[]>;
}

const checked = (name: string): NewService => ({
  name,
  what: "",
  group: "Public",
  place: null,
  interval: 5,
  alerts: true,
  kind: "tcp",
  check: "tcp:db.test:5432",
  hint: null,
});
const heartbeat = (name: string): NewService => ({
  ...checked(name),
  group: "Jobs",
  interval: 60,
  kind: "webhook",
  check: "webhook:",
});

/** A nudge a ping of heartbeat `id` may have left at `at` (kv/service/heartbeats.ts). */
const nudged = (m: Model, id: number, at: number) =>
  m.fails.get(id)?.has(at) === true ||
  (m.starts.get(id) ?? []).some((s) => at > s) ||
  m.pinged.get(id)?.has(at - 1) === true;

/** Pings heartbeat `id` by its key, as its hook address would; answers the ping's time. */
async function ping(t: T, m: Model, id: number, key: string, kind: SignalKind): Promise<number> {
  const at = t.clock.now();
  const said = await beat(t.deps, key, "", { ...SUCCESS_SIGNAL, kind });
  assert.ok(typeof said === "object", `a ping of a live heartbeat is recorded: ${said}`);
  const minute = Math.floor(at / MINUTE) * MINUTE;
  m.pinged.set(id, (m.pinged.get(id) ?? new Set()).add(minute));
  return at;
}

async function apply(t: T, m: Model, s: Step): Promise<void> {
  const ids = [...m.live.keys()];
  const id = "pick" in s && ids.length > 0 ? ids[s.pick % ids.length] : null;
  const svc = id === null ? null : m.live.get(id)!;
  const gone = (id: number) => {
    m.live.delete(id);
    m.removed.add(id);
  };
  switch (s.op) {
    case "create": {
      const account = m.accounts[s.account % 2];
      if (await countServices(t.kv, account) >= 25) return;
      const n = m.live.size + m.removed.size;
      const made = await createService(
        t.deps,
        account,
        s.beat ? heartbeat(`Beat ${n}`) : checked(`Port ${n}`),
        null,
      );
      const { service, key } = made!;
      m.live.set(service.id, { account, beat: s.beat, key });
      return;
    }
    case "import": {
      // Several at once, in one atomic; checked kinds only (an import answers no key to ping by).
      const account = m.accounts[s.account % 2];
      if (await countServices(t.kv, account) + s.n > 25) return;
      const n = m.live.size + m.removed.size;
      const names = Array.from({ length: s.n }, (_, i) => checked(`Imported ${n + i}`));
      for (const made of await importServices(t.deps, account, names)) {
        m.live.set(made.id, { account, beat: false, key: null });
      }
      return;
    }
    case "interval":
      if (svc) await patchService(t.deps, svc.account, id!, { interval: s.interval });
      return;
    case "rename":
      if (svc) await patchService(t.deps, svc.account, id!, { name: `Renamed ${id}` });
      return;
    case "schedule":
      // A new schedule (or none again) moves the due entry to now.
      if (svc?.beat) {
        const schedule = s.hourly ? validSchedule("webhook", "0 * * * *", "UTC", 30) : null;
        await patchService(t.deps, svc.account, id!, { schedule });
      }
      return;
    case "manual":
      // A manual check records its result and keeps the schedule.
      if (svc && !svc.beat) {
        await recordResult(t.deps, svc.account, id!, { state: s.state, status: "", ms: 3 }, null);
      }
      return;
    case "pause":
      if (svc?.beat) await patchService(t.deps, svc.account, id!, { paused: s.paused });
      return;
    case "badge":
      if (svc) await rotateBadge(t.deps, svc.account, id!);
      return;
    case "rotate":
      if (svc?.beat) svc.key = await rotateHook(t.deps, svc.account, id!);
      return;
    case "delete":
      if (svc) {
        assert.equal(await deleteService(t.deps, svc.account, id!), true);
        gone(id!);
      }
      return;
    case "erase": {
      const account = m.accounts[s.account % 2];
      await eraseServices(t.deps, account);
      for (const [id, v] of m.live) if (v.account === account) gone(id);
      return;
    }
    case "ping": {
      if (!svc?.beat) return;
      const at = await ping(t, m, id!, svc.key!, s.kind);
      if (s.kind === "start") m.starts.set(id!, [...m.starts.get(id!) ?? [], at]);
      // A failure asks for a look, and so does a success that may change the state (a
      // heartbeat waiting or off: kv/service/commands.ts `hookRef`).
      if (s.kind === "fail" || s.kind === "success") {
        const due = Math.floor(at / MINUTE) * MINUTE;
        m.fails.set(id!, (m.fails.get(id!) ?? new Set()).add(due));
        m.looks.set(id!, [...m.looks.get(id!) ?? [], { account: svc.account, id: id!, due }]);
      }
      return;
    }
    case "flood":
      // Enough events for a nudge, so the runner trims them within the minute.
      if (svc?.beat) {
        await Promise.all(
          Array.from({ length: 2 * EVENTS_KEPT }, () => ping(t, m, id!, svc.key!, "log")),
        );
      }
      return;
    case "queued": {
      // The KV queue's delivery of a failure's look, as main.ts's listener would: its nudge is
      // gone after it, claimed by it or by the runner before.
      const look = id === null ? undefined : m.looks.get(id)?.shift();
      if (!look) return;
      await handleQueued(t.deps, { look });
      const left = await t.kv.get(dueKey(look.due, look.id));
      const held = (await getService(t.kv, look.account, look.id)).value;
      // Still there only as the regular entry of the look's service, due in that minute again.
      assert.ok(
        left.versionstamp === null || held?.due === look.due,
        "a queued look takes its nudge",
      );
      return;
    }
    case "run":
      await runDueChecks(t.deps, { budgetMs: 60_000 });
      return;
    case "wait":
      t.clock.advance(s.minutes * MINUTE);
      return;
  }
}

/** The invariant of kv/service/store.ts, checked against the KV as it is now. */
async function holds(t: T, m: Model, why: string): Promise<void> {
  const records = new Map<number, Service>();
  for await (const e of serviceEntries(t.kv)) records.set(e.value.id, e.value);
  assert.deepEqual([...records.keys()].sort(), [...m.live.keys()].sort(), `${why}: records`);
  for (const account of m.accounts) {
    const held = [...records.values()].filter((s) => s.account === account).length;
    assert.equal(await countServices(t.kv, account), held, `${why}: count of ${account}`);
  }
  const ids = [...records.keys()];
  const byId = await serviceIdEntries(t.kv, [...ids, ...m.removed]);
  byId.forEach((e, i) => {
    const s = records.get(i < ids.length ? ids[i] : -1);
    assert.equal(e.value, s ? s.account : null, `${why}: id entry of ${String(e.key[1])}`);
  });
  const due = new Map<number, { at: number; account: number }[]>();
  for await (const e of t.kv.list<number>({ prefix: ["service_due"] })) {
    const id = e.key[2] as number;
    due.set(id, [...due.get(id) ?? [], { at: e.key[1] as number, account: e.value }]);
  }
  for (const [id, s] of records) {
    const entries = due.get(id) ?? [];
    assert.ok(entries.some((e) => e.at === s.due), `${why}: ${id} has its due entry`);
    for (const e of entries) {
      assert.equal(e.account, s.account, `${why}: due entry of ${id} names its account`);
      if (e.at === s.due) continue;
      assert.ok(s.kind === "webhook" && nudged(m, id, e.at), `${why}: ${id} nudged at ${e.at}`);
    }
  }
  for (const [id, entries] of due) {
    if (records.has(id)) continue;
    assert.ok(m.removed.has(id), `${why}: a due entry of no service ${id}`);
    for (const e of entries) {
      assert.ok(nudged(m, id, e.at), `${why}: removed ${id} left only nudges (${e.at})`);
    }
  }
}

Deno.test("service aggregate: one regular due entry per service, nudges only from pings, counts exact", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
      await using t = await testApp();
      const a = await t.account("a@example.org");
      const b = await t.account("b@example.org");
      const m: Model = {
        accounts: [a.account.id, b.account.id],
        live: new Map(),
        removed: new Set(),
        fails: new Map(),
        pinged: new Map(),
        starts: new Map(),
        looks: new Map(),
      };
      for (const [i, s] of steps.entries()) {
        await apply(t, m, s);
        await holds(t, m, `step ${i} ${s.op}`);
      }
      // Every nudge is due a day on (a start's comes by the run's grace, at most a day): the
      // runner takes them all, one entry of a service a run, a removed service's too (the claim
      // finds no record and deletes it), and leaves each service due after now.
      t.clock.advance(DAY + MINUTE);
      const now = t.clock.now();
      const dueNow = async () =>
        (await Array.fromAsync(t.kv.list({ prefix: ["service_due"] })))
          .filter((e) => (e.key[1] as number) <= now).length;
      for (let i = 0; i < 50 && await dueNow() > 0; i++) {
        await runDueChecks(t.deps, { budgetMs: 60_000 });
        await holds(t, m, `drained ${i}`);
      }
      assert.equal(await dueNow(), 0, "the runner took every due entry and nudge");
      for await (const e of t.kv.list({ prefix: ["service_due"] })) {
        assert.ok(
          m.live.has(e.key[2] as number),
          `a removed service's nudge went: ${String(e.key[2])}`,
        );
      }
    }),
    { numRuns: 60 },
  );
});
