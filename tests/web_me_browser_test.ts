/**
 * The account pages in a real browser, as a person uses them: the overview, profile with
 * picture, journal, devices, watched services (with a heartbeat's hook address) and files with
 * the upload. Each page is checked by axe-core, against its CSP and for sideways scrolling at
 * 375 px (assertGoodPage). One browser and one server for all. A contributor's way through the
 * team's review is tests/web_contributor_browser_test.ts, the owner's pages
 * tests/web_owner_browser_test.ts: each starts its own server, so the suite's workers run them
 * side by side.
 */
import assert from "node:assert/strict";
import { Image } from "imagescript";
import { openKv } from "../kv/_atomic.ts";
import {
  assertGoodPage,
  assertNoProblems,
  BROWSER_TEST,
  byText,
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
  uploadByLabel,
} from "./_browser.ts";

/**
 * Every browser here signs in from 127.0.0.1, and sign-in links are limited to 5 an hour per
 * origin: the steps that sign in again first let the hour pass for those two limits (their
 * windows removed from the server's KV, which is what the hour's end does).
 */
async function nextHourOfLinks(kvPath: string) {
  const kv = await openKv(kvPath);
  try {
    for await (const e of kv.list({ prefix: ["rate"] })) {
      if (e.key[2] === "link_origin" || e.key[2] === "link_address") await kv.delete(e.key);
    }
  } finally {
    kv.close();
  }
}

Deno.test({
  name: "browser: the account pages, task by task",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    // Confirm dialogs (delete, rotate) are answered yes, as the person would.
    page.on("dialog", (d) => void d.accept());
    const dir = await Deno.makeTempDir();
    try {
      await web.signIn(page, "ann@example.com");

      await t.step("overview links every account page", async () => {
        assert.equal(await heading(page), "Your account");
        for (const label of ["Profile", "Journal", "Devices", "Services", "Files", "Your data"]) {
          await byText(page, label);
        }
        // On a phone each page's purpose reads under its link, the width of the list.
        await page.setViewport({ width: 375, height: 800 });
        const widths = await page.$$eval(
          "dl.areas dd",
          (dds: { getBoundingClientRect(): { width: number } }[]) =>
            dds.map((d) => Math.round(d.getBoundingClientRect().width)),
        );
        assert.ok(widths.length > 5 && widths.every((w) => w > 250), `purposes ${widths} px wide`);
        await page.setViewport({ width: 1280, height: 900 });
        await assertGoodPage(page);
      });

      await t.step("profile: errors beside the field, save, picture up and away", async () => {
        await openByText(page, "Profile", "Profile");
        await fillByLabel(page, "Name", "Ann Example");
        await fillByLabel(page, "Website", "http://insecure.example");
        await clickByText(page, "Save profile");
        assert.match(await fieldError(page, "Website"), /https/);
        await assertGoodPage(page);
        await fillByLabel(page, "Website", "https://ann.example");
        await fillByLabel(page, "Languages", "en de");
        await selectByLabel(page, "Role", "teacher");
        await clickByText(page, "Save profile");
        assert.match(await mainText(page), /Saved\./);
        assert.equal(await inputValue(page, "#f-name"), "Ann Example");
        assert.equal(await inputValue(page, "#f-langs"), "en de");

        const png = `${dir}/me.png`;
        const img = new Image(40, 40).fill(0x3366ccff);
        await Deno.writeFile(png, await img.encode());
        await uploadByLabel(page, "Picture file", png);
        await clickByText(page, "Upload picture");
        const src = await page.$eval("img.avatar", (i: { src: string }) => i.src as string);
        assert.match(src, /\/api\/avatars\/\d+/);
        const pic = await fetch(src.replace(/^https?:\/\/[^/]+/, web.base));
        assert.equal(pic.status, 200);
        assert.equal(pic.headers.get("content-type"), "image/png");
        await pic.body?.cancel();
        await assertGoodPage(page);
        await clickByText(page, "Remove picture");
        assert.equal(await page.$("img.avatar"), null);
        assert.match(await mainText(page), /No picture yet/);
      });

      await t.step("journal: write, make private, edit, delete", async () => {
        await clickByText(page, "Journal");
        await assertGoodPage(page);
        await clickByText(page, "Save entry");
        assert.notEqual(await fieldError(page, "Entry"), "");
        await fillByLabel(page, "Entry", "Walked the river trail with class 4b.");
        await clickByText(page, "Save entry");
        let text = await mainText(page);
        assert.match(text, /Walked the river trail/);
        assert.match(text, /public/);
        await clickByText(page, "Make private");
        assert.match(await mainText(page), /private/);
        await openByText(page, "Edit", "Edit entry");
        await fillByLabel(page, "Entry", "Walked the river trail with class 4c.");
        await clickByText(page, "Save changes");
        text = await mainText(page);
        assert.match(text, /class 4c/);
        assert.match(text, /changed/);
        await clickByText(page, "Delete");
        assert.match(await mainText(page), /No entries yet/);
      });

      await t.step("devices: a second browser listed, ended; end all", async () => {
        const other = await web.page();
        await web.signIn(other, "ann@example.com");
        await openUrl(page, `${web.base}/me/devices`, "Devices");
        assert.equal((await page.$$("tbody tr")).length, 2);
        assert.match(await mainText(page), /this browser/);
        await clickByText(page, "End");
        assert.match(await mainText(page), /Ended 1 session/);
        assert.equal((await page.$$("tbody tr")).length, 1);
        await other.goto(`${web.base}/me`);
        assert.equal(new URL(other.url()).pathname, "/sign-in", "the ended browser is out");

        // "End every session": both browsers out, this one on the sign-in page.
        await nextHourOfLinks(web.server.kvPath);
        await web.signIn(other, "ann@example.com");
        await page.goto(`${web.base}/me/devices`);
        assert.equal((await page.$$("tbody tr")).length, 2);
        await clickByText(page, "End every session (this one too)");
        assert.equal(new URL(page.url()).pathname, "/sign-in");
        assert.equal(await heading(page), "Sign in");
        // The empty sign-in form, the same markup tests/web_browser_test.ts checks.
        assertNoProblems(page);
        for (const p of [page, other]) {
          await p.goto(`${web.base}/me/devices`);
          assert.equal(new URL(p.url()).pathname, "/sign-in", "every session ended");
        }
        await other.close();
        await web.signIn(page, "ann@example.com");
      });

      await t.step("services: heartbeat with its hook once, beat, rotate, edit", async () => {
        await openUrl(page, `${web.base}/me/services/new?kind=url`, "Add a service");
        // A private address is refused for an account that is not the owner: said beside it.
        await fillByLabel(page, "Name", "Intranet");
        await fillByLabel(page, "Address to check", "http://127.0.0.1:9/");
        await clickByText(page, "Add service");
        assert.notEqual(await fieldError(page, "Address to check"), "");
        await assertGoodPage(page);

        // From the add page, the kind chosen first (Back then lands on it, not on the refused
        // form's answer).
        await openUrl(page, `${web.base}/me/services/new`, "Add a service");
        await checkByLabel(page, "Heartbeat: it calls us (webhook)");
        await clickByText(page, "Next");
        await fillByLabel(page, "Name", "Nightly backup");
        await selectByLabel(page, "Group", "Jobs");
        await selectByLabel(page, "Place", "on site");
        await selectByLabel(page, "Expected every", "day");
        await fillByLabel(page, "Schedule (cron)", "0 3 * * *");
        await fillByLabel(page, "Time zone of the schedule", "Europe/Berlin");
        await openByText(page, "Add service", "Added Nightly backup");
        const hook = await inputValue(page, "#hook-url");
        assert.match(hook, /\/api\/hooks\/[A-Za-z0-9_-]{43}$/);
        assert.equal(await inputValue(page, "#signal-0"), `curl -fsS -m 10 --retry 5 "${hook}"`);
        await byText(page, "Copy hook address");
        // Reload and Back: the same address again, and still one service (the add answered 303).
        await page.reload();
        assert.equal(await inputValue(page, "#hook-url"), hook);
        await assertGoodPage(page);
        await page.goBack();
        assert.equal(await heading(page), "Add a service");
        await page.goForward();
        assert.equal(await inputValue(page, "#hook-url"), hook);
        const beat = await fetch(`${web.base}${new URL(hook).pathname}`, { method: "POST" });
        assert.equal(beat.status, 200);
        await beat.body?.cancel();

        await openByText(page, "Go to the service", "Nightly backup");
        assert.equal(await inputValue(page, "#f-schedule"), "0 3 * * *");
        assert.equal(await inputValue(page, "#f-tz"), "Europe/Berlin");
        assert.doesNotMatch(await mainText(page), /\/api\/hooks\//, "shown only once");
        await clickByText(page, "New hook address");
        const rotated = await inputValue(page, "#hook-url");
        assert.notEqual(rotated, hook);
        // A reload shows the same new address again and renews nothing.
        await page.reload();
        assert.equal(await inputValue(page, "#hook-url"), rotated);
        const old = await fetch(`${web.base}${new URL(hook).pathname}`, { method: "POST" });
        assert.equal(old.status, 404);
        await old.body?.cancel();
        // The service's page as checked above, before the rotation.
        await clickByText(page, "Go to the service");
        assert.equal(await heading(page), "Nightly backup");

        await clickByText(page, "Edit settings", { navigates: false });
        await fillByLabel(page, "Name", "Nightly backup (NAS)");
        // The box says what unticking does: no alert anywhere, channels included.
        assert.match(
          await mainText(page),
          /Alert me when it goes off and comes back\s+By mail and on its alert channels\. Unticked: no alert at all, on no channel either/,
        );
        await checkByLabel(page, "Alert me when it goes off and comes back", false);
        await clickByText(page, "Save changes");
        assert.equal(await heading(page), "Nightly backup (NAS)");
        assert.match(await mainText(page), /Alerts\s+Nobody is told when this goes off/);
        await clickByText(page, "All services");
        const list = await mainText(page);
        assert.equal(list.match(/Nightly backup/g)?.length, 1, "one service");
        assert.match(list, /Nightly backup \(NAS\)/);
        await clickByText(page, "More about Nightly backup (NAS)", { navigates: false });
        assert.match(await mainText(page), /Jobs · on site/);
        await clickByText(page, "Nightly backup (NAS)");
        await clickByText(page, "Delete service");
        assert.match(await mainText(page), /No services watched yet/);
      });

      await t.step(
        "files: upload with progress, public link, rename, private, delete",
        async () => {
          await openUrl(page, `${web.base}/me/files`, "Files");
          const path = `${dir}/notes.txt`;
          await Deno.writeTextFile(path, "river trail notes\n".repeat(5000));
          await uploadByLabel(page, "File", path);
          await fillByLabel(page, "Title (optional)", "Trail notes");
          await checkByLabel(page, "Public: anyone with the link can open it");
          await clickByText(page, "Upload");
          assert.match(await mainText(page), /Uploaded\./);
          await assertGoodPage(page);
          const text = await mainText(page);
          assert.match(text, /notes\.txt/);
          assert.match(text, /Trail notes/);
          assert.match(text, /87\.9 KB/);
          const link = await inputValue(page, "[id^=link-]");
          const got = await fetch(`${web.base}${new URL(link).pathname}`);
          assert.equal(got.status, 200);
          assert.equal((await got.text()).length, 90000);

          await clickByText(page, "Rename or retitle notes.txt", { navigates: false });
          await fillByLabel(page, "New name of notes.txt", "notes.pdf");
          await clickByText(page, "Save notes.txt");
          assert.match(await fieldError(page, "New name of notes.txt"), /\.txt/);
          await fillByLabel(page, "New name of notes.txt", "trail.txt");
          await clickByText(page, "Save notes.txt");
          assert.match(await mainText(page), /trail\.txt/);
          await clickByText(page, "Make trail.txt private");
          assert.match(await mainText(page), /private/);
          const hidden = await fetch(
            `${web.base}${new URL(link).pathname.replace("notes", "trail")}`,
          );
          assert.equal(hidden.status, 404);
          await hidden.body?.cancel();
          // The owner still opens it from the page.
          await clickByText(page, "trail.txt");
          assert.match(await page.content(), /river trail notes/);
          await page.goBack();
          await clickByText(page, "Delete trail.txt");
          assert.match(await mainText(page), /No files yet/);
        },
      );

      await t.step("upload endpoint refuses another origin", async () => {
        const r = await fetch(`${web.base}/me/files/upload`, {
          method: "POST",
          headers: { origin: "https://evil.example", "x-file-name": "a.txt" },
          body: "x",
        });
        assert.equal(r.status, 403);
        await r.body?.cancel();
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
