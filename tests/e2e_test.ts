/**
 * End to end: the real server as a process (main.ts, a KV file, an ephemeral port on
 * 127.0.0.1), mailing through a real transport to a sink on 127.0.0.1 that the test runs,
 * and a client that signs in from the mail it receives.
 */
import assert from "node:assert/strict";
import { MIGRATIONS } from "../kv/store/migrations.ts";
import { type ServerProcess, spawnService } from "./_server.ts";
import { makeCerts } from "./_servers.ts";
import { type Received, smtpSink, waiter } from "./_smtp.ts";

/** A local HTTP mail API in the shape CONTRACT.md names (POST JSON with a bearer key). */
function mailApiSink(key: string) {
  const mails: Received[] = [];
  const refused: number[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/emails") {
      return new Response(null, { status: 404 });
    }
    if (req.headers.get("authorization") !== `Bearer ${key}`) {
      refused.push(401);
      return Response.json({ error: "bad key" }, { status: 401 });
    }
    assert.match(req.headers.get("content-type") ?? "", /^application\/json/);
    const body = await req.json();
    assert.deepEqual(Object.keys(body).sort(), ["from", "subject", "text", "to"]);
    mails.push(body);
    return Response.json({ id: `mail-${mails.length}` });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/emails`,
    mails,
    refused,
    mail: waiter(mails),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const BASE = "http://e2e.test";

/** What a person and the sign-in page do: ask for a link, open it from the mail, use the token. */
async function signInFromMail(
  server: ServerProcess,
  email: string,
  readMail: (to: string, n?: number) => Promise<Received>,
  n = 1,
): Promise<{ token: string; verify: Record<string, unknown>; mail: Received }> {
  const asked = await fetch(`${server.url}/api/verify/request`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, purpose: "login", age_ok: true, name: "Ada Lovelace" }),
  });
  assert.equal(asked.status, 202);
  assert.deepEqual(await asked.json(), { ok: true, sent: true });
  const mail = await readMail(email.trim().toLowerCase(), n);
  // The link stands alone on its line, under BASE_URL.
  const line = mail.text.split("\n").find((l) => l.includes("/me?verify="));
  assert.ok(line, `a link in: ${mail.text}`);
  assert.match(line, /^http:\/\/e2e\.test\/me\?verify=[A-Za-z0-9_-]{43}$/);
  const link = new URL(line);
  // The page the link opens, on the real server.
  const page = await fetch(`${server.url}${link.pathname}${link.search}`);
  assert.equal(page.status, 200);
  // It shows the button that completes the link (web/_sign_in_link_page.tsx); an API client
  // completes it itself.
  assert.match(await page.text(), /Sign in on this device/);
  const verified = await fetch(
    `${server.url}/api/verify?token=${link.searchParams.get("verify")}`,
  );
  assert.equal(verified.status, 200);
  const verify = await verified.json();
  return { token: verify.token, verify, mail };
}

async function me(server: ServerProcess, token: string) {
  const res = await fetch(`${server.url}/api/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: await res.json() };
}

async function withKvDir(fn: (kvPath: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(`${dir}/kv.sqlite3`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("e2e: sign in from the mail a plain local SMTP relay received", async () => {
  await withKvDir(async (kvPath) => {
    await using sink = await smtpSink();
    await using server = await spawnService(kvPath, {
      SMTP_URL: sink.url,
      BASE_URL: BASE,
      MAIL_FROM: "noreply@e2e.test",
    });
    assert.match(server.stdout.text, /listening on http:\/\/127\.0\.0\.1:\d+ \(mail: smtp\)/);
    const health = await (await fetch(`${server.url}/api/healthz`)).json();
    assert.deepEqual(health, { ok: true, db: "ok", migrations: MIGRATIONS.length });

    // Mailed to the canonical address.
    const first = await signInFromMail(server, " Ada@Example.org", sink.mail);
    assert.equal(first.mail.from, "noreply@e2e.test");
    assert.equal(first.mail.subject, "Your sign-in link");
    assert.equal(first.verify.ok, true);
    assert.equal(first.verify.confirmed, 0);

    const account = await me(server, first.token);
    assert.equal(account.status, 200);
    assert.equal(account.body.email, "ada@example.org");
    assert.equal(account.body.name, "Ada Lovelace");
    assert.equal(account.body.kind, "email");
    assert.equal(account.body.standing, "collector");

    // A second device: a new link, then the sign-in notice mail to the account.
    const second = await signInFromMail(server, "ada@example.org", sink.mail, 2);
    assert.notEqual(second.token, first.token);
    const notice = await sink.mail("ada@example.org", 3);
    assert.equal(notice.subject, "New sign-in to your account");
    assert.match(notice.text, /127\.0\.0\.x/);
    const devices = await fetch(`${server.url}/api/me/devices`, {
      headers: { authorization: `Bearer ${second.token}` },
    });
    assert.equal((await devices.json()).items.length, 2);

    // Signing out ends the token at once.
    const out = await fetch(`${server.url}/api/me/token`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${first.token}` },
    });
    assert.equal(out.status, 200);
    await out.body?.cancel();
    assert.equal((await me(server, first.token)).status, 401);
    assert.equal((await me(server, second.token)).status, 200);

    // With a transport configured, neither address nor mail text reaches the logs.
    assert.doesNotMatch(server.stdout.text + server.stderr.text, /ada@|verify=/i);
  });
});

Deno.test("e2e: a relay that offers STARTTLS gets the mail over TLS", async () => {
  const certs = await makeCerts(["127.0.0.1"], 30);
  const ca = await Deno.makeTempFile({ suffix: ".pem" });
  try {
    await Deno.writeTextFile(ca, certs.ca);
    await withKvDir(async (kvPath) => {
      await using sink = await smtpSink({ tls: certs });
      // DENO_CERT adds the test CA to the roots the server trusts, as an operator would add a
      // private relay's CA; the server's code has no test switch.
      await using server = await spawnService(kvPath, {
        SMTP_URL: sink.url,
        BASE_URL: BASE,
        DENO_CERT: ca,
      });
      const { mail } = await signInFromMail(server, "ada@example.org", sink.mail);
      assert.equal(mail.secure, true, "upgraded with STARTTLS before the mail was sent");
    });
  } finally {
    await Deno.remove(ca);
  }
});

Deno.test("e2e: sign in through the HTTP mail API transport", async () => {
  await withKvDir(async (kvPath) => {
    await using api = mailApiSink("key-for-the-test-123");
    await using server = await spawnService(kvPath, {
      MAIL_API_URL: api.url,
      MAIL_API_KEY: "key-for-the-test-123",
      BASE_URL: BASE,
      MAIL_FROM: "noreply@e2e.test",
    });
    assert.match(server.stdout.text, /\(mail: http-api\)/);
    const { token, mail } = await signInFromMail(server, "bea@example.org", api.mail);
    assert.equal(mail.from, "noreply@e2e.test");
    assert.equal(mail.subject, "Your sign-in link");
    const account = await me(server, token);
    assert.equal(account.status, 200);
    assert.equal(account.body.email, "bea@example.org");
    assert.deepEqual(api.refused, []);
    assert.doesNotMatch(server.stdout.text + server.stderr.text, /bea@|verify=/i);
  });
});

Deno.test("e2e: an SMTP relay that requires AUTH gets the URL's credentials", async () => {
  await withKvDir(async (kvPath) => {
    const auth = { user: "relay-user", pass: "p@ss:word/1" };
    await using sink = await smtpSink({ auth });
    await using server = await spawnService(kvPath, { SMTP_URL: sink.url, BASE_URL: BASE });
    const { token, mail } = await signInFromMail(server, "cy@example.org", sink.mail);
    assert.equal(mail.from, "noreply@localhost");
    assert.deepEqual(sink.logins, [auth]);
    assert.equal((await me(server, token)).body.email, "cy@example.org");
  });
});

Deno.test("e2e: a relay that refuses the login keeps the mail queued, not lost", async () => {
  await withKvDir(async (kvPath) => {
    await using sink = await smtpSink({ auth: { user: "right", pass: "right" } });
    const wrong = sink.url.replace("right:right@", "wrong:wrong@");
    {
      await using server = await spawnService(kvPath, { SMTP_URL: wrong, BASE_URL: BASE });
      const asked = await fetch(`${server.url}/api/verify/request`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "dee@example.org", age_ok: true }),
      });
      // The answer does not depend on delivery.
      assert.equal(asked.status, 202);
      await asked.body?.cancel();
      const failed = await server.stdout.waitFor(/"msg":"mail delivery failed".*\n/);
      // The relay's own reason, for the operator to act on; no address.
      assert.match(failed[0], /"reason":"SMTP 535/);
      assert.doesNotMatch(server.stdout.text + server.stderr.text, /dee@/);
      assert.equal(sink.mails.length, 0);
    }
    // The queued mail is still in the KV file.
    const kv = await Deno.openKv(kvPath);
    try {
      const queued = [];
      for await (const e of kv.list<{ to: string; attempts: number }>({ prefix: ["outbox"] })) {
        queued.push(e.value);
      }
      assert.equal(queued.length, 1);
      assert.equal(queued[0].to, "dee@example.org");
      assert.equal(queued[0].attempts, 1);
    } finally {
      kv.close();
    }
  });
});
