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
  fillByLabel,
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

Deno.test({
  name: "browser: add a passkey, sign in with it, a copied key's counter refused",
  ...BROWSER_TEST,
  fn: async (t) => {
    const port = freePort();
    // A passkey belongs to a host name (an address such as 127.0.0.1 cannot be one).
    const site = `http://localhost:${port}`;
    await using web = await startWeb({ PORT: String(port), BASE_URL: site });
    const page = await web.page();
    await localOnly(page);
    // A browser without passkey autofill, on the pages asked with ?no-autofill.
    await page.evaluateOnNewDocument(() => {
      const g = globalThis as unknown as {
        location: { search: string };
        PublicKeyCredential?: { isConditionalMediationAvailable?: () => Promise<boolean> };
      };
      if (g.location.search.includes("no-autofill") && g.PublicKeyCredential) {
        g.PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
      }
    });
    const cdp = await page.createCDPSession();
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    await t.step("signed in by a mailed link, a passkey is added by name", async () => {
      await page.goto(`${site}/sign-in`);
      const link = new URL(await web.requestLink(page, "pia@example.org", "Pia Passkey"));
      await page.goto(`${site}${link.pathname}${link.search}`);
      await clickByText(page, "Sign in on this device");
      await page.goto(`${site}/me/sign-in-methods`);
      await assertGoodAtBoth(page);
      await fillByLabel(page, "Passkey name", "Test laptop");
      await clickByText(page, "Add a passkey");
      assert.equal(new URL(page.url()).pathname, "/me/sign-in-methods");
      const text = await mainText(page);
      assert.match(text, /Your new passkey now signs you in/);
      assert.match(text, /Test laptop/);
      await assertGoodAtBoth(page);
    });

    await t.step(
      "signed out, the browser's passkey autofill signs in on the sign-in page",
      async () => {
        await clickByText(page, "Sign out");
        // Chrome's virtual authenticator answers the autofill request at once, as a person
        // picking the passkey offered in the address field would.
        await Promise.all([page.waitForNavigation(), page.goto(`${site}/sign-in`)]);
        if (new URL(page.url()).pathname !== "/me") await page.waitForNavigation();
        assert.equal(new URL(page.url()).pathname, "/me");
        await page.goto(`${site}/me/devices`);
        assert.match(await mainText(page), /Passkey/);
      },
    );

    await t.step("without autofill, the passkey button signs in", async () => {
      await clickByText(page, "Sign out");
      await page.goto(`${site}/sign-in?no-autofill=1`);
      await page.waitForNetworkIdle({ idleTime: 300 });
      await assertGoodAtBoth(page);
      await clickByText(page, "Sign in with a passkey");
      assert.equal(new URL(page.url()).pathname, "/me");
      await page.goto(`${site}/me/sign-in-methods`);
      assert.match(await mainText(page), /Test laptop/);
    });

    await t.step("a counter that goes back (a copied key) is refused", async () => {
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      assert.equal(credentials.length, 1);
      const [cred] = credentials;
      await cdp.send("WebAuthn.removeCredential", {
        authenticatorId,
        credentialId: cred.credentialId,
      });
      await cdp.send("WebAuthn.addCredential", {
        authenticatorId,
        credential: { ...cred, signCount: 0 },
      });
      await clickByText(page, "Sign out");
      await page.goto(`${site}/sign-in?no-autofill=1`);
      await page.waitForNetworkIdle({ idleTime: 300 });
      await clickByText(page, "Sign in with a passkey");
      assert.equal(await heading(page), "Sign-in did not work");
      assert.match(await mainText(page), /counter went back/);
      await assertGoodAtBoth(page);
    });
  },
});
