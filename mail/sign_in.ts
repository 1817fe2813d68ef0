/**
 * The mails of links and sign-ins: the sign-in and address links, the invitation, the notice
 * of a new sign-in. Pure functions from data to {subject, text}; kv/accounts/sign_in.ts queues them.
 */
import { readable } from "../lib/clock.ts";
import { roughOrigin } from "../lib/ip.ts";
import type { MailText } from "../lib/mail.ts";

/** How long a link works, in words ("20 minutes", "1 hour", "7 days"). */
export const validity = (ms: number) =>
  ms >= 86_400_000
    ? `${ms / 86_400_000} days`
    : ms >= 3_600_000
    ? `${ms / 3_600_000} hour${ms === 3_600_000 ? "" : "s"}`
    : `${ms / 60_000} minutes`;

/** The text of a mailed link, given its address and how long it works. */
export type LinkMail = (url: string, validFor: string) => MailText;

export const signInMail = (purpose: "login" | "address"): LinkMail => (url, validFor) =>
  purpose === "login"
    ? {
      subject: "Your sign-in link",
      text: `Open this link to sign in. It works once, for ${validFor}:\n\n${url}\n\n` +
        `If you did not ask for it, ignore this mail: nothing happens without the link.\n`,
    }
    : {
      subject: "Confirm your address",
      text: `Open this link to confirm your address. It works once, for ${validFor}:\n\n` +
        `${url}\n\nIf you did not ask for it, ignore this mail.\n`,
    };

export const inviteMail = (inviter: string, message: string): LinkMail => (url, validFor) => ({
  subject: `${inviter} invites you to the community catalogue`,
  text: `${inviter} invites you to join the community catalogue.\n\n` +
    (message ? `Their message:\n${message}\n\n` : "") +
    `Open this link to accept; it creates your account and signs you in. It works once, ` +
    `for ${validFor}:\n\n${url}\n\nIf you do not want to join, ignore this mail.\n`,
});

const BROWSERS: [RegExp, string][] = [
  [/Edg\//, "Edge"],
  [/OPR\/|Opera/, "Opera"],
  [/Firefox\//, "Firefox"],
  [/Chrome\/|Chromium\//, "Chrome"],
  [/Safari\//, "Safari"],
  [/curl\//i, "curl"],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, "Android"],
  [/iPhone|iPad|iOS/, "iOS"],
  [/Windows/, "Windows"],
  [/Mac OS X|Macintosh/, "macOS"],
  [/Linux|X11/, "Linux"],
];

/**
 * " (Firefox on Linux)" from a User-Agent: only names from fixed lists, because the header
 * is the client's free text and must not put a stranger's words into a security mail.
 */
function deviceKind(agent: string): string {
  const browser = BROWSERS.find(([re]) => re.test(agent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(agent))?.[1];
  if (!browser && !system) return "";
  return ` (${[browser ?? "a browser", system].filter(Boolean).join(" on ")})`;
}

/** To an existing account when a link signs a device in. */
export const newSignInMail = (
  at: number,
  address: string,
  agent: string,
  devicesUrl: string,
): MailText => ({
  subject: "New sign-in to your account",
  text: `A device signed in to your account at ${readable(at)}, from ` +
    `${roughOrigin(address)}${deviceKind(agent)}.\n\n` +
    `If this was not you, end that session on your devices page and sign in again:\n` +
    `${devicesUrl}\n`,
});
