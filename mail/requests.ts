/**
 * The mails of contact requests and reports: the receipt to the sender, the copy to the
 * team's (or reports') inbox. Pure functions from data to {subject, text}.
 */
import { readable } from "../lib/clock.ts";
import type { MailText } from "../lib/mail.ts";

interface RequestData {
  id: number;
  kind: string;
  name: string;
  email: string;
  org?: string | null;
  module?: string | null;
  text: string;
}

export const requestReceiptMail = (r: RequestData, at: number): MailText => ({
  subject: `We received your message (#${r.id})`,
  text: `Hello ${r.name},\n\nwe received your message (${r.kind}, number ${r.id}) ` +
    `on ${readable(at)} and will answer at this address.\n\n` +
    `If you did not send it, ignore this mail.\n`,
});

export const requestTeamMail = (r: RequestData, report: boolean, baseUrl: string): MailText => {
  const moduleLine = r.module
    ? `Module: ${r.module}\n${baseUrl}/modules/${encodeURIComponent(r.module)}\n`
    : "";
  return {
    subject: `${report ? "Report" : "Request"} #${r.id} (${r.kind}) from ${r.name}`,
    text: `Kind: ${r.kind}\nFrom: ${r.name} <${r.email}>\n` +
      (r.org ? `Organisation: ${r.org}\n` : "") + moduleLine +
      `\n${r.text}\n\nMark it handled on the team's page: ${baseUrl}/team/requests\n`,
  };
};
