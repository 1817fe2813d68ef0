/**
 * The catalogue in Chromium as a teacher uses it, by visible labels: facets with counts,
 * combined and removed, kept in the address through a reload and Back; the keyword box with a
 * typo and its "did you mean"; the no-match page's way out; a module's licence badge and its
 * attribution to copy; at 1280 and 375 px, axe clean, no sideways scroll.
 */
import assert from "node:assert/strict";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  clickByText,
  fillByLabel,
  heading,
  mainText,
  startWeb,
} from "./_browser.ts";

const count = (text: string) => Number(text.match(/(\d+) modules?\b/)?.[1] ?? NaN);

Deno.test({
  name: "browser: the catalogue's facets, keyword and licences",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    await web.demo();
    const page = await web.page();
    await page.goto(`${web.base}/catalogue`);

    await t.step("facets narrow, combine and come off, in the address", async () => {
      const all = count(await mainText(page));
      assert.ok(all >= 4, `${all} modules`);
      await clickByText(page, "Biology (2)");
      assert.equal(count(await mainText(page)), 2);
      assert.match(page.url(), /subject=s1001/);
      // Counts follow the other choices: within biology, one is CC0.
      await clickByText(page, "CC0 1.0 (1)");
      assert.equal(count(await mainText(page)), 1);
      assert.match(await mainText(page), /Counting birds with data/);
      await page.reload();
      assert.equal(count(await mainText(page)), 1);
      await assertGoodAtBoth(page);
      await page.goBack();
      assert.equal(count(await mainText(page)), 2);
      await page.goForward();
      await clickByText(page, "Remove subject: Biology");
      assert.doesNotMatch(page.url(), /subject=/);
      assert.match(page.url(), /licence=CC0-1\.0/);
      await clickByText(page, "Remove licence: CC0 1.0");
      assert.equal(count(await mainText(page)), all);
    });

    await t.step(
      "the keyword finds every field, forgives a typo, says what was meant",
      async () => {
        await fillByLabel(page, "Search the catalogue", "outdoor");
        await clickByText(page, "Find modules");
        // The track "Outdoor learning" is searched.
        assert.equal(count(await mainText(page)), 2);
        await fillByLabel(page, "Search the catalogue", "brids");
        await clickByText(page, "Find modules");
        assert.match(await mainText(page), /Did you mean birds\?/);
        assert.match(await mainText(page), /Counting birds with data/);
        await clickByText(page, "birds");
        assert.equal(
          await page.$eval("#f-q", (e) => (e as unknown as { value: string }).value),
          "birds",
        );
        await assertGoodAtBoth(page);
      },
    );

    await t.step("no match: the page offers to remove a filter", async () => {
      await page.goto(`${web.base}/catalogue?q=birds&area=social`);
      assert.match(await mainText(page), /No module matches/);
      await assertGoodAtBoth(page);
      await clickByText(page, "Remove area: social");
      assert.ok(count(await mainText(page)) >= 1);
    });

    await t.step("a module's licence: badge to the deed, attribution to copy", async () => {
      await page.goto(`${web.base}/modules/pond-life-through-the-seasons`);
      assert.equal(await heading(page), "Pond life through the seasons");
      const href = await page.$eval(
        "a[rel=license]",
        (a) => (a as unknown as { href: string }).href,
      );
      assert.equal(href, "https://creativecommons.org/licenses/by/4.0/");
      const credit = await page.$eval(
        "#attribution",
        (e) => (e as unknown as { value: string }).value,
      );
      assert.equal(credit, "‘Pond life through the seasons’ by Grete Olsen, CC BY 4.0");
      const text = await mainText(page);
      for (const words of ["Copy attribution", "Copy link", "Primary", "Biology", "8 to 11"]) {
        assert.ok(text.includes(words), words);
      }
      await assertGoodAtBoth(page);
    });
  },
});
