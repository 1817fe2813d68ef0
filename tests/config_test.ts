import assert from "node:assert/strict";
import { ConfigError, loadConfig, productionRefusal } from "../lib/config.ts";
import { ROOT, taskArgs } from "./_server.ts";

const refused = (env: Record<string, string>, variable: string) => {
  assert.throws(() => loadConfig(env), (err: unknown) => {
    assert.ok(err instanceof ConfigError, String(err));
    assert.match(err.message, new RegExp(`\\b${variable}\\b`), err.message);
    return true;
  }, JSON.stringify(env));
};

Deno.test("config: defaults of CONTRACT.md", () => {
  const c = loadConfig({ KV_PATH: ":memory:" });
  assert.equal(c.port, 8000);
  assert.equal(c.hostname, "0.0.0.0");
  assert.equal(c.baseUrl, "http://localhost:8000");
  assert.equal(c.mailFrom, "noreply@localhost");
  assert.equal(c.trustProxy, false);
  assert.equal(c.serviceToken, undefined);
  assert.equal(c.smtpUrl, undefined);
  assert.equal(c.mailApiUrl, undefined);
  assert.equal(c.teamInbox, undefined);
  assert.equal(c.machineSnapshot, undefined);
  assert.equal(c.catalogueFile, undefined);
  assert.equal(loadConfig({}).kvPath, "./data/kv.sqlite3");
  // Empty values count as unset.
  assert.equal(loadConfig({ PORT: "", SERVICE_TOKEN: "" }).port, 8000);
  assert.equal(loadConfig({ SERVICE_TOKEN: "" }).serviceToken, undefined);
});

Deno.test("config: BASE_URL follows a loopback HOSTNAME, else localhost", () => {
  const base = (env: Record<string, string>) => loadConfig(env).baseUrl;
  assert.equal(base({ HOSTNAME: "127.0.0.1", PORT: "9001" }), "http://127.0.0.1:9001");
  assert.equal(base({ HOSTNAME: "127.0.0.2" }), "http://127.0.0.2:8000");
  assert.equal(base({ HOSTNAME: "::1", PORT: "9001" }), "http://[::1]:9001");
  assert.equal(base({ HOSTNAME: "localhost" }), "http://localhost:8000");
  // Every address, or a public one: the person browses by a name this process cannot know.
  assert.equal(base({ HOSTNAME: "0.0.0.0" }), "http://localhost:8000");
  assert.equal(base({ HOSTNAME: "192.0.2.10" }), "http://localhost:8000");
  // An explicit BASE_URL always wins.
  assert.equal(
    base({ HOSTNAME: "127.0.0.1", BASE_URL: "https://example.org" }),
    "https://example.org",
  );
});

Deno.test("config: values are read and normalised", () => {
  const c = loadConfig({
    PORT: "9001",
    HOSTNAME: "127.0.0.1",
    KV_PATH: "/tmp/x.sqlite3",
    BASE_URL: "https://example.org/",
    SMTP_URL: "smtps://u:p@mail.example.org:465",
    MAIL_FROM: "Team@Example.org",
    TEAM_INBOX: "team@example.org",
    REPORT_INBOX: "reports@example.org",
    SERVICE_TOKEN: "s3cret",
    TRUST_PROXY: "1",
    MACHINE_SNAPSHOT: "/tmp/m.json",
    CATALOGUE_FILE: "/tmp/c.json",
  });
  assert.equal(c.port, 9001);
  assert.equal(c.hostname, "127.0.0.1");
  assert.equal(c.kvPath, "/tmp/x.sqlite3");
  assert.equal(c.baseUrl, "https://example.org");
  assert.equal(c.smtpUrl, "smtps://u:p@mail.example.org:465");
  assert.equal(c.serviceToken, "s3cret");
  assert.equal(c.trustProxy, true);
  assert.equal(loadConfig({ PORT: "9001" }).baseUrl, "http://localhost:9001");
  assert.equal(loadConfig({ TRUST_PROXY: "0" }).trustProxy, false);
  // The default sender can be set explicitly, and a display name is allowed.
  assert.equal(loadConfig({ MAIL_FROM: "noreply@localhost" }).mailFrom, "noreply@localhost");
  assert.equal(
    loadConfig({ MAIL_FROM: "Catalogue <noreply@example.org>" }).mailFrom,
    "Catalogue <noreply@example.org>",
  );
  const api = loadConfig({ MAIL_API_URL: "https://api.example.org/emails", MAIL_API_KEY: "k" });
  assert.equal(api.mailApiUrl, "https://api.example.org/emails");
  assert.equal(api.mailApiKey, "k");
});

Deno.test("config: a bad value names its variable", () => {
  refused({ PORT: "abc" }, "PORT");
  refused({ PORT: "70000" }, "PORT");
  refused({ PORT: "-1" }, "PORT");
  refused({ PORT: "80.5" }, "PORT");
  refused({ BASE_URL: "example.org" }, "BASE_URL");
  refused({ BASE_URL: "ftp://example.org" }, "BASE_URL");
  refused({ SMTP_URL: "http://mail.example.org" }, "SMTP_URL");
  refused({ SMTP_URL: "not a url" }, "SMTP_URL");
  refused({ MAIL_API_URL: "mail.example.org" }, "MAIL_API_URL");
  refused({ MAIL_API_URL: "https://api.example.org" }, "MAIL_API_KEY");
  refused({ MAIL_FROM: "nobody" }, "MAIL_FROM");
  refused({ MAIL_FROM: "a@b.org\r\nBcc: c@d.org" }, "MAIL_FROM");
  refused({ MAIL_FROM: "Team <a@b.org>\nX: y" }, "MAIL_FROM");
  refused({ TEAM_INBOX: "a@b@c" }, "TEAM_INBOX");
  refused({ REPORT_INBOX: "x" }, "REPORT_INBOX");
  refused({ TRUST_PROXY: "yes" }, "TRUST_PROXY");
});

/** A start that must be refused, as `deno task start` runs it; answers its exit code and output. */
async function startRefused(env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: await taskArgs("start"),
    cwd: ROOT,
    env: { KV_PATH: ":memory:", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("config: a bad value stops start-up with a message naming the variable", async () => {
  const out = await startRefused({ PORT: "not-a-port" });
  assert.equal(out.code, 1);
  assert.match(out.stderr, /PORT/);
  assert.doesNotMatch(out.stdout, /listening/);
});

Deno.test("config: production needs BASE_URL and a mail transport", () => {
  const env = (e: Record<string, string>) => ({ config: loadConfig(e), env: e });
  const check = (e: Record<string, string>, deploy: boolean) => {
    const { config, env: raw } = env(e);
    return productionRefusal(config, raw, deploy);
  };
  // Local and loopback: printed mail is fine.
  assert.equal(check({}, false), null);
  for (
    const base of [
      "http://localhost:8000",
      "http://127.0.0.1",
      "http://[::1]:8000",
      "http://a.localhost",
    ]
  ) {
    assert.equal(check({ BASE_URL: base }, false), null, base);
  }
  // A public BASE_URL without mail: refused, naming the variable.
  assert.match(check({ BASE_URL: "https://catalogue.example.org" }, false)!, /^SMTP_URL/);
  assert.equal(
    check(
      { BASE_URL: "https://catalogue.example.org", SMTP_URL: "smtp://relay.example:25" },
      false,
    ),
    null,
  );
  assert.equal(
    check({
      BASE_URL: "https://catalogue.example.org",
      MAIL_API_URL: "https://mail.example/send",
      MAIL_API_KEY: "k",
    }, false),
    null,
  );
  // The test clock: fine on loopback, refused in production whatever else is set.
  const clock = { TEST_CLOCK_FILE: "/tmp/offset" };
  assert.equal(check({ ...clock, BASE_URL: "http://127.0.0.1" }, false), null);
  assert.match(
    check({ ...clock, BASE_URL: "https://catalogue.example.org", SMTP_URL: "smtp://r:25" }, false)!,
    /^TEST_CLOCK_FILE: for tests only/,
  );
  assert.match(
    check({ ...clock, BASE_URL: "http://localhost", SMTP_URL: "smtp://r:25" }, true)!,
    /^TEST_CLOCK_FILE/,
  );
  // On Deno Deploy: BASE_URL first, then mail, even for a loopback address.
  assert.match(check({ SMTP_URL: "smtp://relay.example:25" }, true)!, /^BASE_URL/);
  assert.match(check({ BASE_URL: "http://localhost:8000" }, true)!, /^SMTP_URL/);
});

Deno.test("config: the server refuses to start with a public BASE_URL and no mail", async () => {
  const out = await startRefused({
    PORT: "0",
    BASE_URL: "https://catalogue.example.org",
    SMTP_URL: "",
    MAIL_API_URL: "",
  });
  assert.equal(out.code, 1);
  assert.match(out.stderr, /SMTP_URL/);
  assert.doesNotMatch(out.stdout, /listening/);
});
