/** lib/timing_words.ts: a service's timing as a person says it. */
import assert from "node:assert/strict";
import { durationWords, graceWords, scheduleWords, timingSentence } from "../lib/timing_words.ts";

Deno.test("timing words: durations, graces and the common cron lines", () => {
  assert.equal(durationWords(90), "90 seconds");
  assert.equal(durationWords(300), "5 minutes");
  assert.equal(durationWords(3600), "1 hour");
  assert.equal(durationWords(5400), "1 hour 30 minutes");
  assert.equal(durationWords(7 * 86400), "7 days");
  assert.equal(graceWords(1800), "30 minutes' grace");
  assert.equal(graceWords(3600), "1 hour's grace");
  assert.equal(scheduleWords("0 3 * * *", "Europe/Berlin"), "every day at 03:00 Europe/Berlin");
  assert.equal(scheduleWords("30 8 * * 1", "UTC"), "every Monday at 08:30 UTC");
  assert.equal(scheduleWords("0 9 * * 1-5", "UTC"), "every weekday at 09:00 UTC");
  assert.equal(scheduleWords("0 3,15 * * *", "UTC"), "every day at 03:00 and 15:00 UTC");
  assert.equal(scheduleWords("*/15 * * * *", "UTC"), "every 15 minutes");
  assert.equal(scheduleWords("0 0 1 * *", "UTC"), "on day 1 of every month at 00:00 UTC");
  // What no common form fits reads as itself.
  assert.equal(scheduleWords("0 3 * 1 *", "UTC"), 'on the schedule "0 3 * 1 *" UTC');
  assert.equal(scheduleWords("Mon *-*-* 03:00", "UTC"), 'on the schedule "Mon *-*-* 03:00" UTC');
});

Deno.test("timing words: a heartbeat's whole sentence, a check's interval", () => {
  const hb = { kind: "webhook", interval: 1440, period_seconds: null, grace_seconds: 1800 };
  assert.equal(
    timingSentence({ ...hb, schedule: "0 3 * * *", tz: "Europe/Berlin" }),
    "every day at 03:00 Europe/Berlin, 30 minutes' grace",
  );
  assert.equal(
    timingSentence({ ...hb, schedule: null, tz: null, period_seconds: 86400 }),
    "every day, 30 minutes' grace",
  );
  assert.equal(
    timingSentence({
      kind: "url",
      interval: 5,
      schedule: null,
      tz: null,
      period_seconds: null,
      grace_seconds: null,
    }),
    "checked every 5 minutes",
  );
});
