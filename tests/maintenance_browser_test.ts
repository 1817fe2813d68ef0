/**
 * Maintenance in a real browser: the time zone field offers the browser's own zone; "Start now"
 * for a chosen time starts a window at once, "End now" ends it; a window on a schedule ends its
 * run ("End this run now") and keeps its schedule; Back and the same form sent again adds nothing
 * (the form's token), and the page says so. Axe clean at 1280 and 375 px, light and
 * dark.
 */
import assert from "node:assert/strict";
import {
  assertAccessible,
  assertGoodAtBoth,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  fillByLabel,
  heading,
  mainText,
  selectByLabel,
  startWeb,
} from "./_browser.ts";
import { bearerApi, signInByMail } from "./_real_server.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

Deno.test({
  name: "browser: maintenance started now and ended now; the same form twice adds one",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    await page.setViewport({ width: 1280, height: 900 });
    await page.emulateTimezone("Europe/Berlin");
    await web.signIn(page, "mara@example.com");
    const api = bearerApi(web.base, await signInByMail(web.base, web.sink, "mara@example.com"));
    await api("POST", "/api/me/services", { name: "Core router", check: "webhook:" });
    const windows = async () =>
      (await api("GET", "/api/me/maintenance")).items as {
        name: string;
        cron: string | null;
        running_until: string | null;
        next_start: string | null;
      }[];

    await t.step("start now, for 30 minutes, in the browser's zone", async () => {
      await page.goto(`${web.base}/me/maintenance`);
      assert.equal(await heading(page), "Maintenance windows");
      assert.equal(await page.$eval("#f-tz", (e: Dom) => e.value), "Europe/Berlin");
      await fillByLabel(page, "Name of the window", "Router reboot");
      await checkByLabel(page, "Core router");
      await selectByLabel(page, "For", "30 minutes");
      await clickByText(page, "Start now");
      assert.match(await mainText(page), /Router reboot[^]*Running now, until/);
      const [w] = await windows();
      assert.equal(w.name, "Router reboot");
      const left = Date.parse(w.running_until!) - Date.now();
      assert.ok(left > 29 * 60_000 && left <= 30 * 60_000, `${left} ms left`);
      await assertGoodAtBoth(page);
    });

    await t.step("Back and the same form again: nothing added twice", async () => {
      await page.goBack();
      assert.equal(await page.$eval("#f-name", (e: Dom) => e.value), "Router reboot");
      await clickByText(page, "Start now");
      assert.match(await mainText(page), /That form was sent before: its window was added once/);
      assert.equal((await windows()).length, 1);
    });

    await t.step("end now: over at once", async () => {
      await clickByText(page, "End now: Router reboot");
      assert.doesNotMatch(await mainText(page), /Running now/);
      assert.match(await mainText(page), /Over\./);
      assert.equal((await windows())[0].running_until, null);
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      await assertAccessible(page);
      await page.setViewport({ width: 375, height: 800 });
      await assertAccessible(page);
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
      await page.setViewport({ width: 1280, height: 900 });
    });

    await t.step("a window on a schedule: its run ends now, its schedule stays", async () => {
      await page.goto(`${web.base}/me/maintenance`);
      // Every hour for an hour: it always runs.
      await fillByLabel(page, "Name of the window", "Hourly sweep");
      await checkByLabel(page, "Core router");
      await selectByLabel(page, "When it runs", "On a schedule");
      await fillByLabel(page, "Schedule (cron)", "0 * * * *");
      await fillByLabel(page, "Length of each run (minutes)", "60");
      await clickByText(page, "Plan a window");
      assert.match(await mainText(page), /Hourly sweep[^]*Running now, until/);
      // On a phone its two buttons stand on two lines, apart: no delete under a finger's slip.
      await page.setViewport({ width: 375, height: 800 });
      const gaps = await page.$$eval(".cards li", (cards: Dom[]) =>
        cards.map((card) => {
          const [end, del] = [...card.querySelectorAll("button")]
            .map((b: Dom) => b.getBoundingClientRect());
          return del && end.bottom <= del.top ? del.top - end.bottom : null;
        }));
      assert.ok(gaps.some((g) => g !== null), `a card's buttons on two lines: ${gaps}`);
      assert.ok(gaps.every((g) => g === null || g >= 4), `gaps between them: ${gaps} px`);
      await page.setViewport({ width: 1280, height: 900 });
      await clickByText(page, "End this run now: Hourly sweep");
      assert.match(await mainText(page), /Hourly sweep[^]*Next start:/);
      const w = (await windows()).find((x) => x.name === "Hourly sweep")!;
      assert.equal(w.running_until, null);
      assert.equal(w.cron, "0 * * * *");
      const next = Date.parse(w.next_start!) - Date.now();
      assert.ok(next > 0 && next <= 60 * 60_000, `next run in ${next} ms`);
      await assertGoodAtBoth(page);
    });
  },
});
