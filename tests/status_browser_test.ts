/**
 * A status page in a real browser: the owner publishes it and posts incident notes; a visitor
 * follows it by mail (the confirmation page's button), gets a note and unfollows from the
 * mail; the owner sets a heartbeat's run options and pauses it. Every page is checked with axe
 * at 1280 px and 375 px and for sideways scrolling at 375 px (assertGoodAtBoth).
 */
import assert from "node:assert/strict";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  byText,
  checkByLabel,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  openUrl,
  revisit,
  selectByLabel,
  startWeb,
} from "./_browser.ts";

const FAN = "fan@example.net";

Deno.test({
  name: "browser: a status page with incident notes, followed and unfollowed by mail",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const owner = await web.page();
    owner.on("dialog", (d) => void d.accept());
    await owner.setViewport({ width: 1280, height: 900 });
    await web.signIn(owner, "rita@example.com");
    let slug = "";

    await t.step("owner: a service on a published page, an incident note", async () => {
      // The profile form, empty, is tests/web_me_browser_test.ts's to check.
      await revisit(owner, `${web.base}/me/profile`, "Profile");
      await fillByLabel(owner, "Name", "Rita Ops");
      await clickByText(owner, "Save profile");
      await openUrl(owner, `${web.base}/me/services/new?kind=webhook`, "Add a service");
      await fillByLabel(owner, "Name", "Library printer");
      await selectByLabel(owner, "Expected every", "hour");
      await clickByText(owner, "Add service");
      await openUrl(owner, `${web.base}/me/status-page`, "Status page");
      await checkByLabel(owner, "Publish the status page");
      await fillByLabel(owner, "Title", "Riverside school");
      await checkByLabel(owner, "Library printer");
      await clickByText(owner, "Save status page");
      assert.match(await mainText(owner), /Saved\./);
      assert.match(await mainText(owner), /0 people follow this page/);
      slug =
        (await owner.$eval("main a[href^='/status/']", (a: { getAttribute(n: string): string }) =>
          a.getAttribute("href"))).split("/").pop()!;

      // An empty note: the message beside its field.
      await clickByText(owner, "Post note");
      assert.notEqual(await fieldError(owner, "Note text"), "");
      await assertGoodAtBoth(owner);
      await selectByLabel(owner, "Kind of note", "Investigating");
      await fillByLabel(owner, "Note text", "The printer server is not answering.");
      await clickByText(owner, "Post note");
      assert.match(await mainText(owner), /Note posted\./);
      assert.match(await mainText(owner), /The printer server is not answering\./);
      await assertGoodAtBoth(owner);
    });

    await t.step("owner: maintenance windows, on a schedule and one running now", async () => {
      await openUrl(owner, `${web.base}/me/services`, "Watched services");
      await clickByText(owner, "Maintenance windows");
      assert.equal(await heading(owner), "Maintenance windows");
      await assertGoodAtBoth(owner);
      // Nothing chosen: said beside the services.
      await fillByLabel(owner, "Name of the window", "Sunday updates");
      await selectByLabel(owner, "When it runs", "On a schedule");
      await fillByLabel(owner, "Schedule (cron)", "0 2 * * 0");
      await fillByLabel(owner, "Length of each run (minutes)", "90");
      await clickByText(owner, "Plan a window");
      assert.match(await mainText(owner), /choose the services, a group or a place/i);
      await assertGoodAtBoth(owner);
      await checkByLabel(owner, "Library printer");
      await fillByLabel(owner, "Length of each run (minutes)", "90");
      await clickByText(owner, "Plan a window");
      assert.match(await mainText(owner), /On the schedule 0 2 \* \* 0 \(UTC\), 90 minutes each\./);
      // One running now, in UTC: from an hour ago to an hour ahead (times set as a picker would).
      const local = (t: number) => new Date(t).toISOString().slice(0, 16);
      await fillByLabel(owner, "Name of the window", "Printer swap");
      await checkByLabel(owner, "Library printer");
      await owner.$eval("#f-from", (el: { value: string }, v: string) => {
        el.value = v;
      }, local(Date.now() - 3_600_000));
      await owner.$eval("#f-to", (el: { value: string }, v: string) => {
        el.value = v;
      }, local(Date.now() + 3_600_000));
      await clickByText(owner, "Plan a window");
      assert.match(await mainText(owner), /Running now, until/);
      await assertGoodAtBoth(owner);
    });

    const visitor = await web.page();
    await visitor.setViewport({ width: 1280, height: 900 });

    await t.step("visitor: the timeline, the follow form, the confirmation button", async () => {
      await openUrl(visitor, `${web.base}/status/${slug}`, "Riverside school");
      const text = await mainText(visitor);
      assert.match(text, /Under maintenance/);
      assert.match(text, /Announcements/);
      assert.doesNotMatch(text, /Latest notes|\bNotes\b/);
      assert.match(text, /Investigating/);
      assert.match(text, /The printer server is not answering\./);
      await fillByLabel(visitor, "Your e-mail address", "not an address");
      await clickByText(visitor, "Follow this page");
      assert.notEqual(await fieldError(visitor, "Your e-mail address"), "");
      await assertGoodAtBoth(visitor);
      await fillByLabel(visitor, "Your e-mail address", FAN);
      await clickByText(visitor, "Follow this page");
      assert.match(await mainText(visitor), /confirmation link is on its way/);
      await assertGoodAtBoth(visitor);

      const link = new URL(await web.mailedLink(FAN, "/confirm?token="));
      await openUrl(visitor, `${web.base}${link.pathname}${link.search}`, "Confirm following");
      await assertGoodAtBoth(visitor);
      await clickByText(visitor, "Confirm following");
      assert.equal(await heading(visitor), "Riverside school");
      assert.match(await mainText(visitor), /You follow this page now/);
      await assertGoodAtBoth(visitor);
    });

    await t.step("owner: sees one follower, posts a note that is mailed", async () => {
      await openUrl(owner, `${web.base}/me/status-page`, "Status page");
      assert.match(await mainText(owner), /1 person follows this page/);
      assert.doesNotMatch(await mainText(owner), /fan@/);
      await selectByLabel(owner, "Kind of note", "Resolved");
      await fillByLabel(owner, "Note text", "The printer server is back.");
      await clickByText(owner, "Post note");
      assert.match(await mainText(owner), /Note posted\./);
    });

    await t.step("visitor: unfollows from the mail's link", async () => {
      const link = new URL(await web.mailedLink(FAN, "/unfollow?token="));
      await openUrl(visitor, `${web.base}${link.pathname}${link.search}`, "Stop following");
      await assertGoodAtBoth(visitor);
      await clickByText(visitor, "Stop following");
      assert.equal(await heading(visitor), "You no longer follow this page");
      await assertGoodAtBoth(visitor);
      // The page with its notes, as checked when it had one follower.
      await revisit(owner, `${web.base}/me/status-page`, "Status page");
      assert.match(await mainText(owner), /0 people follow this page/);
      // The owner deletes the older note (listed second); the public page keeps the other.
      const buttons = await owner.$$("form[action$='/delete'] button");
      assert.equal(buttons.length, 2);
      await Promise.all([owner.waitForNavigation({ waitUntil: "load" }), buttons[1].click()]);
      // Its notes and maintenance, as checked on the first visit and again once paused.
      await revisit(visitor, `${web.base}/status/${slug}`, "Riverside school");
      const text = await mainText(visitor);
      assert.match(text, /The printer server is back\./);
      assert.doesNotMatch(text, /not answering/);
    });

    await t.step("owner: a heartbeat's run options and its pause (issue 24, part 6)", async () => {
      await openUrl(owner, `${web.base}/me/services`, "Watched services");
      await clickByText(owner, "Library printer");
      await clickByText(owner, "Edit settings", { navigates: false });
      await selectByLabel(owner, "Failed checks or runs before an alert", "3");
      await clickByText(owner, "Heartbeat runs (optional)", { navigates: false });
      // Longer than the hour a run may take: the message beside the field, nothing stored.
      await fillByLabel(owner, "Shortest run (seconds)", "5000");
      await clickByText(owner, "Save changes");
      assert.match(
        await fieldError(owner, "Shortest run (seconds)"),
        /shorter than the 60 minutes a run may take/,
      );
      await assertGoodAtBoth(owner);
      await fillByLabel(owner, "Shortest run (seconds)", "300");
      await clickByText(owner, "Save changes");
      assert.match(
        await mainText(owner),
        /Alerts after 3 failed or missing runs in a row; in a row now: 0\. A run shorter than 5 minutes counts as failed\./,
      );
      await clickByText(owner, "Pause heartbeat");
      assert.match(await mainText(owner), /Paused/);
      assert.match(await mainText(owner), /paused since/);
      await byText(owner, "Resume heartbeat");
      await assertGoodAtBoth(owner);
      await openUrl(visitor, `${web.base}/status/${slug}`, "Riverside school");
      assert.match(await mainText(visitor), /Library printer\s*Paused/);
      await assertGoodAtBoth(visitor);
      await clickByText(owner, "Resume heartbeat");
      await byText(owner, "Pause heartbeat");
    });
  },
});
