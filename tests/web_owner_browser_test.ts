/**
 * The owner's pages in a real browser: a service at a private address (only the owner may check
 * one), a visitor's request handled, every account's services, a webhook alert channel with its
 * signed test alert, the status page and the public page it makes. Each page is checked by
 * axe-core, against its CSP and for sideways scrolling at 375 px (assertGoodPage). One browser
 * and one server for all.
 */
import assert from "node:assert/strict";
import { SIGNATURE_HEADER } from "../kv/alerts/channels.ts";
import { grantRole } from "../kv/accounts/roles.ts";
import { localHttp, makeCerts } from "./_servers.ts";
import {
  assertGoodPage,
  BROWSER_TEST,
  checkByLabel,
  clickByText,
  fillByLabel,
  heading,
  inputValue,
  mainText,
  startWeb,
} from "./_browser.ts";

Deno.test({
  name: "browser: the owner's pages, task by task",
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
    const kv = await Deno.openKv(web.server.kvPath);
    try {
      await grantRole(kv, "olga@example.com", "owner", Date.now());
    } finally {
      kv.close();
    }
    const owner = await web.page();
    owner.on("dialog", (d) => void d.accept());
    try {
      await web.signIn(owner, "olga@example.com");

      await t.step("services: the owner checks a private address", async () => {
        // The owner may check a private address: a url service on this server, checked now.
        await owner.goto(`${web.base}/me/services/new?kind=url`);
        await fillByLabel(owner, "Name", "This server");
        await fillByLabel(owner, "Address to check", `${web.base}/api/healthz`);
        await clickByText(owner, "Add service");
        assert.equal(await heading(owner), "This server");
        await clickByText(owner, "Check now");
        assert.match(await mainText(owner), /State\s+Up/);
        assert.match(await mainText(owner), /Last check\s+(just now|\d+ seconds? ago)/);
      });

      await t.step("team: a request handled, every account's services", async () => {
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
        await clickByText(owner, "All services");
        await assertGoodPage(owner);
        assert.match(await mainText(owner), /This machine/);
      });

      await t.step(
        "alerts: webhook channel and its test alert, status page, public page",
        async () => {
          // A name first: the status page's address is made from it.
          await owner.goto(`${web.base}/me`);
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
          const secret = await inputValue(owner, "#secret");
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
        },
      );
    } finally {
      await Deno.remove(ca);
      await receiver.close();
    }
  },
});
