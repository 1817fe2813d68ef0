import assert from "node:assert/strict";
import fc from "fast-check";
import { DAY, fileClock, iso, isoDate } from "../lib/clock.ts";

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
