/**
 * The signed-in pages in a real browser, as a person uses them: profile with picture,
 * journal, devices, watched services (with a heartbeat's hook address), files with the
 * upload, the data export and the erasure. Each page is checked by axe-core, against its CSP
 * and for sideways scrolling at 375 px (assertGoodPage). One browser and one server for all.
 */
import assert from "node:assert/strict";
import { Image } from "imagescript";
import { grantRole } from "../kv/roles.ts";
import {
  assertGoodPage,
  BROWSER_TEST,
  byText,
  checkByLabel,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  type Page,
  selectByLabel,
  startWeb,
  uploadByLabel,
} from "./_browser.ts";

const value = (page: Page, sel: string) =>
  page.$eval(sel, (el: { value: string }) => el.value as string);

Deno.test({
  name: "browser: the signed-in pages, task by task",
  ...BROWSER_TEST,
  fn: async (t) => {
    await using web = await startWeb();
    const page = await web.page();
    // Confirm dialogs (delete, erase, rotate) are answered yes, as the person would.
    page.on("dialog", (d) => void d.accept());
    const dir = await Deno.makeTempDir();
    try {
      await web.signIn(page, "ann@example.com");

      await t.step("overview links every account page", async () => {
        assert.equal(await heading(page), "Your account");
        for (const label of ["Profile", "Journal", "Devices", "Services", "Files", "Your data"]) {
          await byText(page, label);
        }
        await assertGoodPage(page);
      });

      await t.step("profile: errors beside the field, save, picture up and away", async () => {
        await clickByText(page, "Profile");
        assert.equal(await heading(page), "Profile");
        await assertGoodPage(page);
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
        assert.equal(await value(page, "#f-name"), "Ann Example");
        assert.equal(await value(page, "#f-langs"), "en de");

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
        await clickByText(page, "Edit");
        assert.equal(await heading(page), "Edit entry");
        await assertGoodPage(page);
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
        await page.goto(`${web.base}/me/devices`);
        assert.equal(await heading(page), "Devices");
        await assertGoodPage(page);
        assert.equal((await page.$$("tbody tr")).length, 2);
        assert.match(await mainText(page), /this browser/);
        await clickByText(page, "End");
        assert.match(await mainText(page), /Ended 1 session/);
        assert.equal((await page.$$("tbody tr")).length, 1);
        await other.goto(`${web.base}/me`);
        assert.equal(new URL(other.url()).pathname, "/sign-in", "the ended browser is out");
        await other.close();
      });

      await t.step("services: heartbeat with its hook once, beat, rotate, edit", async () => {
        await page.goto(`${web.base}/me/services`);
        assert.equal(await heading(page), "Watched services");
        await assertGoodPage(page);
        // A private address is refused for an account that is not the owner: said beside it.
        await fillByLabel(page, "Name", "Intranet");
        await fillByLabel(page, "Address to check", "http://127.0.0.1:9/");
        await clickByText(page, "Add service");
        assert.notEqual(await fieldError(page, "Address to check"), "");
        await assertGoodPage(page);

        await selectByLabel(page, "Kind", "Heartbeat: it calls us (webhook)");
        await fillByLabel(page, "Name", "Nightly backup");
        await fillByLabel(page, "Address to check", "");
        await selectByLabel(page, "Group", "Jobs");
        await selectByLabel(page, "Place", "on site");
        await selectByLabel(page, "Check every", "day");
        await clickByText(page, "Add service");
        assert.equal(await heading(page), "Added Nightly backup");
        await assertGoodPage(page);
        const hook = await value(page, "#hook-url");
        assert.match(hook, /\/api\/hooks\/[A-Za-z0-9_-]{43}$/);
        assert.match(await value(page, "#hook-curl"), /^curl .*\/api\/hooks\//);
        await byText(page, "Copy hook address");
        const beat = await fetch(`${web.base}${new URL(hook).pathname}`, { method: "POST" });
        assert.equal(beat.status, 200);
        await beat.body?.cancel();

        await clickByText(page, "Go to the service");
        assert.equal(await heading(page), "Nightly backup");
        await assertGoodPage(page);
        assert.doesNotMatch(await mainText(page), /\/api\/hooks\//, "shown only once");
        await clickByText(page, "New hook address");
        const rotated = await value(page, "#hook-url");
        assert.notEqual(rotated, hook);
        const old = await fetch(`${web.base}${new URL(hook).pathname}`, { method: "POST" });
        assert.equal(old.status, 404);
        await old.body?.cancel();

        await fillByLabel(page, "Name", "Nightly backup (NAS)");
        await checkByLabel(page, "Mail me when it goes off and comes back", false);
        await clickByText(page, "Save changes");
        assert.equal(await heading(page), "Nightly backup (NAS)");
        await clickByText(page, "All services");
        const list = await mainText(page);
        assert.match(list, /Nightly backup \(NAS\)/);
        assert.match(list, /Jobs · on site/);
        await clickByText(page, "Nightly backup (NAS)");
        await clickByText(page, "Delete service");
        assert.match(await mainText(page), /No services watched yet/);
      });

      await t.step(
        "files: upload with progress, public link, rename, private, delete",
        async () => {
          await page.goto(`${web.base}/me/files`);
          assert.equal(await heading(page), "Files");
          await assertGoodPage(page);
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
          const link = await value(page, "[id^=link-]");
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

      await t.step("standing: apply, invite, list", async () => {
        await page.goto(`${web.base}/me/standing`);
        assert.equal(await heading(page), "Standing and invitations");
        await assertGoodPage(page);
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
          await clickByText(page, "Send the proposal");
        }
        await page.goto(`${web.base}/me/work`);
        assert.equal(await heading(page), "Modules and proposals");
        await assertGoodPage(page);
        const text = await mainText(page);
        for (const m of text.matchAll(/#(\d+) (River walks|Bridge building)/g)) {
          proposals.push(Number(m[1]));
        }
        assert.equal(proposals.length, 2, text);
        assert.match(text, /Status: confirmed/);
        const [river, bridge] = proposals.sort((a, b) => a - b);
        await selectByLabel(page, `Name on #${river}`, "Take my name off");
        await clickByText(page, `Save the name choice of #${river}`);
        assert.equal(await value(page, `#attr-${river}`), "remove");
        await fillByLabel(page, `Why you withdraw #${bridge}`, "Not ready yet");
        await clickByText(page, `Withdraw #${bridge}`);
        assert.match(await mainText(page), /Status: withdrawn/);
      });

      await t.step("team: queue with gate and transitions, applications, requests", async () => {
        const kv = await Deno.openKv(web.server.kvPath);
        try {
          await grantRole(kv, "olga@example.com", "owner", Date.now());
        } finally {
          kv.close();
        }
        const owner = await web.page();
        owner.on("dialog", (d) => void d.accept());
        await web.signIn(owner, "olga@example.com");
        await clickByText(owner, "Team");
        assert.equal(await heading(owner), "Proposal queue");
        await assertGoodPage(owner);
        const river = Math.min(...proposals);
        await clickByText(owner, `#${river} River walks`);
        await assertGoodPage(owner);
        assert.match(await mainText(owner), /Gate checks/);
        assert.match(await mainText(owner), /passed confirmed/);
        await selectByLabel(owner, "New status", "Start review (reviewing)");
        await clickByText(owner, "Change status");
        assert.match(await mainText(owner), /Status\s+reviewing/);
        await selectByLabel(owner, "New status", "Reject");
        await clickByText(owner, "Change status");
        assert.match(await fieldError(owner, "Reason"), /3 characters/);
        await assertGoodPage(owner);
        await selectByLabel(owner, "New status", "Admit");
        await fillByLabel(owner, "Reason", "A good start");
        await clickByText(owner, "Change status");
        assert.match(await mainText(owner), /Status\s+admitted/);
        assert.match(await mainText(owner), /reviewing → admitted — A good start/);
        await byText(owner, "Change status");
        await owner.$eval("[id=f-status]", (el: { innerText: string }) => {
          if (!el.innerText.includes("Publish")) throw new Error("no publish for the owner");
        });

        await clickByText(owner, "Applications");
        await assertGoodPage(owner);
        await selectByLabel(owner, "Decision on Ann Example", "Approve");
        await fillByLabel(owner, "Reason for Ann Example", "Welcome aboard");
        await clickByText(owner, "Decide on Ann Example");
        assert.match(await mainText(owner), /No open applications/);
        await page.goto(`${web.base}/me/standing`);
        assert.match(await mainText(page), /approved .*Welcome aboard/);

        await owner.goto(`${web.base}/request`);
        await fillByLabel(owner, "Your name", "Olga");
        await fillByLabel(owner, "E-mail address", "asker@example.com");
        await fillByLabel(owner, "Your message", "Please add a module on wetlands.");
        await clickByText(owner, "Send the request");
        await owner.goto(`${web.base}/team/requests`);
        await assertGoodPage(owner);
        const id = /#(\d+) module from Olga/.exec(await mainText(owner))?.[1];
        assert.ok(id, await mainText(owner));
        await clickByText(owner, `Mark #${id} handled`);
        assert.match(await mainText(owner), /No open requests/);

        await clickByText(owner, "Accounts");
        await assertGoodPage(owner);
        assert.match(await mainText(owner), /ann@example\.com/);
        await clickByText(owner, "Invitations");
        await assertGoodPage(owner);
        assert.match(await mainText(owner), /newbie@example\.com/);
        await clickByText(owner, "All services");
        await assertGoodPage(owner);
        assert.match(await mainText(owner), /This machine/);

        // A person without the role gets the forbidden page.
        await page.goto(`${web.base}/team`);
        assert.equal(await heading(page), "Not allowed");

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
        assert.equal(await value(owner, "#f-facts"), "Duration: 4 weeks\nAges: 8 to 10");
        assert.equal(await value(owner, "#f-gets"), "A pond diary\nA field guide");
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

      await t.step("data: export download and erasure", async () => {
        await page.goto(`${web.base}/me/data`);
        assert.equal(await heading(page), "Your data");
        await assertGoodPage(page);
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
        await checkByLabel(page, "I understand that this erases my account for good");
        await clickByText(page, "Erase my account");
        assert.equal(await heading(page), "Account erased");
        await page.goto(`${web.base}/me`);
        assert.equal(new URL(page.url()).pathname, "/sign-in");
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
