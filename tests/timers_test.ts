import assert from "node:assert/strict";
import { after, deadline, every, sleep } from "../lib/timers.ts";

Deno.test("timers: after runs once, when its time has come", async () => {
  const started = performance.now();
  const runs: number[] = [];
  after(30, () => runs.push(performance.now() - started));
  await sleep(10);
  assert.deepEqual(runs, []);
  await sleep(60);
  assert.equal(runs.length, 1);
  assert.ok(runs[0] >= 29, `ran after ${runs[0]} ms`);
});

Deno.test("timers: a cancelled timer never runs and holds nothing open", async () => {
  let ran = false;
  // Cancelled long before its time: the test's op sanitizer sees no timer left behind.
  after(10_000, () => ran = true).cancel();
  const soon = after(10, () => ran = true);
  soon.cancel();
  await sleep(30);
  assert.equal(ran, false);
});

Deno.test("timers: every repeats until cancelled, also from inside its own call", async () => {
  let calls = 0;
  const ticking = every(10, () => {
    calls++;
    if (calls === 3) ticking.cancel();
  });
  await sleep(100);
  assert.equal(calls, 3);
});

Deno.test("timers: a time in the past or not whole runs at the next turn", async () => {
  let ran = 0;
  after(-5, () => ran++);
  after(0.4, () => ran++);
  await sleep(5);
  assert.equal(ran, 2);
});

Deno.test("timers: deadline answers what the work gives, or refuses it once it took too long", async () => {
  const within = deadline(60);
  assert.equal(await within(Promise.resolve(7)), 7);
  await assert.rejects(within(Promise.reject(new Error("own"))), /own/);
  const started = performance.now();
  // Never settles: refused between the limit and a check interval (250 ms) after it.
  const stuck = await within(new Promise(() => {})).catch((err) => err);
  const took = performance.now() - started;
  assert.match(String(stuck), /no answer within 60 ms/);
  assert.ok(took >= 59 && took < 60 + 300, `refused after ${took} ms`);
  // Many waits at once share the one check: each is refused alone, the quick ones answer.
  const results = await Promise.allSettled([
    within(new Promise(() => {})),
    within(sleep(5).then(() => "quick")),
  ]);
  assert.deepEqual(results.map((r) => r.status), ["rejected", "fulfilled"]);
  // Once nothing waits, the check stops: the test's op sanitizer sees no timer left behind.
  await sleep(300);
});
