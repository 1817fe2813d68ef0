/**
 * Alert channel kinds in a real browser: a Telegram and a Slack channel added through their
 * forms (a wrong token said beside its field), a test sent to each and the receiver's answer
 * shown in plain words; the secrets never shown again. The receiver is https on 127.0.0.1 with
 * a test CA the server trusts (DENO_CERT); Telegram's fixed address is moved there by
 * TEST_PROVIDER_ORIGIN. Axe clean at 1280 and 375 px (assertGoodAtBoth).
 */
import assert from "node:assert/strict";
import { grantRole } from "../kv/accounts/roles.ts";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  clickByText,
  fieldError,
  fillByLabel,
  heading,
  mainText,
  openUrl,
  startWeb,
} from "./_browser.ts";
import { localHttp, makeCerts } from "./_servers.ts";

const TG_TOKEN = "123456789:AAE-browser_token_abcdefghij";

Deno.test({
  name: "browser: a Telegram and a Slack channel through their forms, each test's answer shown",
  ...BROWSER_TEST,
  fn: async (t) => {
    const certs = await makeCerts(["127.0.0.1"], 2);
    const ca = await Deno.makeTempFile({ suffix: ".pem" });
    await Deno.writeTextFile(ca, certs.ca);
    const got: { path: string; body: string }[] = [];
    let chatKnown = false;
    const receiver = localHttp(async (req) => {
      const path = new URL(req.url).pathname;
      got.push({ path, body: await req.text() });
      if (path.endsWith("/sendMessage")) {
        return chatKnown ? Response.json({ ok: true, result: { message_id: 1 } }) : Response.json({
          ok: false,
          error_code: 400,
          description: "Bad Request: chat not found",
        }, { status: 400 });
      }
      return new Response("ok");
    }, { cert: certs.cert, key: certs.key });
    await using web = await startWeb({
      DENO_CERT: ca,
      TEST_PROVIDER_ORIGIN: `https://127.0.0.1:${receiver.port}`,
    });
    try {
      const page = await web.page();
      await web.signIn(page, "tia@example.com");
      // The Slack receiver is on 127.0.0.1, a private address only the owner may send to.
      const kv = await Deno.openKv(web.server.kvPath);
      try {
        await grantRole(kv, "tia@example.com", "owner", Date.now());
      } finally {
        kv.close();
      }

      await t.step("the kinds to choose from", async () => {
        await openUrl(page, `${web.base}/me/channels`, "Alert channels");
        const text = await mainText(page);
        for (const kind of ["Slack", "Telegram", "PagerDuty", "ntfy", "Matrix", "Webhook"]) {
          assert.match(text, new RegExp(`${kind}:`));
        }
        await assertGoodAtBoth(page);
      });

      await t.step("Telegram: a wrong token beside its field, then added", async () => {
        await clickByText(page, "Telegram");
        assert.equal(await heading(page), "Add a Telegram channel");
        assert.match(await mainText(page), /@BotFather/);
        await assertGoodAtBoth(page);
        await fillByLabel(page, "Channel name", "Phone");
        await fillByLabel(page, "Bot token", "not a token");
        await fillByLabel(page, "Chat id", "-1001234567890");
        await clickByText(page, "Add Telegram channel");
        assert.match(await fieldError(page, "Bot token"), /@BotFather/);
        await assertGoodAtBoth(page);
        await fillByLabel(page, "Bot token", TG_TOKEN);
        await clickByText(page, "Add Telegram channel");
        assert.equal(await heading(page), "Alert channels");
        assert.match(await mainText(page), /Channel Phone added/);
        assert.match(await mainText(page), /chat -1001234567890/);
        // Nothing has gone through yet: not "Working".
        assert.match(await mainText(page), /🕓 Not tested yet/);
        assert.doesNotMatch(await page.content(), /AAE-browser_token/);
      });

      await t.step("Telegram: the test shows the provider's answer", async () => {
        await clickByText(page, "Send a test alert to Phone");
        assert.match(
          await mainText(page),
          /Test alert not delivered: unknown chat: the bot cannot see it \(HTTP 400: Bad Request: chat not found\)/,
        );
        assert.match(await mainText(page), /⚠️ Failing/);
        await assertGoodAtBoth(page);
        assert.equal(got.at(-1)!.path, `/bot${TG_TOKEN}/sendMessage`);
        chatKnown = true;
        await clickByText(page, "Send a test alert to Phone");
        assert.match(await mainText(page), /Test alert delivered: delivered \(HTTP 200\)/);
        assert.match(await mainText(page), /✅ Working/);
        const sent = JSON.parse(got.at(-1)!.body);
        assert.equal(sent.chat_id, -1001234567890);
        assert.equal(sent.parse_mode, "HTML");
        assert.match(sent.text, /Test alert for channel &quot;Phone&quot;/);
      });

      await t.step("Slack: added through its form, its test delivered", async () => {
        await clickByText(page, "Slack");
        assert.equal(await heading(page), "Add a Slack channel");
        assert.match(await mainText(page), /Incoming Webhooks/);
        await fillByLabel(page, "Channel name", "Ops Slack");
        await fillByLabel(
          page,
          "Webhook address",
          `https://127.0.0.1:${receiver.port}/services/T0/B0/SLACKSECRET`,
        );
        await clickByText(page, "Add Slack channel");
        assert.match(await mainText(page), /Channel Ops Slack added/);
        await clickByText(page, "Send a test alert to Ops Slack");
        assert.match(await mainText(page), /Test alert delivered: delivered \(HTTP 200\)/);
        assert.equal(got.at(-1)!.path, "/services/T0/B0/SLACKSECRET");
        const sent = JSON.parse(got.at(-1)!.body);
        assert.equal(sent.attachments[0].color, "#0969da");
        assert.doesNotMatch(await page.content(), /SLACKSECRET/);
        await assertGoodAtBoth(page);
      });
    } finally {
      await receiver.close();
    }
  },
});
