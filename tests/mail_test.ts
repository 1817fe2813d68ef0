import assert from "node:assert/strict";
import { SMTPServer } from "./_dev_deps.ts";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../lib/config.ts";
import { apiMailer, createMailer, stdoutMailer } from "../lib/mail.ts";

const mail = {
  to: "ada@example.org",
  subject: "Your sign-in link",
  text: "Open this link:\n\nhttp://test.local/me?verify=abc\n",
};

Deno.test("mail: the HTTP mail API gets {from, to, subject, text} with the bearer key", async () => {
  const seen: { auth: string | null; type: string | null; body: unknown }[] = [];
  let status = 200;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      seen.push({
        auth: req.headers.get("authorization"),
        type: req.headers.get("content-type"),
        body: await req.json(),
      });
      return new Response(JSON.stringify({ id: "x" }), { status });
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/emails`;
  const m = apiMailer(url, "key-123", "noreply@example.org");
  assert.equal(m.kind, "http-api");
  await m.send(mail);
  assert.deepEqual(seen[0], {
    auth: "Bearer key-123",
    type: "application/json",
    body: { from: "noreply@example.org", ...mail },
  });
  // A refusal throws (the outbox keeps the mail), and the error names no address.
  status = 503;
  const err = await m.send(mail).then(() => null, (e) => e);
  assert.ok(err instanceof Error);
  assert.match(err.message, /503/);
  assert.ok(!err.message.includes("ada@example.org"));
});

Deno.test("mail: without a transport each mail is printed", async () => {
  const lines: string[] = [];
  const saved = console.log;
  console.log = (...a: unknown[]) => void lines.push(a.join(" "));
  try {
    await stdoutMailer().send(mail);
  } finally {
    console.log = saved;
  }
  const out = lines.join("\n");
  assert.match(out, /To: ada@example\.org/);
  assert.match(out, /Subject: Your sign-in link/);
  assert.match(out, /^http:\/\/test\.local\/me\?verify=abc$/m);
});

Deno.test("mail: the transport follows the configuration", () => {
  assert.equal(createMailer(loadConfig({})).kind, "stdout");
  assert.equal(createMailer(loadConfig({ SMTP_URL: "smtp://127.0.0.1:2525" })).kind, "smtp");
  assert.equal(createMailer(loadConfig({ SMTP_URL: "smtps://127.0.0.1:465" })).kind, "smtps");
  const api = loadConfig({ MAIL_API_URL: "https://127.0.0.1/e", MAIL_API_KEY: "k" });
  assert.equal(createMailer(api).kind, "http-api");
});

Deno.test("mail: a plain local relay with neither STARTTLS nor AUTH works", async () => {
  const received: { from: string; to: string[]; data: string }[] = [];
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    onData(stream, session, done) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (c: Uint8Array) => chunks.push(c));
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          data: new TextDecoder().decode(
            new Uint8Array(chunks.flatMap((c) => [...c])),
          ),
        });
        done();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  try {
    const port = (server.server.address() as AddressInfo).port;
    const m = createMailer(
      loadConfig({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: "noreply@example.org" }),
    );
    await m.send(mail);
    assert.equal(received.length, 1);
    assert.equal(received[0].from, "noreply@example.org");
    assert.deepEqual(received[0].to, ["ada@example.org"]);
    assert.match(received[0].data, /Subject: Your sign-in link/);
    assert.match(received[0].data, /\r\nhttp:\/\/test\.local\/me\?verify=abc\r\n/);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

Deno.test("mails: times as people read them, a page to stop alerts, no API words", async () => {
  const { serviceAlertMail, groupAlertMail, certificateExpiryMail } = await import(
    "../mail/services.ts"
  );
  const at = Date.UTC(2026, 10, 27, 11, 31, 10, 553);
  const link = "https://example.org/me/services/7";
  const texts = [
    serviceAlertMail({ name: "Site", kind: "url" }, "off", "HTTP 503", at, link).text,
    serviceAlertMail(
      { name: "Site", kind: "url", remind: 2, since: at },
      "reminder",
      "HTTP 503",
      at,
      link,
    ).text,
    certificateExpiryMail({ name: "Site", kind: "tls" }, 7, at, link).text,
    groupAlertMail("LAN", 3, [{
      name: "Printer",
      state: "off",
      events: [{ event: "off", at }],
      status: "no heartbeat",
    }], "https://example.org/watch").text,
  ];
  for (const text of texts) {
    assert.doesNotMatch(text, /\d{4}-\d\d-\d\dT|\.\d{3}Z/, "no machine stamp");
    assert.doesNotMatch(text, /alerts to false|set alerts/i, "no API words");
  }
  assert.match(texts[0], /\(2026-11-27 11:31 UTC\)/);
  assert.match(
    texts[0],
    /The service: https:\/\/example\.org\/me\/services\/7\nTo stop these alerts \(mail and its channels\), untick "Alert me when it goes off and comes back" on its page\./,
  );
});
