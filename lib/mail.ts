import type { Transporter } from "nodemailer";
import type { Config } from "./config.ts";

export interface Mail {
  to: string;
  subject: string;
  /** Plain text; links stand on lines of their own. */
  text: string;
  /**
   * The queued mail's id: its Message-ID (`<id@sender's domain>`), the same on every attempt,
   * so a copy sent again after a crash is recognised as the same mail.
   */
  id?: string;
}

/** What mail/ composes: the mail without its recipient. */
export type MailText = Omit<Mail, "to">;

/** Delivers one mail or throws; retrying is the outbox's business (kv/alerts/outbox.ts). */
export interface Mailer {
  send(mail: Mail): Promise<void>;
  /** Where mail goes, for logs and docs: never an address. */
  readonly kind: string;
}

/** The transport (docs/operations.md, "Mail"): SMTP, an HTTP mail API, or standard output. */
export function createMailer(config: Config): Mailer {
  if (config.smtpUrl) return smtpMailer(config.smtpUrl, config.mailFrom);
  if (config.mailApiUrl) return apiMailer(config.mailApiUrl, config.mailApiKey!, config.mailFrom);
  return stdoutMailer();
}

function smtpMailer(url: string, from: string): Mailer {
  const u = new URL(url);
  const secure = u.protocol === "smtps:";
  // nodemailer is loaded on the first mail, not at start, where it would weigh on every start
  // (docs/performance.md, "Start-up and the request path").
  let transport: Promise<Transporter> | null = null;
  const connect = async () => {
    const { default: nodemailer } = await import("nodemailer");
    return nodemailer.createTransport({
      host: u.hostname.replace(/^\[|\]$/g, ""),
      port: Number(u.port) || (secure ? 465 : 25),
      secure,
      // STARTTLS when the relay offers it, plain otherwise (a local relay may offer neither).
      ignoreTLS: false,
      requireTLS: false,
      auth: u.username
        ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) }
        : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
      logger: false,
      debug: false,
    });
  };
  return {
    kind: secure ? "smtps" : "smtp",
    async send(mail) {
      transport ??= connect().catch((err) => {
        transport = null;
        throw err;
      });
      await (await transport).sendMail({
        from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.id ? { messageId: messageId(mail.id, from) } : {}),
      });
    },
  };
}

/** A mail's Message-ID from its queued id, at the sender's domain. */
export function messageId(id: string, from: string): string {
  const domain = from.match(/@([A-Za-z0-9.-]+)/)?.[1] ?? "localhost";
  return `<${id}@${domain}>`;
}

export function apiMailer(url: string, key: string, from: string): Mailer {
  return {
    kind: "http-api",
    async send(mail) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "authorization": `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ from, to: mail.to, subject: mail.subject, text: mail.text }),
        signal: AbortSignal.timeout(15_000),
      });
      if (res.ok) {
        await res.body?.cancel();
        return;
      }
      // The API's own words help the operator (a bad key, an unverified sender); cut short.
      const said = (await res.text().catch(() => "")).slice(0, 300);
      throw new Error(`mail API answered ${res.status}${said ? `: ${said}` : ""}`);
    },
  };
}

/** No transport: each mail is printed, so a local operator can click it (docs/operations.md). */
export function stdoutMailer(): Mailer {
  return {
    kind: "stdout",
    send(mail) {
      console.log(printedMail(mail));
      return Promise.resolve();
    },
  };
}

/** A mail as standard output shows it: its recipient, subject and text between two markers. */
export function printedMail(mail: Mail): string {
  return `--- mail\nTo: ${mail.to}\nSubject: ${mail.subject}\n\n${mail.text}\n--- end`;
}

const ADDRESS = /[^\s<>@"'(),;:]+@[^\s<>@"'(),;:]+/g;

/**
 * Why a delivery failed, as a person can act on it: the relay's answer ("SMTP 550: 5.1.1
 * <address>: Recipient address rejected") or the connection's error code, with every address
 * replaced by `<address>` and cut to one short line, so it may go to the logs.
 */
export function relayReason(err: unknown): string {
  const e = (err ?? {}) as { code?: unknown; responseCode?: unknown; response?: unknown };
  let text: string;
  if (typeof e.responseCode === "number") {
    const said = typeof e.response === "string" ? e.response : (err as Error).message ?? "";
    text = `SMTP ${e.responseCode}: ${said}`;
  } else if (err instanceof Error) {
    const code = typeof e.code === "string" ? `${e.code}: ` : "";
    text = code + err.message;
  } else text = "unknown error";
  return text.replace(ADDRESS, "address").replace(/\s+/g, " ").trim().slice(0, 200);
}
