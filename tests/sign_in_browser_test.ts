/**
 * Other ways in, in Chromium as a person uses them: "Sign in with <provider>" against a real
 * OpenID provider (npm `oidc-provider`, its own login and consent pages) on 127.0.0.1, then the
 * pages that list how one signed in. The site runs at http://localhost:<port> (BASE_URL): the
 * redirect URI registered at the provider must be exactly the site's address. Every request
 * the browser makes to any other address is refused.
 */
import assert from "node:assert/strict";
import {
  assertGoodAtBoth,
  BROWSER_TEST,
  clickByText,
  heading,
  mainText,
  type Page,
  startWeb,
} from "./_browser.ts";
import { openIdProvider } from "./_providers.ts";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Only this machine: any request elsewhere (a web font of the provider's pages) is aborted. */
async function localOnly(page: Page) {
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    const host = new URL(req.url()).hostname;
    if (["127.0.0.1", "localhost", "[::1]"].includes(host) || req.url().startsWith("data:")) {
      req.continue();
    } else req.abort();
  });
}

Deno.test({
  name: "browser: sign in with an OpenID provider by its button; devices and sign-in methods",
  ...BROWSER_TEST,
  fn: async (t) => {
    const port = freePort();
    const base = `http://localhost:${port}`;
    await using op = await openIdProvider([`${base}/sign-in/callback/oidc`], {
      alice: { sub: "alice", email: "alice@example.org", email_verified: true, name: "Alice P" },
    });
    await using web = await startWeb({
      PORT: String(port),
      BASE_URL: base,
      OIDC_ISSUER: op.issuer,
      OIDC_CLIENT_ID: op.clientId,
      OIDC_CLIENT_SECRET: op.clientSecret,
      OIDC_NAME: "Example ID",
    });
    const page = await web.page();
    await localOnly(page);

    await t.step("the sign-in page offers the provider", async () => {
      await page.goto(`${base}/sign-in`);
      assert.equal(await heading(page), "Sign in");
      assert.match(await mainText(page), /Or sign in with/);
      await assertGoodAtBoth(page);
    });

    await t.step("its button, the provider's login and consent, back signed in", async () => {
      await clickByText(page, "Sign in with Example ID");
      assert.equal(new URL(page.url()).origin, op.issuer);
      await page.type("input[name=login]", "alice");
      await page.type("input[name=password]", "anything");
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      await clickByText(page, "Continue");
      assert.equal(page.url(), `${base}/me`);
      assert.match(await mainText(page), /Alice P/);
    });

    await t.step("the devices page says how this browser signed in", async () => {
      await page.goto(`${base}/me/devices`);
      assert.match(await mainText(page), /Example ID/);
      await assertGoodAtBoth(page);
    });

    await t.step("the sign-in methods page lists the provider account", async () => {
      await clickByText(page, "Sign-in methods");
      assert.equal(await heading(page), "Sign-in methods");
      const text = await mainText(page);
      assert.match(text, /alice@example\.org/);
      assert.match(text, /always signs you in/);
      await assertGoodAtBoth(page);
    });

    await t.step("a stale answer ends on the page that offers the mailed link", async () => {
      await page.goto(`${base}/sign-in/callback/oidc?code=used&state=old`);
      assert.equal(await heading(page), "Sign-in did not work");
      assert.match(await mainText(page), /finished already or took longer than 10 minutes/);
      await assertGoodAtBoth(page);
      await clickByText(page, "Mail me a sign-in link instead");
      assert.equal(new URL(page.url()).pathname, "/me");
    });
  },
});
