/**
 * The monitor's own downtime, in process (issue 47, item 4): pulses and gaps (kv/service/monitor.ts),
 * what a gap does to the figures (lib/history.ts), and the watchdog's target rules
 * (jobs/watchdog.ts, the rules of lib/outbound.ts).
 */
import assert from "node:assert/strict";
import { GAP_MS, gapAt, listGaps, notePulse } from "../kv/service/monitor.ts";
import { pingWatchdog, watchdogAddress } from "../jobs/watchdog.ts";
import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import { dailyFigures, upAndDown } from "../lib/history.ts";
import { parseNetworks } from "../lib/networks.ts";
import type { Network } from "../lib/networks.ts";
import { expectLog, fakeResolver, T0, testApp } from "./_helpers.ts";

Deno.test("monitor: a pulse after more than three minutes stores the stretch between as a gap", async () => {
  await using t = await testApp();
  assert.equal(await notePulse(t.kv, T0), null, "a new server has no gap");
  assert.equal(await notePulse(t.kv, T0 + MINUTE), null);
  assert.equal(await notePulse(t.kv, T0 + MINUTE + GAP_MS), null, "three minutes is no stop");
  const from = T0 + MINUTE + GAP_MS;
  const gap = await notePulse(t.kv, from + 20 * MINUTE);
  assert.deepEqual(gap, { from, to: from + 20 * MINUTE });
  assert.equal(await notePulse(t.kv, from), null, "an older pulse (another clock) is no gap");
  assert.deepEqual(await listGaps(t.kv, T0, T0 + HOUR), [[from, from + 20 * MINUTE]]);
  // Cut to the range asked.
  assert.deepEqual(await listGaps(t.kv, from + 5 * MINUTE, from + 10 * MINUTE), [[
    from + 5 * MINUTE,
    from + 10 * MINUTE,
  ]]);
  assert.deepEqual(await listGaps(t.kv, from + 21 * MINUTE, from + HOUR), []);
  const now = from + 21 * MINUTE;
  assert.deepEqual(await gapAt(t.kv, from + MINUTE, now), { from, to: from + 20 * MINUTE });
  assert.equal(await gapAt(t.kv, from + 20 * MINUTE, now), null);
  // A look after a return, before its pulse: the stretch since the last pulse.
  const later = from + 20 * MINUTE + 10 * MINUTE;
  assert.deepEqual(await gapAt(t.kv, later - MINUTE, later), {
    from: from + 20 * MINUTE,
    to: later,
  });
});

Deno.test("monitor: a gap is neither up nor down, and counted apart", () => {
  const day = Math.floor(T0 / DAY) * DAY;
  const changes = [{ at: day, state: "ok" as const }, {
    at: day + 12 * HOUR,
    state: "off" as const,
  }];
  // Down from noon; the monitor was down from 11:00 to 13:00.
  const gaps: [number, number][] = [[day + 11 * HOUR, day + 13 * HOUR]];
  const span = upAndDown({ changes, before: null, from: day, to: day + DAY, gaps });
  assert.deepEqual(span, { up: 11 * HOUR, down: 11 * HOUR });
  const [fig] = dailyFigures({ now: day + DAY - 1, days: 1, changes, before: null, gaps });
  assert.equal(fig.monitor_down_s, 2 * 3600);
  assert.equal(fig.down_s, Math.round((11 * HOUR - 1) / 1000));
  // Without the gap the same history would be down 12 hours.
  const plain = upAndDown({ changes, before: null, from: day, to: day + DAY });
  assert.equal(plain.down, 12 * HOUR);
});

Deno.test("watchdog: the target rules of every outgoing request; the Healthchecks addresses", async () => {
  assert.equal(
    watchdogAddress("https://hc-ping.com/abc", "start"),
    "https://hc-ping.com/abc/start",
  );
  assert.equal(watchdogAddress("https://hc-ping.com/abc", "success"), "https://hc-ping.com/abc");
  assert.equal(watchdogAddress("https://hc-ping.com/abc", "fail"), "https://hc-ping.com/abc/fail");
  const resolver = fakeResolver({ "dog.example": ["10.1.2.3"], "plain.example": ["192.0.2.80"] });
  {
    await using t = await testApp({ resolver, config: { watchdogUrl: "https://dog.example/p" } });
    const sent = await expectLog(
      [/watchdog refused.*private address/],
      () => pingWatchdog(t.deps, "start"),
    );
    assert.equal(sent, false);
  }
  {
    await using t = await testApp({ resolver, config: { watchdogUrl: "http://plain.example/p" } });
    const sent = await expectLog(
      [/watchdog refused.*use https/],
      () => pingWatchdog(t.deps, "start"),
    );
    assert.equal(sent, false);
  }
  {
    // Inside CHANNEL_NETWORKS the private address is allowed; the connection is then tried
    // (and refused by the test's connector): a failure logged, never thrown.
    const nets = parseNetworks("10.0.0.0/8") as Network[];
    await using t = await testApp({
      resolver,
      config: { watchdogUrl: "http://dog.example/p", channelNetworks: nets },
    });
    const sent = await expectLog([/watchdog ping failed/], () => pingWatchdog(t.deps, "success"));
    assert.equal(sent, false);
  }
  {
    await using t = await testApp({ resolver });
    assert.equal(await pingWatchdog(t.deps, "start"), false, "no WATCHDOG_URL: nothing sent");
  }
});
