/** The alert mails of watched services. Pure functions from data to {subject, text}. */
import { iso } from "../lib/clock.ts";
import type { MailText } from "../lib/mail.ts";

interface Watched {
  name: string;
  kind: string;
  /** Failed checks in a row, and how many it takes to alert. */
  streak?: number;
  threshold?: number;
  /** Reminders: hours between them, and since when the service is off. */
  remind?: number | null;
  since?: number;
}

/** Control characters would break the subject line. */
const plain = (name: string) => name.replace(/\p{Cc}+/gu, " ");

const footer = (meLink: string) => [
  "",
  `The service: ${meLink}`,
  "Set alerts to false on the service to stop these mails.",
];

export const serviceAlertMail = (
  s: Watched,
  state: "off" | "back" | "reminder",
  status: string,
  at: number,
  meLink: string,
): MailText => {
  const word = state === "off" ? "is off" : state === "back" ? "is back" : "is still off";
  const name = plain(s.name);
  return {
    subject: `Watched service "${name}" ${word}`,
    text: [
      `Your watched service "${name}" ${word} (${iso(at)}).`,
      `Last result: ${status}`,
      ...(state === "off" && s.kind !== "webhook"
        ? [`Failed checks in a row: ${s.streak ?? 0} (alerting after ${s.threshold ?? 1}).`]
        : []),
      ...(state === "reminder" && s.since
        ? [
          `Off since ${iso(s.since)}. This reminder repeats every ${s.remind} hour` +
          `${s.remind === 1 ? "" : "s"} while it stays off; one mail comes when it is back.`,
        ]
        : []),
      ...footer(meLink),
    ].join("\n"),
  };
};

export const certificateExpiryMail = (
  s: Watched,
  days: number,
  expires: number,
  meLink: string,
): MailText => {
  const name = plain(s.name);
  const left = days <= 1 ? "1 day" : `${days} days`;
  return {
    subject: `Certificate of "${name}" expires within ${left}`,
    text: [
      `The certificate checked by your watched service "${name}" expires ${iso(expires)}` +
      ` (within ${left}).`,
      "Renew it before then; this alert comes once at 14, 7 and 1 days left.",
      ...footer(meLink),
    ].join("\n"),
  };
};
