/**
 * Incidents in a real browser (issue 47, item 2): opened from its form (a title too short said
 * beside its field, everything typed kept), three updates to resolved, the timeline newest first
 * and the history by month with its duration; axe clean at 1280 px and 375 px, no sideways
 * scrolling at 375 px (assertGoodAtBoth).
 */
import assert from "node:assert/strict";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  fieldError,
  fillByLabel,
  mainText,
  openUrl,
  selectByLabel,
  startWeb,
} from "./_browser.ts";
import { bearerApi } from "./_real_server.ts";

Deno.test({
  name: "browser: an incident opened, updated to resolved, read as visitors read it",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    await page.setViewport({ width: 1280, height: 900 });
    await web.signIn(page, "incidents@example.com");
    const cookie = (await page.cookies()).find((c) => c.name === "session")!;
    const api = bearerApi(web.base, cookie.value);
    await api("POST", "/api/me/services", { name: "Webshop", check: "webhook:", interval: 60 });

    await t.step("the form: a short title said beside it, what was typed kept", async () => {
      await openUrl(page, `${web.base}/me/incidents`, "Incidents");
      assert.match(await mainText(page), /No open incidents\./);
      await fillByLabel(page, "Title", "Up");
      await checkByLabel(page, "Webshop");
      await selectByLabel(page, "Impact", "Major");
      await fillByLabel(page, "What people should know", "Orders fail at the payment step.");
      await clickByText(page, "Open the incident");
      assert.match(await fieldError(page, "Title"), /at least 3/);
      const kept = await page.$eval("textarea[name=text]", (el: { value: string }) => el.value);
      assert.equal(kept, "Orders fail at the payment step.");
      await assertGoodAtBoth(page);
    });

    await t.step("opened: its page with the first update", async () => {
      await fillByLabel(page, "Title", "Checkout fails");
      await clickByText(page, "Open the incident");
      assert.match(new URL(page.url()).pathname, /^\/me\/incidents\/\d+$/);
      const text = await mainText(page);
      assert.match(text, /Investigating/);
      assert.match(text, /Impact: Major/);
      assert.match(text, /Affects Webshop/);
      await assertGoodAtBoth(page);
    });

    await t.step("three updates to resolved, newest first", async () => {
      for (
        const [state, words] of [
          ["Identified", "The provider's certificate expired."],
          ["Monitoring", "A new certificate is in place."],
          ["Resolved", "Payments work again."],
        ]
      ) {
        await selectByLabel(page, "State", state);
        await fillByLabel(page, "What people should know", words);
        await clickByText(page, "Post the update");
        assert.match(await mainText(page), new RegExp(words.replace(".", "\\.")));
      }
      const text = await mainText(page);
      assert.ok(text.indexOf("Payments work again.") < text.indexOf("Orders fail"), "newest first");
      assert.match(text, /lasted \d+ s/);
      await assertGoodAtBoth(page);
    });

    await t.step("the list: none open, the history by month", async () => {
      await openUrl(page, `${web.base}/me/incidents`, "Incidents");
      const text = await mainText(page);
      assert.match(text, /No open incidents\./);
      assert.match(text, /Incident history/);
      const month = new Date().toLocaleString("en", { month: "long", timeZone: "UTC" });
      assert.match(text, new RegExp(`${month} \\d{4}`));
      assert.match(text, /Checkout fails/);
      await assertGoodAtBoth(page);
    });
  },
});
