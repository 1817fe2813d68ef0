/**
 * A local SMTP relay on 127.0.0.1 for end-to-end and browser tests: the real server mails
 * through nodemailer to it, and tests wait for the mails it received.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "./_dev_deps.ts";
import type { Certs } from "./_servers.ts";

export interface Received {
  from: string;
  to: string;
  subject: string;
  text: string;
  /** Whether the session had been upgraded with STARTTLS when the mail was sent. */
  secure?: boolean;
  /** The Message-ID header as sent. */
  messageId?: string;
  /** When it arrived (this process's clock). */
  at?: number;
}

export interface Sink extends AsyncDisposable {
  url: string;
  mails: Received[];
  /** Waits for the n-th mail (from 1) to an address. */
  mail(to: string, n?: number): Promise<Received>;
  /** Credentials the relay was given, for the AUTH test. */
  logins: { user: string; pass: string }[];
  /** While true, every recipient is refused with 451 (try again later). */
  refusing: boolean;
  /**
   * Mails it accepts are kept, but their answer waits while this says so (a relay that hangs
   * after the data: the sender does not know it was delivered).
   */
  holding: (mail: Received) => boolean;
}

export function waiter(mails: Received[]) {
  return async (to: string, n = 1) => {
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      const got = mails.filter((m) => m.to === to);
      if (got.length >= n) return got[n - 1];
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no mail #${n} to ${to} within 20 s`);
  };
}

/** Undoes quoted-printable (soft line breaks, =XX), which nodemailer uses for long lines. */
function decodeQp(s: string): string {
  const bytes = s.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h) => `%${h}`);
  return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, "%25"));
}

/** Undoes RFC 2047 encoded words (`=?UTF-8?Q?...?=`, `?B?`), as a mail reader shows a subject. */
export function decodeHeader(value: string): string {
  return value
    .replace(/(\?=)\s+(?==\?)/g, "$1") // white space between encoded words is not text
    .replace(
      /=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g,
      (_, charset: string, enc: string, text: string) => {
        const bytes = enc.toUpperCase() === "B"
          ? Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
          : Uint8Array.from(
            text.replace(/_/g, " ").replace(
              /=([0-9A-F]{2})|(.)/gi,
              (_m, h, c) => h ? String.fromCharCode(parseInt(h, 16)) : c,
            ),
            (c) => c.charCodeAt(0),
          );
        return new TextDecoder(charset).decode(bytes);
      },
    );
}

function parseMessage(raw: string, envelope: { from: string; to: string }): Received {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0) headers.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
  }
  let body = rest.join("\n\n");
  if (/quoted-printable/i.test(headers.get("content-transfer-encoding") ?? "")) {
    body = decodeQp(body);
  }
  return {
    from: envelope.from,
    to: envelope.to,
    subject: decodeHeader(headers.get("subject") ?? ""),
    messageId: headers.get("message-id"),
    text: body.replace(/\r\n/g, "\n"),
  };
}

/** A local SMTP relay: plain (no STARTTLS, no AUTH), requiring AUTH, or offering STARTTLS. */
export async function smtpSink(
  opts: { auth?: { user: string; pass: string }; tls?: Certs } = {},
): Promise<Sink> {
  const mails: Received[] = [];
  const logins: Sink["logins"] = [];
  const state = { refusing: false, holding: (_m: Received) => false };
  const options: SMTPServerOptions = {
    logger: false,
    disabledCommands: opts.tls ? ["AUTH"] : opts.auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    ...(opts.tls ? { secure: false, key: opts.tls.key, cert: opts.tls.cert } : {}),
    authOptional: !opts.auth,
    allowInsecureAuth: true,
    onAuth(auth, _session, cb) {
      logins.push({ user: auth.username ?? "", pass: auth.password ?? "" });
      if (auth.username === opts.auth?.user && auth.password === opts.auth?.pass) {
        cb(null, { user: auth.username });
      } else cb(new Error("invalid credentials"));
    },
    onRcptTo(_address, _session, cb) {
      if (!state.refusing) return cb();
      cb(Object.assign(new Error("mailbox busy, try again later"), { responseCode: 451 }));
    },
    onData(stream, session, cb) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (c: Uint8Array) => chunks.push(c));
      stream.on("end", () => {
        const raw = new TextDecoder().decode(
          chunks.reduce((a, b) => new Uint8Array([...a, ...b]), new Uint8Array()),
        );
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        const got = session.envelope.rcptTo.map((rcpt) => ({
          ...parseMessage(raw, { from, to: rcpt.address }),
          secure: session.secure,
          at: Date.now(),
        }));
        mails.push(...got);
        const answer = () => got.some((m) => state.holding(m)) ? setTimeout(answer, 50) : cb();
        answer();
      });
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  const cred = opts.auth
    ? `${encodeURIComponent(opts.auth.user)}:${encodeURIComponent(opts.auth.pass)}@`
    : "";
  return {
    url: `smtp://${cred}127.0.0.1:${port}`,
    mails,
    logins,
    get refusing() {
      return state.refusing;
    },
    set refusing(v: boolean) {
      state.refusing = v;
    },
    get holding() {
      return state.holding;
    },
    set holding(v: (mail: Received) => boolean) {
      state.holding = v;
    },
    mail: waiter(mails),
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
