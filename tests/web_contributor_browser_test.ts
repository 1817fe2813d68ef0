/**
 * A contributor's way in a real browser, and the team's side of it: Ann applies for standing and
 * invites someone, sends two proposals and withdraws one; the owner reviews, admits and publishes
 * the other, decides her application (a second reviewer's stale form is told it came too late),
 * sees the accounts and invitations, and edits a module's contributors; Ann, signed in again,
 * exports her data and erases her account keeping her name on the published module. Each page is
 * checked by axe-core, against its CSP and for sideways scrolling at 375 px (assertGoodPage).
 * One browser and one server for all.
 */
import assert from "node:assert/strict";
import { openKv } from "../kv/_atomic.ts";
import { findAccountByEmail } from "../kv/accounts/accounts.ts";
import { grantRole } from "../kv/accounts/roles.ts";
import type { Session } from "../kv/accounts/sessions.ts";
import { MINUTE } from "../lib/clock.ts";
import {
  assertAccessible,
  assertFitsPhone,
  assertGoodPage,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  inputValue,
  mainText,
  openByText,
  openUrl,
  selectByLabel,
  startWeb,
} from "./_browser.ts";

/** Sets the account's sessions back by `ms` in the server's KV file, as time passing would. */
async function ageSessions(kvPath: string, email: string, ms: number) {
  // Through the service's own opener, which waits out the server's lock on the file.
  const kv = await openKv(kvPath);
  try {
    const account = (await findAccountByEmail(kv, email))!.value.id;
    for await (const e of kv.list<Session>({ prefix: ["sessions"] })) {
      if (e.value.account !== account) continue;
      await kv.set(e.key, { ...e.value, created: e.value.created - ms }, {
        expireIn: e.value.expires - Date.now(),
      });
    }
  } finally {
    kv.close();
  }
}

Deno.test({
  name: "browser: a contributor's proposals through the team's review",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    // Confirm dialogs (withdraw, erase) are answered yes, as the person would.
    page.on("dialog", (d) => void d.accept());
    // Her name is what the team's forms call her by ("Decision on Ann Example").
    await web.signIn(page, "ann@example.com", "Ann Example");

    await t.step("standing: apply, invite, list", async () => {
      await openUrl(page, `${web.base}/me/standing`, "Standing and invitations");
      await fillByLabel(page, "Why you apply", "too short");
      await clickByText(page, "Apply for contributor standing");
      assert.notEqual(await fieldError(page, "Why you apply"), "");
      await fillByLabel(page, "Why you apply", "I teach outdoors and would add river modules.");
      await clickByText(page, "Apply for contributor standing");
      assert.match(await mainText(page), /waiting for the team/);
      await fillByLabel(page, "Their address", "newbie@example.com");
      await clickByText(page, "Send invitation");
      assert.match(await mainText(page), /newbie@example\.com\s+\S.*open/);
      await web.mailedLink("newbie@example.com", "/me?verify=");
      await assertGoodPage(page);
    });

    const proposals: number[] = [];
    await t.step("my proposals: send two, attribution, withdraw one", async () => {
      for (const title of ["River walks", "Bridge building"]) {
        await page.goto(`${web.base}/contribute`);
        await fillByLabel(page, "Title of the module", title);
        await fillByLabel(
          page,
          "Summary",
          `${title}: a module of four outdoor sessions along the river, with notes.`,
        );
        await selectByLabel(
          page,
          "Licence",
          "CC BY-SA 4.0: name the author, share changes alike",
        );
        await clickByText(page, "Send the proposal");
      }
      await openUrl(page, `${web.base}/me/work`, "Modules and proposals");
      const text = await mainText(page);
      for (const m of text.matchAll(/#(\d+) (River walks|Bridge building)/g)) {
        proposals.push(Number(m[1]));
      }
      assert.equal(proposals.length, 2, text);
      assert.match(text, /Status: confirmed/);
      const [river, bridge] = proposals.sort((a, b) => a - b);
      await selectByLabel(page, `Name on #${river}`, "Take my name off");
      await clickByText(page, `Save the name choice of #${river}`);
      assert.equal(await inputValue(page, `#attr-${river}`), "remove");
      await fillByLabel(page, `Why you withdraw #${bridge}`, "Not ready yet");
      await clickByText(page, `Withdraw #${bridge}`);
      assert.match(await mainText(page), /Status: withdrawn/);
    });

    const kv = await Deno.openKv(web.server.kvPath);
    try {
      await grantRole(kv, "olga@example.com", "owner", Date.now());
    } finally {
      kv.close();
    }
    const owner = await web.page();
    owner.on("dialog", (d) => void d.accept());
    await web.signIn(owner, "olga@example.com");

    await t.step("team: the queue with its gate and transitions, to published", async () => {
      await clickByText(owner, "Team");
      assert.equal(await heading(owner), "Proposal queue");
      await assertGoodPage(owner);
      const river = Math.min(...proposals);
      await clickByText(owner, `#${river} River walks`);
      await assertGoodPage(owner);
      assert.match(await mainText(owner), /The checks before publication/);
      assert.match(await mainText(owner), /confirmed\s+Passes/);
      await clickByText(owner, "Start the review");
      assert.match(await mainText(owner), /Status\s+Under review/);
      await clickByText(owner, "Reject");
      assert.match(
        await fieldError(owner, "Reason to reject (mailed to the submitter)"),
        /3 characters/,
      );
      await assertGoodPage(owner);
      await fillByLabel(owner, "Reason to admit (mailed to the submitter)", "A good start");
      await clickByText(owner, "Admit");
      assert.match(await mainText(owner), /Status\s+Admitted/);
      assert.match(await mainText(owner), /reviewing → admitted[^\n]*A good start/);
      // The owner publishes (the gate is open); the module page answers at its url.
      await clickByText(owner, "Publish");
      assert.match(await mainText(owner), /Status\s+Published/);
      await clickByText(owner, "/modules/river-walks");
      assert.match(await heading(owner), /River walks/);
    });

    await t.step("team: an application decided once, the accounts, the invitations", async () => {
      await owner.goto(`${web.base}/team`);
      await clickByText(owner, "Applications");
      await assertGoodPage(owner);
      // A second tab still showing the form, as a second reviewer's would.
      const stale = await owner.browserContext().newPage();
      await stale.goto(owner.url());
      await selectByLabel(owner, "Decision on Ann Example", "Approve");
      await fillByLabel(owner, "Reason for Ann Example", "Welcome aboard");
      await clickByText(owner, "Decide on Ann Example");
      assert.match(await mainText(owner), /No open applications/);
      await selectByLabel(stale, "Decision on Ann Example", "Decline");
      await fillByLabel(stale, "Reason for Ann Example", "Not yet");
      await clickByText(stale, "Decide on Ann Example");
      assert.match(
        await mainText(stale),
        /Your decision was not recorded\s+This application was already approved\./,
      );
      await assertAccessible(stale);
      await assertFitsPhone(stale);
      await stale.close();
      await page.goto(`${web.base}/me/standing`);
      assert.match(await mainText(page), /approved .*Welcome aboard/);

      await clickByText(owner, "Accounts");
      await assertGoodPage(owner);
      assert.match(await mainText(owner), /ann@example\.com/);
      await clickByText(owner, "Invitations");
      await assertGoodPage(owner);
      assert.match(await mainText(owner), /newbie@example\.com/);

      // A person without the role gets the forbidden page.
      await page.goto(`${web.base}/team`);
      assert.equal(await heading(page), "Not allowed");
    });

    await t.step("team: a module's details and contributors", async () => {
      await web.demo();
      const slug = "pond-life-through-the-seasons";
      await owner.goto(`${web.base}/me/work/modules/${slug}`);
      await assertGoodPage(owner);
      await fillByLabel(owner, "Title", "Pond life, all year");
      await fillByLabel(owner, "Facts", "Duration: 4 weeks\nAges: 8 to 10");
      await fillByLabel(owner, "What learners get", "A pond diary\nA field guide");
      await selectByLabel(owner, "State", "finished");
      await clickByText(owner, "Save module");
      assert.equal(await heading(owner), "Edit Pond life, all year");
      assert.equal(await inputValue(owner, "#f-facts"), "Duration: 4 weeks\nAges: 8 to 10");
      assert.equal(await inputValue(owner, "#f-gets"), "A pond diary\nA field guide");
      await fillByLabel(owner, "Contributor's address", "nobody@example.com");
      await clickByText(owner, "Add contributor");
      assert.notEqual(await fieldError(owner, "Contributor's address"), "");
      await fillByLabel(owner, "Contributor's address", "ann@example.com");
      await clickByText(owner, "Add contributor");
      assert.match(await mainText(owner), /Ann Example/);
      await page.goto(`${web.base}/me/work`);
      assert.match(await mainText(page), /Edit Pond life, all year/);
      await clickByText(owner, "Remove Ann Example");
      assert.doesNotMatch(await mainText(owner), /Ann Example/);
      await owner.close();
    });

    await t.step("data: export, a fresh sign-in, erasure keeping a module", async () => {
      // The browser's sign-in is older than 15 minutes (set back in the server's KV, as
      // time passing would).
      await ageSessions(web.server.kvPath, "ann@example.com", 20 * MINUTE);
      await openUrl(page, `${web.base}/me/data`, "Your data");
      const exported = await page.evaluate(async () => {
        const r = await fetch("/me/data/export");
        return {
          status: r.status,
          disposition: r.headers.get("content-disposition"),
          body: await r.text(),
        };
      });
      assert.equal(exported.status, 200);
      assert.match(exported.disposition ?? "", /attachment/);
      assert.match(exported.body, /ann@example\.com/);

      // Erasure needs a fresh sign-in: the page says so and leads through it.
      assert.equal(await page.$("[id^=keep-]"), null, "no erasure form yet");
      await openByText(page, "sign in again", "Sign in again");
      assert.equal(await inputValue(page, "#f-email"), "ann@example.com");
      await page.goto(await web.requestLink(page, "ann@example.com"));
      await clickByText(page, "Sign in on this device");
      assert.equal(new URL(page.url()).pathname, "/me/data", "back where the person was");
      await assertGoodPage(page);

      // "Keep my name": the module stays in the catalogue after the account is gone.
      await checkByLabel(page, "Keep my name on River walks");
      await checkByLabel(page, "I understand that this erases my account for good");
      await openByText(page, "Erase my account", "Account erased");
      await page.goto(`${web.base}/me`);
      assert.equal(new URL(page.url()).pathname, "/sign-in");
      await page.goto(`${web.base}/modules/river-walks`);
      assert.match(await heading(page), /River walks/);
    });
  },
});
