/** The alert mails of watched services. Pure functions from data to {subject, text}. */
import { iso } from "../lib/clock.ts";
import type { MailText } from "../lib/mail.ts";

export const serviceAlertMail = (
  serviceName: string,
  state: "off" | "back",
  status: string,
  at: number,
  meLink: string,
): MailText => {
  const word = state === "off" ? "is off" : "is back";
  const name = serviceName.replace(/\p{Cc}+/gu, " ");
  return {
    subject: `Watched service "${name}" ${word}`,
    text: [
      `Your watched service "${name}" ${word} (${iso(at)}).`,
      `Last result: ${status}`,
      "",
      `Your services: ${meLink}`,
      "Set alerts to false on the service to stop these mails.",
    ].join("\n"),
  };
};
