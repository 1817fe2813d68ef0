/**
 * The signed-in pages in a real browser, as a person uses them: profile with picture,
 * journal, devices, watched services (with a heartbeat's hook address), files with the
 * upload, the data export and the erasure. Each page is checked by axe-core, against its CSP
 * and for sideways scrolling at 375 px (assertGoodPage). One browser and one server for all.
 */
import assert from "node:assert/strict";
import { Image } from "imagescript";
import { openKv } from "../kv/_atomic.ts";
import { findAccountByEmail } from "../kv/accounts/accounts.ts";
import { SIGNATURE_HEADER } from "../kv/alerts/channels.ts";
import { grantRole } from "../kv/accounts/roles.ts";
import type { Session } from "../kv/accounts/sessions.ts";
import { MINUTE } from "../lib/clock.ts";
import { localHttp, makeCerts } from "./_servers.ts";
import {
  assertAccessible,
  assertFitsPhone,
  assertGoodPage,
  BROWSER_TEST,
  byText,
  checkByLabel,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  openByText,
  openUrl,
  type Page,
  selectByLabel,
  startWeb,
  uploadByLabel,
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

const value = (page: Page, sel: string) =>
  page.$eval(sel, (el: { value: string }) => el.value as string);

Deno.test({
  name: "browser: the signed-in pages, task by task",
  ...BROWSER_TEST,
  fn: async (t) => {
    // The alert channel's receiver: https on 127.0.0.1 with a test CA the server trusts
    // (DENO_CERT, as an operator adds a private CA).
    const certs = await makeCerts(["127.0.0.1"], 2);
    const ca = await Deno.makeTempFile({ suffix: ".pem" });
    await Deno.writeTextFile(ca, certs.ca);
    const posts: { signature: string | null; body: string }[] = [];
    const receiver = localHttp(async (req) => {
      posts.push({ signature: req.headers.get(SIGNATURE_HEADER), body: await req.text() });
      return new Response("ok");
    }, { cert: certs.cert, key: certs.key });
    await using web = await startWeb({ DENO_CERT: ca });
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
        await assertGoodPage(page);
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
        const hook = await value(page, "#hook-url");
        assert.match(hook, /\/api\/hooks\/[A-Za-z0-9_-]{43}$/);
        assert.equal(await value(page, "#signal-0"), `curl -fsS -m 10 --retry 5 "${hook}"`);
        await byText(page, "Copy hook address");
        // Reload and Back: the same address again, and still one service (the add answered 303).
        await page.reload();
        assert.equal(await value(page, "#hook-url"), hook);
        await assertGoodPage(page);
        await page.goBack();
        assert.equal(await heading(page), "Add a service");
        await page.goForward();
        assert.equal(await value(page, "#hook-url"), hook);
        const beat = await fetch(`${web.base}${new URL(hook).pathname}`, { method: "POST" });
        assert.equal(beat.status, 200);
        await beat.body?.cancel();

        await openByText(page, "Go to the service", "Nightly backup");
        assert.equal(await value(page, "#f-schedule"), "0 3 * * *");
        assert.equal(await value(page, "#f-tz"), "Europe/Berlin");
        assert.doesNotMatch(await mainText(page), /\/api\/hooks\//, "shown only once");
        await clickByText(page, "New hook address");
        const rotated = await value(page, "#hook-url");
        assert.notEqual(rotated, hook);
        // A reload shows the same new address again and renews nothing.
        await page.reload();
        assert.equal(await value(page, "#hook-url"), rotated);
        const old = await fetch(`${web.base}${new URL(hook).pathname}`, { method: "POST" });
        assert.equal(old.status, 404);
        await old.body?.cancel();
        await openByText(page, "Go to the service", "Nightly backup");

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

        // The owner may check a private address: a url service on this server, checked now.
        await owner.goto(`${web.base}/me/services/new?kind=url`);
        await fillByLabel(owner, "Name", "This server");
        await fillByLabel(owner, "Address to check", `${web.base}/api/healthz`);
        await clickByText(owner, "Add service");
        assert.equal(await heading(owner), "This server");
        await clickByText(owner, "Check now");
        assert.match(await mainText(owner), /State\s+Up/);
        assert.match(await mainText(owner), /Last check\s+(just now|\d+ seconds? ago)/);

        await clickByText(owner, "Team");
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

      await t.step(
        "alerts: webhook channel and its test alert, status page, public page",
        async () => {
          const owner = await web.page();
          owner.on("dialog", (d) => void d.accept());
          await web.signIn(owner, "olga@example.com");
          // A name first: the status page's address is made from it.
          await clickByText(owner, "Profile");
          await fillByLabel(owner, "Name", "Olga Owner");
          await clickByText(owner, "Save profile");
          assert.match(await mainText(owner), /Saved\./);

          await owner.goto(`${web.base}/me/channels`);
          assert.equal(await heading(owner), "Alert channels");
          await assertGoodPage(owner);
          await clickByText(owner, "Webhook");
          assert.equal(await heading(owner), "Add a Webhook channel");
          await fillByLabel(owner, "Channel name", "Ops hook");
          await fillByLabel(owner, "Webhook address", `https://127.0.0.1:${receiver.port}/alerts`);
          await clickByText(owner, "Add Webhook channel");
          assert.match(
            await mainText(owner),
            /signing secret is shown on this page for 15 minutes/,
          );
          const secret = await value(owner, "#secret");
          assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
          await assertGoodPage(owner);
          await clickByText(owner, "Send a test alert");
          assert.match(await mainText(owner), /Test alert delivered/);
          assert.doesNotMatch(await mainText(owner), new RegExp(secret), "the secret shown once");
          await assertGoodPage(owner);
          // A reload shows the result again and sends no second test.
          await owner.reload();
          assert.match(await mainText(owner), /Test alert delivered/);
          // The receiver got one signed test post (HMAC-SHA256 of the body with the secret).
          assert.equal(posts.length, 1);
          assert.equal(JSON.parse(posts[0].body).event, "test");
          const key = await crypto.subtle.importKey(
            "raw",
            new TextEncoder().encode(secret),
            { name: "HMAC", hash: "SHA-256" },
            false,
            ["sign"],
          );
          const mac = new Uint8Array(
            await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(posts[0].body)),
          );
          const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
          assert.equal(posts[0].signature, `sha256=${hex}`);

          await clickByText(owner, "Status page");
          assert.equal(await heading(owner), "Status page");
          await assertGoodPage(owner);
          await checkByLabel(owner, "Publish the status page");
          await fillByLabel(owner, "Title", "Olga's services");
          await checkByLabel(owner, "This server");
          await fillByLabel(owner, "Note for This server", "Maintenance on Sunday");
          await clickByText(owner, "Save status page");
          assert.match(await mainText(owner), /Saved\./);
          await assertGoodPage(owner);
          await clickByText(owner, "/status/olga-owner");
          assert.equal(await heading(owner), "Olga's services");
          await assertGoodPage(owner);
          const pub = await mainText(owner);
          assert.match(pub, /This server/);
          assert.match(pub, /Maintenance on Sunday/);
          assert.match(pub, /90-day uptime/);
          assert.doesNotMatch(pub, /127\.0\.0\.1|healthz|Ops hook/, "no address, no channel");
          await owner.close();
        },
      );

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
        assert.equal(await value(page, "#f-email"), "ann@example.com");
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
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(ca);
      await receiver.close();
    }
  },
});
