import assert from "node:assert/strict";
import fc from "fast-check";
import { atTime, DAY, fileClock, fileSteps, iso, isoDate } from "../lib/clock.ts";

Deno.test("clock: iso() writes exactly what Date#toISOString writes", () => {
  // Leap days, century rules, both ends of the 4-digit years, the epoch and just before it.
  const edges = [
    0,
    -1,
    951_782_400_000, // 2000-02-29
    4_107_542_399_999, // 2100-02-28T23:59:59.999Z
    -62_167_219_200_000, // 0000-01-01
    253_402_300_799_999, // 9999-12-31T23:59:59.999Z
    1_795_464_000_000,
  ];
  for (const ms of edges) assert.equal(iso(ms), new Date(ms).toISOString(), String(ms));
  fc.assert(
    fc.property(
      fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
      (ms) => iso(ms) === new Date(ms).toISOString(),
    ),
    { numRuns: 20_000 },
  );
  // Outside that range, and for a fraction, the Date's own answer (or its RangeError).
  assert.equal(iso(253_402_300_800_000), new Date(253_402_300_800_000).toISOString());
  assert.equal(iso(1.5), new Date(1.5).toISOString());
  assert.throws(() => iso(NaN), RangeError);
  assert.equal(isoDate(20_000 * DAY), "2024-10-04");
});

Deno.test("clock: the test clock reads its offset from the file at every reading", () => {
  const file = { text: "" as string | null };
  const clock = fileClock("offset", () => {
    if (file.text === null) throw new Deno.errors.NotFound("offset");
    return file.text;
  });
  const near = (ms: number, offset: number) => Math.abs(ms - (Date.now() + offset)) < 1_000;
  file.text = null;
  assert.ok(near(clock.now(), 0), "no file yet: the system's time");
  file.text = "86400000\n";
  assert.ok(near(clock.now(), DAY), "a day ahead");
  // Anything but a whole non-negative number (a file being written, a typo) keeps the last.
  for (const bad of ["", "-5", "1e9", "12 34", "soon"]) {
    file.text = bad;
    assert.ok(near(clock.now(), DAY), JSON.stringify(bad));
  }
  file.text = "172800000";
  assert.ok(near(clock.now(), 2 * DAY));
});

Deno.test("clock: the test switch runs the jobs once per number asked, never two runs at once, and a restart answers only what is new", async () => {
  const dir = await Deno.makeTempDir({ prefix: "steps_" });
  const path = `${dir}/offset`;
  const ask = (n: number) => Deno.writeTextFile(`${path}.step`, String(n));
  const done = () => Deno.readTextFile(`${path}.done`).then(Number, () => 0);
  const until = async (what: string, ok: () => Promise<boolean> | boolean) => {
    for (let i = 0; i < 200 && !await ok(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(await ok(), what);
  };
  let runs = 0;
  let running = 0;
  let most = 0;
  let release = () => {};
  const run = async () => {
    runs++;
    most = Math.max(most, ++running);
    await new Promise<void>((r) => release = r);
    running--;
  };
  let steps = fileSteps(path, run, 5);
  try {
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(runs, 0, "nothing asked: no run");
    await ask(1);
    await until("the first run", () => runs === 1);
    await ask(2); // asked while the first still runs
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(runs, 1, "the second waits for the first");
    assert.equal(await done(), 0, "not done while it runs");
    release();
    await until("the second run", () => runs === 2);
    release();
    await until("both answered", async () => await done() === 2);
    assert.equal(most, 1, "never two runs at once");
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(runs, 2, "one run per number");
    // A process started again on the same files runs nothing already answered.
    steps.stop();
    steps = fileSteps(path, run, 5);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(runs, 2, "a restart reruns nothing");
    await ask(3);
    await until("asked after the restart", () => runs === 3);
    release();
    await until("answered", async () => await done() === 3);
  } finally {
    steps.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("clock: atTime waits for the clock, and notices a test clock moved past the time", async () => {
  let offset = 0;
  const clock = { now: () => Date.now() + offset };
  const called: number[] = [];
  atTime(clock, clock.now() - 1, () => called.push(1));
  assert.deepEqual(called, [1], "a time already past: at once");
  atTime(clock, clock.now() + 60_000, () => called.push(2));
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(called, [1], "a minute ahead: not yet");
  offset = 61_000;
  // Looked for until it comes, not waited out: atTime looks at the clock once a second.
  for (const until = Date.now() + 1_300; called.length < 2 && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(called, [1, 2], "the clock moved past it: within a second");
});
