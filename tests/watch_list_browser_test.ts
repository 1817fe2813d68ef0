/**
 * The dashboard's dense list in a real browser, with 20 services: how many rows a window
 * shows at 1280×800 and 375×812, one line a row on a desk, problems first and then by name
 * (a failure moves its service to the top), sorting by a column link, search by tag, tag chips
 * that filter, a dash (with its reason) for a figure that does not exist yet, the page under
 * 20 KB compressed, axe clean in light and dark; the times the server wrote read the same once
 * the browser writes them in its own words, so nothing moves after the first paint.
 */
import assert from "node:assert/strict";
import {
  assertAccessible,
  assertFitsPhone,
  assertGoodAtBoth,
  BROWSER_TEST,
  clickByText,
  fillByLabel,
  heading,
  mainText,
  type Page,
  startWeb,
} from "./_browser.ts";
import { bearerApi, signInByMail } from "./_real_server.ts";
import { agoText } from "../lib/display.ts";
import { nextDueAfter } from "../lib/schedule.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

/** The names of the listed services, in order. */
const names = (page: Page) =>
  page.$$eval(
    ".watchlist tbody tr",
    (rows: Dom[]) => rows.map((r) => r.querySelector(".c-name").innerText.trim() as string),
  );

/** Rows wholly inside the window, the page scrolled to its top. */
const rowsInWindow = (page: Page) =>
  page.evaluate(() => {
    const w = globalThis as Dom;
    w.scrollTo(0, 0);
    return [...w.document.querySelectorAll(".watchlist tbody tr")]
      .filter((r: Dom) => r.getBoundingClientRect().bottom <= w.innerHeight).length as number;
  });

/**
 * Opens `url` and answers the relative times as the server wrote them and as the page shows
 * them once web/static/site.js wrote them again, and the layout shift since the load. The
 * browser's clock runs 40 s ahead of the server's, as if the page took that long to arrive: the
 * first rewrite counts from the moment the server wrote the words, not from the browser's now.
 */
async function timesAndShift(page: Page, url: string) {
  const { identifier } = await page.evaluateOnNewDocument(() => {
    const w = globalThis as Dom;
    const realNow = Date.now;
    Date.now = () => realNow() + 40_000;
    w.shifted = 0;
    w.shifts = new w.PerformanceObserver((list: Dom) => {
      for (const e of list.getEntries()) if (!e.hadRecentInput) w.shifted += e.value;
    });
    w.shifts.observe({ type: "layout-shift", buffered: true });
  });
  const res = await page.goto(url);
  await page.removeScriptToEvaluateOnNewDocument(identifier);
  const served = [
    ...(await res!.text()).matchAll(/<time [^>]*data-ago="\d+"[^>]*>([^<]*)<\/time>/g),
  ]
    .map((m) => m[1]);
  // Two frames after the load: the page is drawn after site.js ran, and a shift its words made
  // recorded; the records not yet handed to the observer are taken too.
  const shifted = await page.evaluate(() =>
    new Promise<number>((resolve) => {
      const w = globalThis as Dom;
      w.requestAnimationFrame(() =>
        w.requestAnimationFrame(() => {
          for (const e of w.shifts.takeRecords()) if (!e.hadRecentInput) w.shifted += e.value;
          resolve(w.shifted);
        })
      );
    })
  );
  const shown = await page.$$eval(
    "time[data-ago]",
    (ts: Dom[]) => ts.map((t) => t.textContent as string),
  );
  return { served, shown, shifted };
}

/** The second service's schedule: a nightly job at 03:00 in Berlin. */
const NIGHTLY = { cron: "0 3 * * *", tz: "Europe/Berlin" };

/**
 * The words for the nightly job's next run, as the page says them now or said them 30 s ago:
 * "in 5 hours" at midnight, "in 1 day" just after three, whenever the suite runs.
 */
const nightlyNext = () =>
  [Date.now() - 30_000, Date.now()].map((now) => agoText(nextDueAfter(NIGHTLY, now)!, now));

/** The tallest row's height (px). */
const tallestRow = (page: Page) =>
  page.$$eval(
    ".watchlist tbody tr",
    (rows: Dom[]) => Math.max(...rows.map((r) => r.getBoundingClientRect().height)),
  );

const SERVICES: [name: string, tags: string[]][] = [
  ["Accounts API", ["prod", "billing"]],
  ["Backup to NAS", ["nightly"]],
  ["Billing export", ["prod", "billing"]],
  ["Cache warmer", []],
  ["Certificates renewal", ["monthly"]],
  ["DNS zone push", ["prod"]],
  ["Email digest", []],
  ["Feed importer", ["staging"]],
  ["Git mirror", []],
  ["Hourly report", ["reports"]],
  ["Image thumbnails", []],
  ["Invoice mailer", ["billing"]],
  ["Log rotation", []],
  ["Metrics rollup", ["reports"]],
  ["Newsletter", []],
  ["Orders sync", ["prod"]],
  ["Payroll run", ["billing"]],
  ["Queue drain", []],
  ["Search reindex", ["staging"]],
  ["Zone backup", []],
];

Deno.test({
  name: "browser: the dashboard's list: 20 services, rows per window, order, tag search",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    await web.signIn(page, "dana@example.com");
    const api = bearerApi(web.base, await signInByMail(web.base, web.sink, "dana@example.com"));
    const hooks = new Map<string, string>();
    for (const [i, [name, tags]] of SERVICES.entries()) {
      const made = await api("POST", "/api/me/services", {
        name,
        check: "webhook:",
        group: i % 2 ? "Jobs" : "Public",
        tags,
        ...(i === 1 ? { schedule: NIGHTLY.cron, tz: NIGHTLY.tz, grace: 30 } : {}),
      });
      hooks.set(name, `${web.base}${new URL(made.hook_url).pathname}`);
    }
    // Every one has run once, but the last (a new service, no figures yet).
    for (const [name, url] of hooks) {
      if (name === "Zone backup") continue;
      const r = await fetch(url, { method: "POST" });
      await r.body?.cancel();
    }

    await t.step("1280×800: at least 15 rows in the window, each one line", async () => {
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`${web.base}/watch`);
      assert.equal(await heading(page), "Watching");
      assert.deepEqual(await names(page), SERVICES.map(([n]) => n), "by name when all are fine");
      const shown = await rowsInWindow(page);
      assert.ok(shown >= 15, `${shown} rows in 1280×800`);
      const tallest = await tallestRow(page);
      assert.ok(tallest < 36, `one line a row (the tallest is ${tallest} px)`);
      // The columns a watcher looks for, in the row.
      const row = await page.$eval(
        ".watchlist tbody tr:nth-child(2)",
        (r: Dom) => r.innerText as string,
      );
      assert.match(row, /Backup to NAS/);
      assert.match(row, /nightly/);
      assert.match(row, /heartbeat/);
      assert.match(row, /every day at 03:00 Europe\/Berlin/);
      assert.match(row, /just now/);
      assert.ok(nightlyNext().some((words) => row.includes(`\t${words}\t`)), row);
      // A service with no figures yet: dashes, each with its reason; the words not repeated.
      const fresh = await page.$eval(
        ".watchlist tbody tr:last-child",
        (r: Dom) => ({
          text: r.innerText as string,
          why: [...r.querySelectorAll(".none")].map((n: Dom) => n.getAttribute("title")),
        }),
      );
      assert.match(fresh.text, /Zone backup/);
      assert.ok(fresh.why.length >= 2, "its missing figures are dashes");
      assert.ok(fresh.why.every((w: string) => w.length > 10), "each with its reason");
      assert.doesNotMatch(fresh.text, /not measured yet/);
      await assertGoodAtBoth(page);
    });

    await t.step("375×812: at least 6 rows, nothing sideways; the rest in details", async () => {
      await page.setViewport({ width: 1280, height: 800 });
      await page.setViewport({ width: 375, height: 812 });
      await page.goto(`${web.base}/watch`);
      const shown = await rowsInWindow(page);
      assert.ok(shown >= 6, `${shown} rows in 375×812`);
      await assertFitsPhone(page);
      // The dropped columns are in the row's details.
      await page.$eval(
        ".watchlist tbody tr:nth-child(2) details",
        (d: Dom) => (d.open = true),
      );
      const more = await page.$eval(
        ".watchlist tbody tr:nth-child(2) details",
        (d: Dom) => d.innerText as string,
      );
      assert.match(more, /every day at 03:00 Europe\/Berlin/);
      assert.match(more, /nightly/);
      assert.ok(
        await page.$(".watchlist tbody tr:nth-child(2) details [aria-label=Mail]"),
        "its alerts' icons",
      );
      await page.setViewport({ width: 1280, height: 800 });
    });

    await t.step("a failure moves its service to the top; a column sorts", async () => {
      await page.setViewport({ width: 1280, height: 800 });
      const r = await fetch(`${hooks.get("Payroll run")}/fail`, { method: "POST" });
      await r.body?.cancel();
      // Down once the look the failure asked for found it off (seconds, through the KV queue).
      const top = () =>
        page.$eval(".watchlist tbody tr:first-child", (r: Dom) => r.innerText as string);
      for (let i = 0; i < 80; i++) {
        await page.goto(`${web.base}/watch`);
        if (/^Down/.test(await top())) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const order = await names(page);
      assert.equal(order[0], "Payroll run");
      assert.deepEqual(order.slice(1), SERVICES.map(([n]) => n).filter((n) => n !== "Payroll run"));
      assert.match(await top(), /^Down/);
      await clickByText(page, "Last");
      assert.equal(new URL(page.url()).searchParams.get("sort"), "last");
      assert.equal((await names(page)).at(-1), "Zone backup", "never heard of: last");
      await clickByText(page, "State");
      assert.equal((await names(page))[0], "Payroll run");
    });

    await t.step("search finds tags; a tag chip filters", async () => {
      await fillByLabel(page, "Search services", "prod");
      await clickByText(page, "Show");
      assert.deepEqual(await names(page), [
        "Accounts API",
        "Billing export",
        "DNS zone push",
        "Orders sync",
      ]);
      assert.match(await mainText(page), /4 of 20 services match\./);
      await page.goto(`${web.base}/watch`);
      await clickByText(page, "billing");
      assert.equal(new URL(page.url()).searchParams.get("tag"), "billing");
      assert.deepEqual(await names(page), [
        "Payroll run",
        "Accounts API",
        "Billing export",
        "Invoice mailer",
      ]);
      await clickByText(page, "Show every tag");
      assert.equal((await names(page)).length, 20);
    });

    await t.step("a service's page: is it fine, and when is it next due", async () => {
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`${web.base}/watch`);
      await clickByText(page, "Backup to NAS");
      assert.equal(await heading(page), "Backup to NAS");
      const facts = await page.$$eval(
        ".top-facts > div",
        (ds: Dom[]) =>
          Object.fromEntries(ds.map((d) => [
            d.querySelector("dt").innerText.trim(),
            d.querySelector("dd").innerText.trim(),
          ])),
      );
      assert.match(facts["State"], /^Up since (just now|\d+ seconds? ago)$/);
      assert.equal(facts["Expected"], "every day at 03:00 Europe/Berlin, 30 minutes' grace");
      assert.match(facts["Last ping"], /^(just now|\d+ seconds? ago)$/);
      assert.ok(nightlyNext().includes(facts["Next expected"]), facts["Next expected"]);
      assert.match(facts["Alerts"], /mail/);
      // The one address to ping, with the lines for success, start, failure and exit code.
      const ping = await page.$eval("#ping-url", (e: Dom) => e.value as string);
      assert.match(ping, /\/ping\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      await clickByText(page, "Lines for your job", { navigates: false });
      const lines = await page.$$eval(
        ".ping input[id^=signal-]",
        (es: Dom[]) => es.map((e) => e.value as string),
      );
      assert.deepEqual(lines.map((l: string) => l.includes(ping)), [true, true, true, true]);
      assert.match(lines.join("\n"), /\/start\?rid=/);
      assert.match(lines.join("\n"), /\/fail"/);
      assert.match(lines.join("\n"), /\/\$\?"/);
      // The pinged address answers for this service.
      const r = await fetch(`${web.base}${new URL(ping).pathname}`, { method: "POST" });
      assert.equal(r.status, 200);
      await r.body?.cancel();
      // The settings wait behind their button.
      const nameShown = () => page.$eval("#f-name", (e: Dom) => e.checkVisibility() as boolean);
      assert.equal(await nameShown(), false);
      await clickByText(page, "Edit settings", { navigates: false });
      assert.equal(await nameShown(), true);
      await assertGoodAtBoth(page);
    });

    await t.step(
      "the times read as the server wrote them: nothing shifts after the paint",
      async () => {
        // Pinged a minute ago, every hour (the API's default): next "in 1 hour", 59 minutes on.
        await page.setViewport({ width: 412, height: 823 });
        const id = (await api("GET", "/api/me/services")).items
          .find((s: { name: string }) => s.name === "Accounts API").id;
        for (const url of [`${web.base}/me/services/${id}`, `${web.base}/watch`]) {
          const { served, shown, shifted } = await timesAndShift(page, url);
          assert.ok(served.length > 3, url);
          assert.deepEqual(shown, served, url);
          assert.ok(shifted < 0.01, `${url}: layout shift ${shifted}`);
        }
        assert.ok(
          (await timesAndShift(page, `${web.base}/me/services/${id}`)).served.includes("in 1 hour"),
        );
      },
    );

    await t.step("under 20 KB compressed; axe clean in dark", async () => {
      const cookies = await page.cookies();
      const cookie = cookies.map((c: { name: string; value: string }) => `${c.name}=${c.value}`)
        .join("; ");
      const res = await fetch(`${web.base}/watch`, { headers: { cookie } });
      const html = await res.text();
      assert.match(html, /Payroll run/);
      const gz = await new Response(
        new Blob([html]).stream().pipeThrough(new CompressionStream("gzip")),
      ).arrayBuffer();
      assert.ok(gz.byteLength < 20_000, `${gz.byteLength} bytes gzipped`);
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      await assertAccessible(page);
      await page.setViewport({ width: 375, height: 812 });
      await assertAccessible(page);
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    });
  },
});
