/**
 * A service's page in a real browser: added from its own page (the kind first, then the fields
 * of that kind, every message at once), its response-time chart with axes readable on a phone,
 * the period links, incidents and the events log in relative times, a state change shown
 * without a reload, dark mode and 375 px.
 */
import assert from "node:assert/strict";
import {
  assertAccessible,
  assertFitsPhone,
  assertGoodAtBoth,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  type Page,
  startWeb,
} from "./_browser.ts";
import { flakyTarget } from "./_servers.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

const CLAIM = /open \S+(\/me\/standing\/owner\?claim=[A-Za-z0-9_-]{43})/;

/** The labels of the page's form fields. */
const labels = (page: Page) =>
  page.$$eval("main form label", (ls: Dom[]) => ls.map((l) => l.innerText.trim() as string));

/** The state word in the service's facts. */
const stateWord = (page: Page) =>
  page.$eval(".top-facts .state", (e: Dom) => e.innerText.trim() as string);

Deno.test({
  name: "browser: adding a service by kind, its chart, incidents, events and live state",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using target = flakyTarget();
    await using web = await startWeb();
    const page = await web.page();
    page.on("dialog", (d) => void d.accept());
    await page.setViewport({ width: 1280, height: 900 });
    await web.signIn(page, "sam@example.com");
    // The first run's owner link (printed at start): an owner may watch 127.0.0.1.
    const claim = web.server.output().match(CLAIM)?.[1];
    assert.ok(claim, "the start printed the owner link");
    await page.goto(`${web.base}${claim}`);
    await clickByText(page, "Become the owner");

    await t.step("add a service: the kind first, then only that kind's fields", async () => {
      await page.goto(`${web.base}/watch`);
      await clickByText(page, "Add a service");
      assert.equal(await heading(page), "Add a service");
      await assertGoodAtBoth(page);
      await checkByLabel(page, "Heartbeat: it calls us (webhook)");
      await clickByText(page, "Next");
      let shown = await labels(page);
      assert.ok(shown.includes("Expected every") && shown.includes("Schedule (cron)"), `${shown}`);
      assert.ok(!shown.includes("Address to check"), "a heartbeat has no address");
      const every = await page.$eval("#f-interval", (s: Dom) => s.selectedOptions[0].text);
      assert.equal(every, "day", "a heartbeat is expected daily by default");
      // A bad cron line and a bad time zone: both said at once.
      await fillByLabel(page, "Name", "Nightly backup");
      await fillByLabel(page, "Schedule (cron)", "61 3 * * *");
      await fillByLabel(page, "Time zone of the schedule", "Mars/Olympus");
      await clickByText(page, "Add service");
      assert.notEqual(await fieldError(page, "Schedule (cron)"), "");
      assert.notEqual(await fieldError(page, "Time zone of the schedule"), "");
      await assertGoodAtBoth(page);

      await clickByText(page, "Choose another kind");
      await checkByLabel(page, "Web address (url)");
      await clickByText(page, "Next");
      shown = await labels(page);
      assert.ok(shown.includes("Address to check"));
      assert.ok(!shown.some((l) => /Schedule|Grace|Shortest run/.test(l)), `${shown}`);
      // Empty name and empty address: both flagged, with a summary on top.
      await clickByText(page, "Add service");
      assert.notEqual(await fieldError(page, "Name"), "");
      // Its words without the kind's prefix of the API's ("url: ..."): the kind is chosen above.
      assert.equal(await fieldError(page, "Address to check"), "Not a valid address.");
      const summary = await page.$eval("#errors", (e: Dom) => e.innerText as string);
      assert.match(summary, /Name/);
      assert.match(summary, /Address to check/);
      await assertGoodAtBoth(page);
      await fillByLabel(page, "Name", "Library site");
      await fillByLabel(page, "Address to check", target.check.slice("url:".length));
      await clickByText(page, "Add service");
      assert.equal(await heading(page), "Library site");
    });

    await t.step("the chart: points, readable axes at 375 px, periods", async () => {
      for (let i = 0; i < 3; i++) await clickByText(page, "Check now");
      assert.equal(await stateWord(page), "Up");
      const median = await page.$eval("svg.chart path.c-median", (p: Dom) => p.getAttribute("d"));
      assert.match(median, /^M\d/, "the median line has points");
      const label = await page.$eval("svg.chart", (s: Dom) => s.getAttribute("aria-label"));
      assert.match(label, /over the last 1 hour\. \d+ checks: median \d+ ms/);
      await page.setViewport({ width: 375, height: 800 });
      const axis = await page.$$eval("svg.chart text.axis", (ts: Dom[]) =>
        ts.map((t) => {
          const r = t.getBoundingClientRect();
          return { text: t.textContent, height: r.height, left: r.left, right: r.right };
        }));
      assert.ok(axis.length >= 5, "a scale and a time axis");
      for (const a of axis) {
        assert.ok(a.height >= 11, `"${a.text}" is readable (${a.height} px high)`);
        assert.ok(a.left >= 0 && a.right <= 375, `"${a.text}" is inside the screen`);
      }
      // Time-axis labels written in the reader's zone: a time of day, not a machine stamp, and
      // none over its neighbour.
      const times = axis.filter((a: { text: string }) => !/ ?m?s$/.test(a.text))
        .sort((a: { left: number }, b: { left: number }) => a.left - b.left);
      assert.ok(times.length >= 3, "a time axis");
      for (const [i, a] of times.entries()) {
        assert.match(a.text, /^\d\d:\d\d$/);
        if (i) {
          assert.ok(times[i - 1].right < a.left, `"${times[i - 1].text}" and "${a.text}" apart`);
        }
      }
      await assertFitsPhone(page);
      await page.setViewport({ width: 1280, height: 900 });
      await clickByText(page, "7 days");
      assert.match(await mainText(page), /Response time, last 7 days/);
      await assertGoodAtBoth(page);
    });

    await t.step("a state change shows without a reload: state, incident, event", async () => {
      await page.evaluate(() => ((globalThis as Dom).stillHere = true));
      const other = await page.browserContext().newPage();
      await other.goto(page.url());
      target.failing = true;
      await clickByText(other, "Check now");
      await page.waitForFunction(
        () =>
          (globalThis as Dom).document.querySelector(".top-facts .state")?.innerText.trim() ===
            "Down",
        { polling: "mutation", timeout: 20_000 },
      );
      assert.equal(await page.evaluate(() => (globalThis as Dom).stillHere), true, "no reload");
      const text = await mainText(page);
      assert.match(text, /Down since (just now|\d+ seconds? ago)/);
      assert.doesNotMatch(text, /\d{4}-\d\d-\d\dT/, "no machine stamps");
      const failed = await page.$$eval("svg.chart rect.t-off", (r: Dom[]) => r.length);
      assert.ok(failed >= 1, "the failed check is marked on the chart");
      target.failing = false;
      await clickByText(other, "Check now");
      await page.waitForFunction(
        () =>
          (globalThis as Dom).document.querySelector(".top-facts .state")?.innerText.trim() ===
            "Up",
        { polling: "mutation", timeout: 20_000 },
      );
      assert.match(await mainText(page), /Down for 1 min, from /);
      await other.close();
    });

    await t.step("dark mode and a phone, axe clean", async () => {
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      await assertAccessible(page);
      await page.setViewport({ width: 375, height: 800 });
      await assertAccessible(page);
      await assertFitsPhone(page);
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(`${web.base}/me/services`);
      await assertGoodAtBoth(page);
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    });
  },
});
