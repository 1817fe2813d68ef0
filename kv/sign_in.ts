import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../lib/errors.ts";
import { expandIpv6 } from "../lib/ip.ts";
import type { Mail } from "../lib/mail.ts";
import { transact } from "./_atomic.ts";
import { type Account, findAccountByEmail, prepareAccount } from "./accounts.ts";
import { findLink, type Link, LINK_LIFE, type LinkPurpose, prepareLink } from "./links.ts";
import { deliver, enqueueMail } from "./outbox.ts";
import { prepareSession, type Session } from "./sessions.ts";
import { trailAppend } from "./trail.ts";

/** The page a mailed link opens (CONTRACT.md: `{BASE_URL}/me?verify=<token>`). */
export const linkUrl = (baseUrl: string, token: string) =>
  `${baseUrl}/me?verify=${encodeURIComponent(token)}`;

const minutes = (ms: number) =>
  ms >= 86_400_000
    ? `${ms / 86_400_000} days`
    : ms >= 3_600_000
    ? `${ms / 3_600_000} hour${ms === 3_600_000 ? "" : "s"}`
    : `${ms / 60_000} minutes`;

/**
 * Stores a link and queues its mail in one atomic, then delivers the mail. `compose` gets the
 * link address and the validity text and writes the mail.
 */
export async function issueLink(
  deps: Deps,
  input: Omit<Link, "created" | "expires">,
  compose: (url: string, validFor: string) => Omit<Mail, "to">,
): Promise<void> {
  const now = deps.clock.now();
  const mailId = await transact(async () => {
    const link = await prepareLink(deps.kv, input, now);
    const op = link.apply(deps.kv.atomic());
    const mail = compose(
      linkUrl(deps.config.baseUrl, link.token),
      minutes(LINK_LIFE[input.purpose]),
    );
    const id = enqueueMail(op, { ...mail, to: input.email }, now);
    return { op, result: id };
  });
  await deliver(deps, [mailId]);
}

export const signInMail = (purpose: LinkPurpose) => (url: string, validFor: string) =>
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

/** Coarse origin for the sign-in notice: the network, not the exact address. */
export function roughOrigin(addr: string): string {
  const v4 = addr.match(/^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.\d+$/i);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.x`;
  const v6 = expandIpv6(addr);
  if (v6) return `${v6.slice(0, 3).join(":")}::/48`;
  return "an unknown network";
}

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
export function deviceKind(agent: string): string {
  const browser = BROWSERS.find(([re]) => re.test(agent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(agent))?.[1];
  if (!browser && !system) return "";
  return ` (${[browser ?? "a browser", system].filter(Boolean).join(" on ")})`;
}

export interface SignedIn {
  account: Account;
  created: boolean;
  token: string;
  session: Session;
  link: Link;
}

/**
 * Completes a mailed link: consumes it, creates the account on first sign-in, opens a
 * session. One atomic with a check on the link, so two opens of one link never both win.
 */
export async function completeLink(
  deps: Deps,
  token: string,
  origin: { address: string; agent: string },
): Promise<SignedIn> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { result, mailIds } = await transact(async () => {
    const found = await findLink(kv, token, now);
    if (!found) fail(410, "this link is used, expired or unknown: request a new one");
    const link = found.entry.value;
    const op = found.consume(kv.atomic());
    const existing = await findAccountByEmail(kv, link.email);
    let account: Account;
    const mailIds: string[] = [];
    if (existing) {
      account = existing.value;
      op.check(existing);
      const agent = deviceKind(origin.agent);
      mailIds.push(enqueueMail(op, {
        to: account.email,
        subject: "New sign-in to your account",
        text: `A device signed in to your account at ${iso(now)} (UTC), from ` +
          `${roughOrigin(origin.address)}${agent}.\n\n` +
          `If this was not you, end that session under your devices and sign in again.\n`,
      }, now));
    } else {
      const fresh = await prepareAccount(kv, link.email, link.name ?? "", now);
      fresh.apply(op);
      account = fresh.account;
      const trail = await trailAppend(kv, [{
        actor: `account:${account.id}`,
        action: "account.create",
        subject: `account:${account.id}`,
      }], now);
      trail.apply(op);
    }
    const session = await prepareSession(kv, account.id, now);
    session.apply(op);
    return {
      op,
      result: {
        result: {
          account,
          created: !existing,
          token: session.token,
          session: session.session,
          link,
        },
        mailIds,
      },
    };
  });
  await deliver(deps, mailIds);
  return result;
}
