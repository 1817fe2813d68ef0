/**
 * The mails about an account: the outcome of an application for contributor standing and
 * the notice of a dormant account. Pure functions from data to {subject, text}.
 */
import type { MailText } from "../lib/mail.ts";

export const applicationDecisionMail = (
  outcome: "approved" | "declined",
  reason: string,
  meLink: string,
): MailText =>
  outcome === "approved"
    ? {
      subject: "Your application was approved",
      text: `Your application for contributor standing was approved. You are now a ` +
        `contributor.\n\nReason given:\n${reason}\n\n${meLink}\n`,
    }
    : {
      subject: "Your application was declined",
      text: `Your application for contributor standing was declined.\n\nReason given:\n` +
        `${reason}\n\nYou may apply again.\n\n${meLink}\n`,
    };

export const dormantNoticeMail = (meLink: string): MailText => ({
  subject: "Your account has been quiet for a year",
  text: `Nobody has signed in to your account for a year. It stays as it is; nothing ` +
    `is deleted.\n\nTo keep using it, simply sign in again. If you no longer want it, ` +
    `sign in and erase it: that removes everything held about you.\n\n` +
    `${meLink}\n`,
});
