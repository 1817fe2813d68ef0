/**
 * The uptime report in a real browser (issue 47, item 3): asked for with its form (a service
 * chosen by its name), read, a wrong month answered beside its field with what was typed kept,
 * the monthly mail turned on; axe clean at 1280 px and 375 px; printed (print media at the
 * printable width of A4 and Letter), the report alone, no wider than the paper.
 */
import assert from "node:assert/strict";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  clickByText,
  fieldError,
  mainText,
  openUrl,
  revisit,
  selectByLabel,
  startWeb,
} from "./_browser.ts";
import { bearerApi } from "./_real_server.ts";

Deno.test({
  name: "browser: the uptime report asked, read, refused beside its field, printed",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    await page.setViewport({ width: 1280, height: 900 });
    await web.signIn(page, "reports@example.com");
    const cookie = (await page.cookies()).find((c) => c.name === "session")!;
    const api = bearerApi(web.base, cookie.value);
    await api("POST", "/api/me/services", {
      name: "Nightly export",
      check: "webhook:",
      interval: 60,
    });
    await api("POST", "/api/me/services", { name: "Photo NAS", check: "webhook:", interval: 60 });

    await t.step("from the services page to the report of the account", async () => {
      await openUrl(page, `${web.base}/me/services`, "Watched services");
      await clickByText(page, "Uptime report");
      assert.match(await mainText(page), /How uptime is counted\./);
      assert.match(await mainText(page), /All services/);
      assert.match(await mainText(page), /Photo NAS/);
      await assertGoodAtBoth(page);
    });

    await t.step("one service, chosen by its name", async () => {
      await selectByLabel(page, "What it covers", "Photo NAS");
      await clickByText(page, "Show the report");
      const url = new URL(page.url());
      assert.equal(url.pathname, "/me/reports");
      const text = await mainText(page);
      assert.match(text, /Photo NAS:/);
      assert.doesNotMatch(text, /Nightly export\s+not measured/);
      await assertGoodAtBoth(page);
    });

    await t.step("a wrong month: said beside the field, what was typed kept", async () => {
      await openUrl(page, `${web.base}/me/reports?what=&month=2026-13`, "Uptime report");
      assert.match(await fieldError(page, "Month"), /YYYY-MM/);
      await assertGoodAtBoth(page);
    });

    await t.step("the monthly mail on, and said so", async () => {
      // The report of all services, as checked in the first step.
      await revisit(page, `${web.base}/me/reports`, "Uptime report");
      await clickByText(page, "Mail it to me monthly");
      assert.match(await mainText(page), /On: the report of all services/);
      assert.equal(new URL(page.url()).pathname, "/me/reports");
      await assertGoodAtBoth(page);
    });

    await t.step("printed on A4 or Letter: the report alone, within the paper", async () => {
      await page.emulateMediaType("print");
      // The printable width of A4 (210 mm less 24 mm of margins) and of Letter, at 96 dpi.
      for (const width of [703, 725]) {
        await page.setViewport({ width, height: 1000 });
        const shown = await page.evaluate(`(() => ({
          wide: document.documentElement.scrollWidth,
          form: getComputedStyle(document.querySelector("form.report-ask")).display,
          nav: getComputedStyle(document.querySelector("nav")).display,
          table: !!document.querySelector(".report table"),
        }))()`) as { wide: number; form: string; nav: string; table: boolean };
        assert.ok(shown.wide <= width, `${shown.wide} px wide on a ${width} px page`);
        assert.equal(shown.form, "none");
        assert.equal(shown.nav, "none");
        assert.equal(shown.table, true);
      }
      await page.emulateMediaType("screen");
    });
  },
});
