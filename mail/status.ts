/** The mails of a status page's followers. Pure functions from data to {subject, text}. */
import { readable } from "../lib/clock.ts";
import type { MailText } from "../lib/mail.ts";

/** Control characters would break the subject line. */
const plain = (text: string) => text.replace(/\p{Cc}+/gu, " ");

const NOTE_WORDS: Record<string, string> = {
  investigating: "Investigating",
  identified: "Identified",
  resolved: "Resolved",
  note: "Note",
};

export const noteWord = (kind: string) => NOTE_WORDS[kind] ?? "Note";

const footer = (pageUrl: string, unfollowUrl: string) => [
  "",
  `The status page: ${pageUrl}`,
  "You get these mails because you follow this status page. To stop them, open:",
  unfollowUrl,
];

export const followConfirmMail = (title: string, url: string, validFor: string): MailText => ({
  subject: `Confirm following the status page "${plain(title)}"`,
  text: [
    `Someone (perhaps you) asked to follow the status page "${plain(title)}" by mail.`,
    "To confirm, open this link and press the button:",
    url,
    "",
    `The link works for ${validFor}. If you did not ask for this, ignore this mail: ` +
    "nothing is sent to you and your address is dropped after that.",
  ].join("\n"),
});

export const followServiceMail = (
  title: string,
  service: string,
  state: "off" | "back",
  at: number,
  pageUrl: string,
  unfollowUrl: string,
): MailText => {
  const word = state === "off" ? "is off" : "is back";
  return {
    subject: `${plain(title)}: "${plain(service)}" ${word}`,
    text: [
      `"${plain(service)}" on the status page "${plain(title)}" ${word} (${readable(at)}).`,
      ...footer(pageUrl, unfollowUrl),
    ].join("\n"),
  };
};

export const followNoteMail = (
  title: string,
  kind: string,
  text: string,
  at: number,
  pageUrl: string,
  unfollowUrl: string,
): MailText => ({
  subject: `${plain(title)}: ${noteWord(kind)}`,
  text: [
    `${noteWord(kind)} (${readable(at)}), on the status page "${plain(title)}":`,
    "",
    text,
    ...footer(pageUrl, unfollowUrl),
  ].join("\n"),
});

const INCIDENT_WORDS: Record<string, string> = {
  investigating: "Investigating",
  identified: "Identified",
  monitoring: "Monitoring",
  resolved: "Resolved",
};

/** An update of an incident on the status page (kv/status/incidents.ts). */
export const followIncidentMail = (
  title: string,
  incident: string,
  state: string,
  text: string,
  at: number,
  pageUrl: string,
  unfollowUrl: string,
): MailText => {
  const word = INCIDENT_WORDS[state] ?? "Update";
  return {
    subject: `${plain(title)}: ${word}: ${plain(incident)}`,
    text: [
      `${word} (${readable(at)}): "${plain(incident)}", on the status page "${plain(title)}".`,
      "",
      text,
      ...footer(pageUrl, unfollowUrl),
    ].join("\n"),
  };
};

/** Several listed services went off or came back within two minutes (kv/alerts/grouped_alerts.ts). */
export const followGroupMail = (
  title: string,
  label: string,
  services: { name: string; state: "off" | "back" }[],
  at: number,
  pageUrl: string,
  unfollowUrl: string,
): MailText => {
  const off = services.filter((s) => s.state === "off").length;
  const back = services.length - off;
  const counted = !back
    ? `${off} services off`
    : !off
    ? `${back} services back`
    : `${off} services off, ${back} back`;
  return {
    subject: `${plain(title)}: ${plain(label)}: ${counted}`,
    text: [
      `Several services on the status page "${plain(title)}" changed together ` +
      `at "${plain(label)}" (${readable(at)}):`,
      ...services.map((s) => `- "${plain(s.name)}" ${s.state === "off" ? "is off" : "is back"}`),
      ...footer(pageUrl, unfollowUrl),
    ].join("\n"),
  };
};
