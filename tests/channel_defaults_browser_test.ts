/**
 * Which services a channel alerts, in a real browser, found by visible labels (issue 44): a
 * service watched before any channel; a webhook channel added later ("Use for new services" and
 * "Also alert my 1 existing service" offered, ticked); applied to all from the channels page,
 * which says how many services use it; the next service's add form ticks it; a service with its
 * alerts off is flagged on the dashboard. Axe clean at 1280 and 375 px (assertGoodAtBoth).
 */
import assert from "node:assert/strict";
import { grantRole } from "../kv/accounts/roles.ts";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  fillByLabel,
  heading,
  mainText,
  openUrl,
  type Page,
  revisit,
  startWeb,
} from "./_browser.ts";

/** Whether the checkbox labelled `label` is ticked. */
const ticked = (page: Page, label: string) =>
  page.evaluate((wanted: string) => {
    // deno-lint-ignore no-explicit-any
    const doc = (globalThis as any).document;
    // deno-lint-ignore no-explicit-any
    const l = [...doc.querySelectorAll("label")].find((l: any) => l.innerText.trim() === wanted);
    return l?.control ? Boolean(l.control.checked) : null;
  }, label);

/** The text of the channels table's row of `name`. */
const rowText = (page: Page, name: string) =>
  page.evaluate((name: string) => {
    // deno-lint-ignore no-explicit-any
    const rows = [...(globalThis as any).document.querySelectorAll("tbody tr")];
    // deno-lint-ignore no-explicit-any
    const row = rows.find((r: any) => r.querySelector("td")?.innerText.includes(name));
    return row ? (row.innerText as string).replace(/\s+/g, " ") : "";
  }, name);

/**
 * The kind's page is only the way in here: tests/service_page_browser_test.ts checks it, the same
 * markup, at both widths.
 */
async function addHeartbeat(page: Page, base: string, name: string, fill?: () => Promise<void>) {
  await revisit(page, `${base}/me/services/new`, "Add a service");
  await checkByLabel(page, "Heartbeat: it calls us (webhook)");
  await clickByText(page, "Next");
  await fillByLabel(page, "Name", name);
  await fill?.();
  await clickByText(page, "Add service");
  assert.equal(await heading(page), `Added ${name}`);
}

Deno.test({
  name:
    "browser: a channel added later, applied to all, ticked on the next service's form; a service nobody hears flagged",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    await web.signIn(page, "kim@example.com");
    // The channel's address is on 127.0.0.1, a private address only the owner may send to.
    const kv = await Deno.openKv(web.server.kvPath);
    try {
      await grantRole(kv, "kim@example.com", "owner", Date.now());
    } finally {
      kv.close();
    }

    await t.step("before any channel: the form says alerts go by mail", async () => {
      await revisit(page, `${web.base}/me/services/new`, "Add a service");
      await checkByLabel(page, "Heartbeat: it calls us (webhook)");
      await clickByText(page, "Next");
      assert.match(await mainText(page), /Alerts go by mail\. Add an alert channel/);
      await addHeartbeat(page, web.base, "Nightly backup");
    });

    await t.step(
      "a channel added later offers new and existing services, both ticked",
      async () => {
        await openUrl(page, `${web.base}/me/channels`, "Alert channels");
        await clickByText(page, "Webhook");
        assert.equal(await heading(page), "Add a Webhook channel");
        assert.equal(await ticked(page, "Use for new services"), true);
        assert.equal(await ticked(page, "Also alert my 1 existing service"), true);
        await assertGoodAtBoth(page);
        await fillByLabel(page, "Channel name", "Team hook");
        await fillByLabel(page, "Webhook address", "https://127.0.0.1:9/alerts");
        // Left for the button on the channels page.
        await checkByLabel(page, "Also alert my 1 existing service", false);
        await clickByText(page, "Add Webhook channel");
        assert.equal(await heading(page), "Alert channels");
        assert.match(await mainText(page), /Channel Team hook added\./);
        const row = await rowText(page, "Team hook");
        assert.match(row, /⚠️ None of 1/);
        assert.match(row, /✓ Ticked for new services/);
        await assertGoodAtBoth(page);
      },
    );

    await t.step("apply to all my services: the count says all", async () => {
      await clickByText(page, "Apply to all my services: Team hook");
      assert.match(await mainText(page), /Team hook now alerts 1 service \(added to 1\)\./);
      assert.match(await rowText(page, "Team hook"), /All of 1/);
      await page.reload();
      assert.match(await rowText(page, "Team hook"), /All of 1/);
      await assertGoodAtBoth(page);
    });

    await t.step(
      "the next service's form ticks the channel; its page shows it chosen",
      async () => {
        await addHeartbeat(page, web.base, "Weekly export", async () => {
          assert.equal(await ticked(page, "Team hook (Webhook)"), true);
          await assertGoodAtBoth(page);
        });
        await clickByText(page, "Go to the service");
        await clickByText(page, "Edit settings", { navigates: false });
        assert.equal(await ticked(page, "Team hook"), true);
        await openUrl(page, `${web.base}/me/channels`, "Alert channels");
        assert.match(await rowText(page, "Team hook"), /All of 2/);
      },
    );

    await t.step("unticked for new services: the next form leaves it out", async () => {
      await clickByText(page, "Stop using for new services: Team hook");
      assert.match(await rowText(page, "Team hook"), /Not ticked for new services/);
      await addHeartbeat(page, web.base, "Scratch job", async () => {
        assert.equal(await ticked(page, "Team hook (Webhook)"), false);
        await checkByLabel(page, "Alert me when it goes off and comes back", false);
      });
      await openUrl(page, `${web.base}/me/channels`, "Alert channels");
      assert.match(await rowText(page, "Team hook"), /2 of 3/);
    });

    await t.step("the dashboard flags the service nobody hears about", async () => {
      await openUrl(page, `${web.base}/watch`, "Watching");
      const flagged = await page.evaluate(() =>
        // deno-lint-ignore no-explicit-any
        [...(globalThis as any).document.querySelectorAll(".watchlist tbody tr")]
          // deno-lint-ignore no-explicit-any
          .filter((li: any) => li.innerText.includes("Nobody is told when this goes off"))
          // deno-lint-ignore no-explicit-any
          .map((li: any) => li.querySelector(".c-name").innerText.trim())
      );
      assert.deepEqual(flagged, ["Scratch job"]);
      await assertGoodAtBoth(page);
    });
  },
});
