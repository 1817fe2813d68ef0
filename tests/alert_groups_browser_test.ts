/**
 * The alert grouping switch in a real browser (issue 24, part 1): on the alert channels page,
 * turned off and on again, the page saying what it saved; axe clean at 1280 px and 375 px,
 * no sideways scrolling at 375 px (assertGoodPage).
 */
import assert from "node:assert/strict";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  mainText,
  openUrl,
  type Page,
  startWeb,
} from "./_browser.ts";

const SWITCH = "Send one alert for services that go off or come back together";

const ticked = (page: Page) =>
  page.$eval("input[name=grouping]", (el: { checked: boolean }) => el.checked);

Deno.test({
  name: "browser: alert grouping turned off and on on the alert channels page",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    await page.setViewport({ width: 1280, height: 900 });
    await web.signIn(page, "lan@example.com");

    await t.step("the switch is on by default, and says what it does", async () => {
      await openUrl(page, `${web.base}/me/channels`, "Alert channels");
      assert.equal(await ticked(page), true);
      assert.match(await mainText(page), /One outage, few alerts/);
      assert.match(await mainText(page), /The first service that goes off always alerts at once/);
      await assertGoodAtBoth(page);
    });

    await t.step("off: saved, said, and shown cleared", async () => {
      await checkByLabel(page, SWITCH, false);
      await clickByText(page, "Save alert grouping");
      assert.match(await mainText(page), /Saved: every service alerts on its own\./);
      assert.equal(await ticked(page), false);
      await assertGoodAtBoth(page);
      // A reload shows the same, and changes nothing.
      await page.reload({ waitUntil: "load" });
      assert.equal(await ticked(page), false);
    });

    await t.step("on again", async () => {
      await checkByLabel(page, SWITCH, true);
      await clickByText(page, "Save alert grouping");
      assert.match(await mainText(page), /Saved: services that go off or come back together/);
      assert.equal(await ticked(page), true);
      await assertGoodAtBoth(page);
    });
  },
});
