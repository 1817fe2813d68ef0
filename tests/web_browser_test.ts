/**
 * The foundation in a real browser: sign in from the mailed link, the account page, sign
 * out; form errors shown beside their field; every page accessible, within the CSP, and
 * without sideways scrolling on a phone.
 */
import assert from "node:assert/strict";
import {
  assertAccessible,
  assertGoodPage,
  BROWSER_TEST,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  openByText,
  openUrl,
  startWeb,
} from "./_browser.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

Deno.test({
  name: "browser: sign in from the mailed link, see the account, sign out",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();

    await t.step("home page", async () => {
      await openUrl(page, `${web.base}/`, "Community catalogue");
    });

    await t.step("sign-in form shows errors beside the fields", async () => {
      await openByText(page, "Sign in", "Sign in");
      await fillByLabel(page, "E-mail address", "not an address");
      await clickByText(page, "Mail me a sign-in link");
      assert.notEqual(await fieldError(page, "E-mail address"), "");
      // Asked once per account: on this form it may stay empty (the link's page asks then).
      assert.equal(await fieldError(page, "I am old enough to have an account here"), "");
      assert.match(await mainText(page), /Please check the form/);
      await assertGoodPage(page);
    });

    await t.step("the mailed link signs in only with the button", async () => {
      const link = await web.requestLink(page, "reader@example.com");
      // Opened once as a scanner would (no button press): still usable afterwards.
      const scanned = await fetch(link);
      assert.equal(scanned.status, 200);
      await scanned.body?.cancel();
      await page.goto(link);
      assert.match(await mainText(page), /reader@example\.com/);
      await assertGoodPage(page);
      await clickByText(page, "Sign in on this device");
      assert.equal(await heading(page), "Your account");
      assert.match(await mainText(page), /reader@example\.com/);
      await assertGoodPage(page);
      const cookies = await page.browserContext().cookies();
      const session = cookies.find((c) => c.name === "session")!;
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, "Lax");
    });

    await t.step("the header knows; sign out ends the session", async () => {
      await page.goto(`${web.base}/`);
      await clickByText(page, "Account");
      assert.equal(await heading(page), "Your account");
      await clickByText(page, "Sign out");
      assert.equal(new URL(page.url()).pathname, "/");
      await page.goto(`${web.base}/me`);
      assert.equal(new URL(page.url()).pathname, "/sign-in");
    });

    await t.step("signIn helper and the not-found page", async () => {
      const other = await web.page();
      await web.signIn(other, "second@example.com");
      await other.goto(`${web.base}/no/such/page`);
      assert.equal(await heading(other), "Page not found");
      await assertGoodPage(other);
    });

    await t.step("the page checks fail on a page that breaks them", async () => {
      // A state found clean is not checked twice; a changed one is checked again.
      await page.goto(`${web.base}/sign-in`);
      await assertAccessible(page);
      await page.evaluate(() => {
        const document: Dom = (globalThis as Dom).document;
        document.querySelector("main").insertAdjacentHTML("beforeend", "<button></button>");
      });
      await assert.rejects(() => assertAccessible(page), /button-name/);
      await page.goto(`${web.base}/sign-in`);
      await page.evaluate(() => {
        const document: Dom = (globalThis as Dom).document;
        const faint = document.createElement("p");
        faint.textContent = "Faint words";
        // Set through the DOM: the page's CSP refuses style attributes in markup.
        faint.style.color = "#eee";
        faint.style.background = "#fff";
        document.querySelector("main").append(faint);
      });
      await assert.rejects(() => assertAccessible(page), /color-contrast/);
      // Found clean in the light, the same markup is checked again in the dark, for its colours.
      await page.goto(`${web.base}/sign-in`);
      await assertAccessible(page);
      await page.evaluate(() => {
        const g: Dom = globalThis;
        // A constructed sheet: the markup stays as it was, only the dark colours change.
        const sheet = new g.CSSStyleSheet();
        sheet.replaceSync("@media (prefers-color-scheme: dark) { main p { color: #222 } }");
        g.document.adoptedStyleSheets = [sheet];
      });
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      try {
        await assert.rejects(() => assertAccessible(page), /color-contrast/);
      } finally {
        await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
      }
    });
  },
});
