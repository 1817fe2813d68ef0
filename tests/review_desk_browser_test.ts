/**
 * The review desk in Chromium, as the three people use it, by visible labels: a proposer sends
 * the public form (files, a record trail and its records) and confirms it from the mail; a
 * reviewer reads the files as links, the trail verified and the gate, checks the links, starts
 * the review and admits; the owner publishes and sees the roles page. At every state the page
 * offers exactly the moves the state allows (none that would fail), each move succeeds, and each
 * decision mails the proposer. Every page: axe clean at 1280 and 375 px, light and dark.
 */
import assert from "node:assert/strict";
import { lineHash } from "../lib/trail_hash.ts";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  clickByText,
  fillByLabel,
  heading,
  mainText,
  type Page,
  selectByLabel,
  startWeb,
  uploadByLabel,
} from "./_browser.ts";
import { runTask } from "./_server.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

const PROPOSER = "pia@example.org";
const REVIEWER = "rex@example.org";
const OWNER = "oona@example.org";

/** Two records chained as the service's own trail chains them (lib/record_chain.ts). */
async function recordsFile(dir: string): Promise<string> {
  const lines = [
    { seq: 1, at: "2026-11-02T09:00:00.000Z", actor: "pia", action: "draft", subject: "module" },
    { seq: 2, at: "2026-11-09T15:30:00.000Z", actor: "pia", action: "revise", subject: "module" },
  ];
  let prev = "0".repeat(64);
  const records = [];
  for (const l of lines) {
    const hash = await lineHash(prev, l);
    records.push({ ...l, prev, hash });
    prev = hash;
  }
  const path = `${dir}/records.json`;
  await Deno.writeTextFile(path, JSON.stringify(records));
  return path;
}

/** The page is good at 1280 and 375 px, in the light and the dark colour scheme. */
async function lookedAt(page: Page): Promise<void> {
  await assertGoodAtBoth(page);
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  try {
    await assertGoodAtBoth(page);
  } finally {
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  }
}

/** The text of the first mail to `to` that matches `re`, waited for. */
async function mailMatching(
  web: { sink: { mails: { to: string; text: string }[] } },
  to: string,
  re: RegExp,
) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const found = web.sink.mails.find((m) => m.to === to && re.test(m.text));
    if (found) return found.text;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no mail to ${to} matching ${re}: ${web.sink.mails.map((m) => m.to).join(", ")}`);
}

/** The submit buttons of the moves on a reviewer's page ("Decide" section), in order. */
const moveButtons = (page: Page) =>
  page.evaluate(() =>
    [...(globalThis as Dom).document.querySelectorAll(
      "ul.moves button[type=submit]",
    )].map((b: Dom) => b.innerText.trim() as string)
  );

Deno.test({
  name: "browser: a proposal from the public form to the catalogue, as proposer, reviewer, owner",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const dir = await Deno.makeTempDir();
    try {
      const env = { KV_PATH: web.server.kvPath };
      for (const [email, role] of [[REVIEWER, "reviewer"], [OWNER, "owner"]]) {
        const r = await runTask("roles", ["grant", email, role], env);
        assert.equal(r.code, 0, r.stderr);
      }
      const proposer = await web.page();
      const reviewer = await web.page();
      const owner = await web.page();
      let id = "";

      await t.step("proposer: the public form, then the mailed link confirms it", async () => {
        await proposer.goto(`${web.base}/contribute`);
        await fillByLabel(proposer, "Your name (shown with the module)", "Pia Marsh");
        await fillByLabel(proposer, "E-mail address", PROPOSER);
        await fillByLabel(proposer, "Title of the module", "Pond dipping");
        await fillByLabel(proposer, "Summary", "Children sample a pond and name what they find.");
        await selectByLabel(proposer, "Licence", "CC BY 4.0: name the author");
        await fillByLabel(proposer, "File 1: label", "Worksheet");
        await fillByLabel(proposer, "File 1: link", "https://127.0.0.1:9/worksheet.pdf");
        await fillByLabel(
          proposer,
          "Record trail (optional)",
          "- Tried it with class 4\n- Rewrote the worksheet",
        );
        await uploadByLabel(proposer, "Records file (optional)", await recordsFile(dir));
        await clickByText(proposer, "Send the proposal");
        assert.equal(await heading(proposer), "Proposal received");
        const link = new URL(await web.mailedLink(PROPOSER, "/me?verify="));
        await proposer.goto(`${web.base}${link.pathname}${link.search}`);
        assert.equal(await heading(proposer), "Confirm your proposal");
        await lookedAt(proposer);
        await clickByText(proposer, "Confirm my proposal");
        assert.equal(await heading(proposer), "Your proposal is confirmed");
        const said = await mainText(proposer);
        assert.match(said, /Your proposal ‘Pond dipping’ is confirmed; the team has been told\./);
        assert.match(said, /Confirming it made an account for pia@example\.org/);
        await lookedAt(proposer);
        await clickByText(proposer, "Its status page");
        id = new URL(proposer.url()).searchParams.get("id")!;
        assert.match(await heading(proposer), /^Proposal \d+: confirmed$/);
        // Times for people, never raw ISO stamps.
        assert.doesNotMatch(await mainText(proposer), /\d{4}-\d\d-\d\dT\d\d:/);
        await lookedAt(proposer);
      });

      await t.step(
        "reviewer: files as links, the trail verified, only the moves allowed",
        async () => {
          await web.signIn(reviewer, REVIEWER);
          await reviewer.goto(`${web.base}/team`);
          await clickByText(reviewer, `#${id} Pond dipping`);
          assert.equal(await heading(reviewer), `#${id} Pond dipping`);
          const file = await reviewer.$eval(
            "a[href='https://127.0.0.1:9/worksheet.pdf']",
            (a: Dom) => a.innerText as string,
          );
          assert.equal(file, "Worksheet");
          const text = await mainText(reviewer);
          assert.doesNotMatch(text, /"label"|"url"/, "files are not shown as JSON");
          assert.match(text, /Tried it with class 4/);
          assert.match(text, /Rewrote the worksheet/);
          assert.match(text, /Verified The 2 records form an unbroken chain/);
          assert.match(text, /revise/);
          assert.match(text, /Not checked yet/);
          assert.match(text, /The module's address in the catalogue is free/);
          assert.deepEqual(await moveButtons(reviewer), ["Start the review", "Reject"]);
          assert.doesNotMatch(text, /Publish: |Admit\b/);
          await lookedAt(reviewer);

          // The links are checked when asked, by the service's own rules: a private address is
          // refused without a connection.
          await clickByText(reviewer, "Check the links now");
          assert.match(await mainText(reviewer), /Refused target refused: private address/);

          await clickByText(reviewer, "Start the review");
          assert.equal(await heading(reviewer), `#${id} Pond dipping`);
          assert.deepEqual(await moveButtons(reviewer), ["Admit", "Reject"]);
          // Publishing is the owner's: said, not offered.
          assert.match(await mainText(reviewer), /Publish[^]*Only the owner may do this\./);
          await lookedAt(reviewer);

          // A move that needs a reason says so beside its field, and nothing changes.
          await clickByText(reviewer, "Admit");
          assert.match(await mainText(reviewer), /at least 3 characters/i);
          assert.deepEqual(await moveButtons(reviewer), ["Admit", "Reject"]);
          await fillByLabel(
            reviewer,
            "Reason to admit (mailed to the submitter)",
            "Clear steps and a tested worksheet.",
          );
          await clickByText(reviewer, "Admit");
          assert.deepEqual(await moveButtons(reviewer), []);
          assert.match(await mainText(reviewer), /reviewing → admitted/);
          await mailMatching(web, PROPOSER, /Clear steps and a tested worksheet\./);
          await lookedAt(reviewer);
        },
      );

      await t.step("owner: publishes, the proposer is mailed; the roles page", async () => {
        await web.signIn(owner, OWNER);
        await owner.goto(`${web.base}/team/proposals/${id}`);
        assert.deepEqual(await moveButtons(owner), ["Publish"]);
        await lookedAt(owner);
        await fillByLabel(owner, "Note to the submitter (optional)", "Welcome aboard.");
        await clickByText(owner, "Publish");
        assert.deepEqual(await moveButtons(owner), ["Take it back from the catalogue"]);
        const text = await mainText(owner);
        assert.match(text, /Published in the catalogue/);
        assert.match(text, /admitted → published/);
        assert.match(text, /Rex|rex@example\.org/);
        await mailMatching(web, PROPOSER, /\/modules\/pond-dipping/);
        await owner.goto(`${web.base}/modules/pond-dipping`);
        assert.match(await heading(owner), /Pond dipping/);

        await owner.goto(`${web.base}/team/accounts`);
        assert.equal(await heading(owner), "Accounts and roles");
        const roles = await mainText(owner);
        assert.match(roles, /Roles are never given through this site/);
        assert.doesNotMatch(roles, /can give roles/);
        const commands = await owner.$$eval(
          "input[readonly]",
          (inputs: Dom[]) => inputs.map((i) => i.value as string),
        );
        assert.ok(
          commands.includes(`deno task roles revoke ${REVIEWER} reviewer`),
          commands.join(),
        );
        assert.ok(commands.includes(`deno task roles grant ${PROPOSER} reviewer`), commands.join());
        await lookedAt(owner);

        // The owner stands higher than a contributor: no application is offered.
        await owner.goto(`${web.base}/me/standing`);
        assert.doesNotMatch(await mainText(owner), /Apply for contributor standing/);
        await lookedAt(owner);
      });

      await t.step("proposer: the status page says published, with the module", async () => {
        await proposer.goto(`${web.base}/contribute/status?id=${id}`);
        assert.match(await heading(proposer), /^Proposal \d+: published$/);
        await lookedAt(proposer);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
