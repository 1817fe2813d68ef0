/**
 * The corrected first-ten-minutes flows in Chromium, at 1280 px and at 375 px, each page
 * checked with axe (no serious or critical violation), the CSP and the console: signing in
 * with a name, the used link opened again while signed in, reload and Back after adding a
 * heartbeat, a wrong picture, a refused file.
 */
import assert from "node:assert/strict";
import {
  assertGoodPage,
  BROWSER_TEST,
  clickByText,
  expectProblems,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  openByText,
  openUrl,
  revisit,
  startWeb,
  uploadByLabel,
} from "./_browser.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

Deno.test({
  name: "browser: the first ten minutes at 1280 px and 375 px",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const dir = await Deno.makeTempDir();
    try {
      // A text file named like a picture, and a program.
      await Deno.writeTextFile(`${dir}/holiday.png`, "this is not a picture at all");
      await Deno.writeTextFile(`${dir}/setup.exe`, "MZ");
      for (const width of [1280, 375]) {
        const page = await web.page();
        await page.setViewport({ width, height: 900 });
        const email = `nia${width}@example.com`;
        const name = `Nia Okafor ${width}`;

        await t.step(`${width} px: sign in with a name for the new account`, async () => {
          // At 1280 px the empty form is the markup tests/web_browser_test.ts checks.
          await (width === 1280 ? revisit : openUrl)(page, `${web.base}/sign-in`, "Sign in");
          await openUrl(page, await web.requestLink(page, email, name), "Sign in");
          await openByText(page, "Sign in on this device", "Your account");
          assert.match(await mainText(page), new RegExp(name));
        });

        await t.step(`${width} px: the used link again, while signed in`, async () => {
          // Back from the account page is the link's page: it says the browser is signed in.
          await page.goBack();
          assert.equal(await heading(page), "You are signed in");
          assert.match(await mainText(page), new RegExp(email.replace(".", "\\.")));
          await assertGoodPage(page);
          await openByText(page, "Go to your account", "Your account");
        });

        await t.step(`${width} px: reload and Back after adding a heartbeat`, async () => {
          await openUrl(page, `${web.base}/me/services/new?kind=webhook`, "Add a service");
          await fillByLabel(page, "Name", "Nightly backup");
          await openByText(page, "Add service", "Added Nightly backup");
          const hook = await page.$eval("#hook-url", (e: Dom) => e.value as string);
          assert.match(hook, /\/api\/hooks\/[A-Za-z0-9_-]{43}$/);
          await page.reload();
          assert.equal(await page.$eval("#hook-url", (e: Dom) => e.value as string), hook);
          await assertGoodPage(page);
          await page.goBack();
          assert.equal(await heading(page), "Add a service");
          await page.goto(`${web.base}/me/services`);
          assert.equal((await mainText(page)).match(/Nightly backup/g)?.length, 1, "one service");
          await assertGoodPage(page);
        });

        await t.step(`${width} px: a wrong picture, said beside the picture field`, async () => {
          await openUrl(page, `${web.base}/me/profile`, "Profile");
          await uploadByLabel(page, "Picture file", `${dir}/holiday.png`);
          await clickByText(page, "Upload picture");
          assert.equal(await heading(page), "Profile");
          assert.match(
            await fieldError(page, "Picture file"),
            /not a picture this site takes\. Choose a PNG, JPEG or GIF file/,
          );
          await assertGoodPage(page);
        });

        await t.step(`${width} px: a refused file lists the endings; no full bar`, async () => {
          await openUrl(page, `${web.base}/me/files`, "Files");
          await uploadByLabel(page, "File", `${dir}/setup.exe`);
          await clickByText(page, "Upload", { navigates: false });
          await page.waitForFunction(
            () =>
              /Not uploaded/.test(
                (globalThis as Dom).document.querySelector("[data-upload-status]").textContent,
              ),
            { polling: "mutation", timeout: 10_000 },
          );
          const status = await page.$eval(
            "[data-upload-status]",
            (e: Dom) => e.textContent as string,
          );
          assert.match(
            status,
            /Files ending in \.exe are not accepted\. Accepted endings: \.pdf, /,
          );
          assert.equal(await page.$eval("progress", (e: Dom) => e.hidden as boolean), true);
          // The refusal itself is the one console line (the browser logs the upload's 415).
          assert.equal(expectProblems(page, /status of 415/).length, 1);
          await assertGoodPage(page);
        });
        await page.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
