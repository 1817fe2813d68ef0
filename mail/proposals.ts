/**
 * The mails of proposals: the confirmation link, the team's notice, the decisions. Pure
 * functions from data to {subject, text}; kv/catalogue/proposals.ts and kv/catalogue/publication.ts queue them.
 */
import type { MailText } from "../lib/mail.ts";
import type { LinkMail } from "./sign_in.ts";

interface Named {
  id: number;
  title: string;
}

/** To the submitter of a proposal sent without signing in: the confirmation link. */
export const proposalConfirmMail = (p: Named, statusLink: string): LinkMail => (url, validFor) => ({
  subject: `Confirm your proposal #${p.id}`,
  text: `Open this link to confirm your proposal "${p.title}". ` +
    `It works once, for ${validFor}; unconfirmed proposals are deleted after that:\n\n` +
    `${url}\n\nFollow your proposal here:\n\n${statusLink}\n\n` +
    `If you did not send it, ignore this mail: the proposal is then deleted.\n`,
});

/** To the team inbox when a proposal is confirmed. */
export const proposalTeamNotice = (
  p: Named & { name: string; area: string },
  baseUrl: string,
): MailText => ({
  subject: `Proposal #${p.id} confirmed: ${p.title}`,
  text: `A proposal is confirmed and waits for review.\n\nTitle: ${p.title}\n` +
    `Under the name: ${p.name}\nArea: ${p.area}\n\n` +
    `Review it on the team's page: ${baseUrl}/team/proposals/${p.id}\n`,
});

/** To the submitter when the team admits or rejects. */
export const proposalDecisionMail = (
  p: Named,
  what: string,
  reason: string,
  statusLink: string,
): MailText => ({
  subject: `Your proposal #${p.id} is ${what}`,
  text: `Your proposal "${p.title}" is ${what}.\n\nReason: ${reason}\n\n` +
    `Status: ${statusLink}\n`,
});

const reasonLine = (reason: string) => reason ? `\nReason: ${reason}\n` : "";

/** To the submitter when the owner publishes. */
export const proposalPublishedMail = (p: Named, reason: string, moduleLink: string) => ({
  subject: `Your proposal #${p.id} is published`,
  text: `Your proposal "${p.title}" is published in the catalogue:\n\n` +
    `${moduleLink}\n${reasonLine(reason)}`,
});

/** To the submitter when the owner takes a published proposal back. */
export const proposalTakenBackMail = (p: Named, reason: string, statusLink: string) => ({
  subject: `Your proposal #${p.id} is taken back from the catalogue`,
  text: `Your proposal "${p.title}" is no longer published; it is admitted again and ` +
    `may be published later.\n${reasonLine(reason)}\nStatus: ${statusLink}\n`,
});
