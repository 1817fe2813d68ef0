/**
 * The public pages in Chromium, as a visitor uses them: home, catalogue filters, a module page
 * (its JSON-LD within the CSP), a contributor's profile, search, the point button, the request
 * and proposal forms, the proposal's status page from its mail, and the API reference viewer.
 * Every page: no console error or CSP violation, axe-core clean, no sideways scroll at 375 px,
 * and under 60 KB of HTML, CSS and JS (the API reference aside).
 */
import assert from "node:assert/strict";
import {
  assertGoodPage,
  assertNoProblems,
  BROWSER_TEST,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  type Page,
  selectByLabel,
  startWeb,
} from "./_browser.ts";

/** Bytes of the page's own HTML, CSS and JS as the browser received them (uncompressed). */
async function pageWeight(page: Page, url: string): Promise<number> {
  let total = 0;
  const seen = new Set<string>();
  const onResponse = async (r: { url(): string; buffer(): Promise<Uint8Array> }) => {
    if (seen.has(r.url())) return;
    seen.add(r.url());
    try {
      total += (await r.buffer()).length;
    } catch { /* redirects have no body */ }
  };
  page.on("response", onResponse);
  await page.setCacheEnabled(false);
  await page.goto(url, { waitUntil: "networkidle0" });
  await new Promise((r) => setTimeout(r, 50));
  page.off("response", onResponse);
  await page.setCacheEnabled(true);
  return total;
}

const LIMIT = 60 * 1024;

Deno.test({
  name: "browser: the public pages as a visitor uses them",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    await web.demo();
    const page = await web.page();

    await t.step("home: newest modules, search field, ways in", async () => {
      const weight = await pageWeight(page, `${web.base}/`);
      assert.ok(weight < LIMIT, `home is ${weight} bytes`);
      assert.equal(await heading(page), "Community catalogue");
      assert.match(await mainText(page), /Newest modules/);
      await assertGoodPage(page);
    });

    await t.step("catalogue: filter by state and sort", async () => {
      await clickByText(page, "Browse the catalogue");
      assert.equal(await heading(page), "Catalogue");
      const all = await page.$$eval("main .cards h3", (h) => h.length);
      assert.ok(all >= 3, `${all} modules`);
      await clickByText(page, "finished (2)");
      await selectByLabel(page, "Sort by", "Title (A to Z)");
      await clickByText(page, "Sort");
      const titles = await page.$$eval(
        "main .cards h3",
        (hs) => hs.map((h) => (h as unknown as { innerText: string }).innerText),
      );
      assert.ok(titles.length > 0 && titles.length < all, `${titles.length} of ${all}`);
      assert.deepEqual(titles, [...titles].sort((a, b) => a.localeCompare(b)));
      assert.match(await mainText(page), /finished/);
      await assertGoodPage(page);
      const weight = await pageWeight(page, `${web.base}/catalogue`);
      assert.ok(weight < LIMIT, `catalogue is ${weight} bytes`);
    });

    await t.step("module page: fields, JSON-LD within the CSP, contributor's profile", async () => {
      await page.goto(`${web.base}/catalogue?sort=title`);
      await clickByText(page, "Pond life through the seasons");
      assert.equal(new URL(page.url()).pathname, "/modules/pond-life-through-the-seasons");
      assert.equal(await heading(page), "Pond life through the seasons");
      const text = await mainText(page);
      for (const part of ["A seasonal species chart", "4 sessions of 90 minutes", "Contributors"]) {
        assert.ok(text.includes(part), part);
      }
      const ld = await page.$eval(
        'script[type="application/ld+json"]',
        (s) => (s as unknown as { textContent: string }).textContent,
      );
      assert.deepEqual(JSON.parse(ld).type, ["LearningResource"]);
      await assertGoodPage(page); // no CSP report for the JSON-LD block
      const weight = await pageWeight(page, page.url());
      assert.ok(weight < LIMIT, `module page is ${weight} bytes`);
      await clickByText(page, "Grete Olsen");
      assert.match(new URL(page.url()).pathname, /^\/people\//);
      assert.equal(await heading(page), "Grete Olsen");
      assert.match(await mainText(page), /Pond life through the seasons/);
      await assertGoodPage(page);
    });

    await t.step("search finds modules and people", async () => {
      await page.goto(`${web.base}/search`);
      await fillByLabel(page, "Search modules, people and journals", "pond");
      await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
      assert.equal(await heading(page), "Search");
      assert.match(await mainText(page), /Pond life through the seasons/);
      await assertGoodPage(page);
    });

    await t.step("a signed-in visitor gives and withdraws a point", async () => {
      await web.signIn(page, "visitor@example.com");
      await page.goto(`${web.base}/modules/pond-life-through-the-seasons`);
      await clickByText(page, "Give a point");
      assert.match(await mainText(page), /1 point, one of them yours/);
      await clickByText(page, "Withdraw my point");
      assert.match(await mainText(page), /0 points/);
      assertNoProblems(page);
    });

    await t.step("request form: errors beside the fields, then sent", async () => {
      await page.goto(`${web.base}/`);
      await clickByText(page, "Request a module");
      await assertGoodPage(page);
      await fillByLabel(page, "Your name", "Vi");
      // Signed in, the address is filled in: emptied, it is missed beside its field.
      await fillByLabel(page, "E-mail address", "");
      await clickByText(page, "Send the request");
      assert.notEqual(await fieldError(page, "E-mail address"), "");
      assert.notEqual(await fieldError(page, "Your message"), "");
      await assertGoodPage(page);
      await fillByLabel(page, "Your name", "Visitor Example");
      await fillByLabel(page, "E-mail address", "visitor@example.com");
      await fillByLabel(page, "Your message", "A module about school gardens, please.");
      await clickByText(page, "Send the request");
      assert.equal(await heading(page), "Thank you");
    });

    await t.step("proposal form, confirmation mail, status page", async () => {
      const other = await web.page();
      await other.goto(`${web.base}/contribute`);
      await assertGoodPage(other);
      await fillByLabel(other, "Your name (shown with the module)", "Pat Proposer");
      await fillByLabel(other, "E-mail address", "pat@example.com");
      await fillByLabel(other, "Title of the module", "Bees in the school garden");
      await selectByLabel(other, "Area", "nature based");
      await fillByLabel(other, "Summary", "Counting bees through a spring term.");
      await selectByLabel(other, "Licence", "CC BY 4.0: name the author");
      await fillByLabel(other, "File 1: label", "Worksheet");
      await fillByLabel(other, "File 1: link", "http://insecure.example/w.pdf");
      await clickByText(other, "Send the proposal");
      assert.match(await fieldError(other, "File 1: link"), /https/);
      await fillByLabel(other, "File 1: link", "https://files.example/w.pdf");
      await clickByText(other, "Send the proposal");
      assert.equal(await heading(other), "Proposal received");
      await clickByText(other, "Its status page");
      assert.match(await heading(other), /: received$/);
      await assertGoodPage(other);
      const link = await web.mailedLink("pat@example.com", "/contribute/");
      assert.ok(link, "the mail links a page");
    });

    await t.step("API reference: Swagger UI from our own origin", async () => {
      // Swagger UI renders its operations a few at a time: on a loaded machine the first
      // ones show well before the last, so the count is waited for, not the first block.
      await page.goto(`${web.base}/api-reference`, { waitUntil: "load", timeout: 60_000 });
      const shown = await page.waitForFunction(
        'document.querySelectorAll(".opblock").length > 20',
        { timeout: 60_000 },
      ).then(() => true, () => false);
      const ops = await page.$$eval(".opblock", (o) => o.length);
      assert.ok(shown, `${ops} operations shown`);
      assertNoProblems(page);
    });
  },
});
