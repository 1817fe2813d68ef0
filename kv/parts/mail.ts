import { iso } from "../../lib/clock.ts";
import { linksTo } from "../accounts/links.ts";
import { queuedAbout } from "../alerts/outbox.ts";
import type { AccountPart } from "./_part.ts";
import { countersOf, dropCounters, RULES } from "../store/rate_limit.ts";
import { RECEIPTS } from "../forms/requests.ts";

/** Every rule whose counters may be held under the account's id or address. */
const ACCOUNT_RULES = [...Object.values(RULES), RECEIPTS];

const who = (account: { id: number; email: string }) => [String(account.id), account.email];

/** Secrets a mailed link carries (sign-in token, status key) are not repeated in the export. */
const withoutSecrets = (text: string) =>
  text.replace(/([?&](?:verify|key|token)=)[A-Za-z0-9_-]+/g, "$1(withheld)");

/**
 * What the mail and limits machinery holds about an account: live mailed links to its
 * address, mail still queued to or about it, and the rate counters kept under its id or address.
 * Erasure drops the counters here; links and queued mail go last in kv/parts/erasure.ts (after the
 * account record, so a link opened meanwhile cannot outlive it).
 */
export const mailPart: AccountPart = {
  name: "mail",
  sections: {
    links: {
      what: "Mailed links to your address not yet used (purpose, when made, until when; the " +
        "link's secret is stored only as a hash)",
      kept: "Until used or replaced; sign-in 20 minutes, address change one hour, proposal and " +
        "invitation seven days; the record goes an hour after expiry",
    },
    mail: {
      what: "Mail still waiting for delivery that goes to your address or names it (a team " +
        "notice about your request, say); link secrets withheld",
      kept: "Until delivered, at most eight days",
    },
    limits: {
      what: "Rate counters kept under your account or address (rule, window end, count)",
      kept: "One hour (the counter's window), then swept",
    },
  },
  async export({ kv, clock }, account) {
    const links = (await linksTo(kv, account.email)).map((l) => ({
      purpose: l.purpose,
      created: iso(l.created),
      expires: iso(l.expires),
      invitation: l.invite ?? null,
      name: l.name ?? null,
    }));
    const mail = (await queuedAbout(kv, account.email)).map((m) => ({
      id: m.id,
      to: m.to,
      subject: m.subject,
      text: withoutSecrets(m.text),
      queued: iso(m.created),
      attempts: m.attempts,
      next_try: iso(m.next),
    }));
    const limits = (await countersOf(kv, ACCOUNT_RULES, who(account), clock.now()))
      .map((c) => ({ rule: c.rule, window_end: iso(c.window_end), count: c.count }));
    return { links, mail, limits };
  },
  async erase({ kv, clock }, account) {
    await dropCounters(kv, ACCOUNT_RULES, who(account), clock.now());
    return {};
  },
};
