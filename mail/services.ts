/** The alert mails of watched services. Pure functions from data to {subject, text}. */
import { readable } from "../lib/clock.ts";
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
  'To stop these alerts (mail and its channels), untick "Alert me when it goes off and comes back" on its page.',
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
      `Your watched service "${name}" ${word} (${readable(at)}).`,
      `Last result: ${status}`,
      ...(state === "off" && s.kind !== "webhook"
        ? [`Failed checks in a row: ${s.streak ?? 0} (alerting after ${s.threshold ?? 1}).`]
        : []),
      ...(state === "reminder" && s.since
        ? [
          `Off since ${readable(s.since)}. This reminder repeats every ${s.remind} hour` +
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
      `The certificate checked by your watched service "${name}" expires ${readable(expires)}` +
      ` (within ${left}).`,
      "Renew it before then; this alert comes once at 14, 7 and 1 days left.",
      ...footer(meLink),
    ].join("\n"),
  };
};

/** One service of a grouped alert: its name, its alerts in the two minutes, its last status. */
interface GroupLine {
  name: string;
  state: "off" | "back";
  events: { event: "off" | "back"; at: number }[];
  status: string;
}

/** "3 of 4 services off", "2 of 4 services back", "2 of 4 services off, 1 back". */
function groupCount(total: number, states: ("off" | "back")[]): string {
  const off = states.filter((s) => s === "off").length;
  const back = states.length - off;
  const of = `of ${total} service${total === 1 ? "" : "s"}`;
  if (!back) return `${off} ${of} off`;
  if (!off) return `${back} ${of} back`;
  return `${off} ${of} off, ${back} back`;
}

/**
 * The follow-up of an outage: several services sharing a place (or group) went off, or came
 * back, within two minutes of each other (kv/alerts/grouped_alerts.ts). `first` names the services
 * whose off alert went at once, before these: then offs alone read "2 more services off".
 */
export const groupAlertMail = (
  label: string,
  total: number,
  lines: GroupLine[],
  servicesLink: string,
  first: string[] = [],
): MailText => {
  const where = plain(label);
  const list = (state: "off" | "back") =>
    lines.filter((l) => l.state === state).map((l) =>
      `- "${plain(l.name)}": ` +
      l.events.map((e) => `${e.event} ${readable(e.at)}`).join(", ") + `. Last result: ${l.status}`
    );
  const off = list("off");
  const back = list("back");
  const more = first.length > 0 && back.length === 0;
  const named = first.map((n) => `"${plain(n)}"`).join(", ");
  return {
    subject: more
      ? `${where}: ${off.length} more service${off.length === 1 ? "" : "s"} off`
      : `${where}: ${groupCount(total, lines.map((l) => l.state))}`,
    text: [
      more
        ? `After ${named} (alerted at once), ${off.length} more of your ${total} watched ` +
          `services at "${where}" went off within two minutes: perhaps one outage of the ` +
          "network or machine they share."
        : `${lines.length} of your ${total} watched services at "${where}" changed within ` +
          "two minutes of each other: perhaps one outage of the network or machine they share.",
      ...(off.length ? ["", "Off:", ...off] : []),
      ...(back.length ? ["", "Back:", ...back] : []),
      "",
      `Your services: ${servicesLink}`,
      "The first alert of an outage goes out at once; the alerts of services sharing its " +
      "place or group that follow within two minutes come together like this. Turn that off " +
      "on the alert channels page; to stop a service's alerts, untick \"Alert me when it goes off " +
      'and comes back" on its page.',
    ].join("\n"),
  };
};
