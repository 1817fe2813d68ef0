/**
 * The watcher's dashboard in a real browser: reached from the top menu, states in colour, icon
 * and word, down first, beat bars that name each result, filters and search (a GET form: no
 * script needed), a state change shown without a reload (live.js), dark mode and a phone.
 */
import assert from "node:assert/strict";
import {
  assertAccessible,
  assertFitsPhone,
  assertGoodAtBoth,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  fillByLabel,
  heading,
  mainText,
  type Page,
  selectByLabel,
  startWeb,
} from "./_browser.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

/** Adds a heartbeat through the form; returns its hook address at the server under test. */
async function addHeartbeat(page: Page, base: string, name: string, group: string) {
  await page.goto(`${base}/me/services/new?kind=webhook`);
  await fillByLabel(page, "Name", name);
  await selectByLabel(page, "Group", group);
  await clickByText(page, "Add service");
  const hook = new URL(await page.$eval("#hook-url", (e: Dom) => e.value as string));
  return `${base}${hook.pathname}`;
}

const ping = async (url: string) => {
  const res = await fetch(url, { method: "POST" });
  await res.body?.cancel();
  assert.equal(res.status, 200);
};

/** The names of the services the dashboard lists. */
const names = (page: Page) =>
  page.$$eval(".watchlist .c-name", (els: Dom[]) => els.slice(1).map((e) => e.innerText.trim()));

/** The state word of a service's row. */
const stateOf = (page: Page, name: string) =>
  page.$$eval(".watchlist tbody tr", (rows: Dom[], wanted: string) => {
    const row = rows.find((r) => r.querySelector(".c-name").innerText.trim() === wanted);
    return row ? row.querySelector(".state").innerText.trim() as string : "";
  }, name);

Deno.test({
  name: "browser: the dashboard's states, beat bars, filters, search, live update, dark mode",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    await page.setViewport({ width: 1280, height: 900 });
    await web.signIn(page, "wanda@example.com");
    const backup = await addHeartbeat(page, web.base, "Nightly backup", "Jobs");
    const printer = await addHeartbeat(page, web.base, "Library printer", "LAN and tailnet");
    await ping(backup);
    await ping(`${printer}/fail`);

    const browserContextPage = async () => {
      const tab = await page.browserContext().newPage();
      await tab.setViewport({ width: 1280, height: 900 });
      return tab;
    };

    await t.step("from the top menu: every service with its state and last runs", async () => {
      await page.goto(`${web.base}/`);
      await clickByText(page, "Watching");
      assert.equal(await heading(page), "Watching");
      assert.equal(await stateOf(page, "Nightly backup"), "Up");
      // Down once the look the failure asked for has its alert on its way (within a second).
      for (let i = 0; i < 20 && await stateOf(page, "Library printer") !== "Down"; i++) {
        await new Promise((r) => setTimeout(r, 250));
        await page.reload();
      }
      assert.equal(await stateOf(page, "Library printer"), "Down");
      assert.deepEqual(await names(page), ["Library printer", "Nightly backup"], "down first");
      // Each bar names its time and result; one tab stop per bar, the newest.
      const bars = await page.$$eval(
        ".watchlist svg.beats rect[aria-label]",
        (els: Dom[]) => els.map((e) => [e.getAttribute("aria-label"), e.getAttribute("tabindex")]),
      );
      assert.equal(bars.length, 2);
      assert.match(bars[0][0], /: failure$/);
      assert.match(bars[1][0], /: success$/);
      assert.deepEqual(bars.map((b: string[]) => b[1]), ["0", "0"]);
      assert.doesNotMatch(await mainText(page), /\d{4}-\d\d-\d\dT/, "no machine stamps");
      assert.match(await mainText(page), /just now|seconds? ago/);
      await assertGoodAtBoth(page);
    });

    await t.step("filter by state, by group, and search", async () => {
      await selectByLabel(page, "State", "Down (1)");
      await clickByText(page, "Show");
      assert.deepEqual(await names(page), ["Library printer"]);
      assert.match(await mainText(page), /1 of 2 services match\./);
      await selectByLabel(page, "State", "All states");
      await selectByLabel(page, "Group", "Jobs");
      await clickByText(page, "Show");
      assert.deepEqual(await names(page), ["Nightly backup"]);
      await selectByLabel(page, "Group", "All groups");
      await fillByLabel(page, "Search services", "printer");
      await clickByText(page, "Show");
      assert.deepEqual(await names(page), ["Library printer"]);
      await fillByLabel(page, "Search services", "nothing like this");
      await clickByText(page, "Show");
      assert.deepEqual(await names(page), []);
      assert.match(await mainText(page), /No service matches\./);
      await assertGoodAtBoth(page);
      await clickByText(page, "Show all services");
      assert.deepEqual(await names(page), ["Library printer", "Nightly backup"]);
    });

    await t.step("a state change shows without a reload", async () => {
      await page.evaluate(() => ((globalThis as Dom).stillHere = true));
      await ping(`${backup}/fail`);
      await page.waitForFunction(
        () => {
          const rows = [...(globalThis as Dom).document.querySelectorAll(".watchlist tbody tr")];
          const row = rows.find((r: Dom) =>
            r.querySelector(".c-name").innerText.trim() === "Nightly backup"
          );
          return row?.querySelector(".state").innerText.trim() === "Down";
        },
        { polling: "mutation", timeout: 20_000 },
      );
      assert.equal(await page.evaluate(() => (globalThis as Dom).stillHere), true, "no reload");
      assert.match(await mainText(page), /2 Down/);
    });

    await t.step("dark mode: dark page, readable states, axe clean", async () => {
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      const bg = await page.evaluate(() =>
        (globalThis as Dom).getComputedStyle((globalThis as Dom).document.body).backgroundColor
      );
      assert.equal(bg, "rgb(19, 19, 22)");
      await assertAccessible(page);
      await page.setViewport({ width: 375, height: 800 });
      await assertAccessible(page);
      await page.setViewport({ width: 1280, height: 900 });
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    });

    await t.step("the public status page: own header, banner, groups, live", async () => {
      // A second tab of the same person.
      const page = await browserContextPage();
      await page.goto(`${web.base}/me/profile`);
      await fillByLabel(page, "Name", "Wanda Ops");
      await clickByText(page, "Save profile");
      await page.goto(`${web.base}/me/status-page`);
      await checkByLabel(page, "Publish the status page");
      await fillByLabel(page, "Title", "Wanda's library");
      await fillByLabel(page, "Link to your own site", "not a link");
      await checkByLabel(page, "Nightly backup");
      await checkByLabel(page, "Library printer");
      await clickByText(page, "Save status page");
      assert.match(
        await mainText(page),
        /Link to your own site: Must be an address starting with https:\/\//,
      );
      // Everything else as typed: only the link needs another go.
      await fillByLabel(page, "Link to your own site", "https://library.example.org/");
      await clickByText(page, "Save status page");
      assert.match(await mainText(page), /Saved\./);
      const path = await page.$eval(
        "main a[href^='/status/']",
        (a: Dom) => a.getAttribute("href") as string,
      );

      const visitor = await web.page();
      await visitor.setViewport({ width: 1280, height: 900 });
      await visitor.goto(`${web.base}${path}`);
      assert.equal(await heading(visitor), "Wanda's library");
      const header = await visitor.$eval("header", (h: Dom) => h.innerText as string);
      assert.match(header, /Wanda's library/);
      assert.match(header, /library\.example\.org/);
      assert.doesNotMatch(header, /Request a module|Catalogue|Sign in/, "no catalogue menu");
      const banner = () => visitor.$eval(".banner", (b: Dom) => b.innerText.trim() as string);
      assert.equal(await banner(), "2 of 2 services are down");
      const groups = await visitor.$$eval("main h2", (hs: Dom[]) => hs.map((h) => h.innerText));
      assert.deepEqual(groups.slice(0, 2), ["LAN and tailnet", "Jobs"]);
      await assertGoodAtBoth(visitor);

      await visitor.evaluate(() => ((globalThis as Dom).stillHere = true));
      await ping(backup);
      await visitor.waitForFunction(
        () =>
          (globalThis as Dom).document.querySelector(".banner")?.innerText.trim() ===
            "1 of 2 services is down",
        { polling: "mutation", timeout: 20_000 },
      );
      assert.equal(await visitor.evaluate(() => (globalThis as Dom).stillHere), true);
      await ping(printer);
      await visitor.waitForFunction(
        () =>
          (globalThis as Dom).document.querySelector(".banner")?.innerText.trim() ===
            "All services are up",
        { polling: "mutation", timeout: 20_000 },
      );
      await visitor.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      await assertAccessible(visitor);
      await assertFitsPhone(visitor);
    });
  },
});
