/** The mail of an alert channel that stopped taking alerts. Pure: data to {subject, text}. */
import type { MailText } from "../lib/mail.ts";

const plain = (s: string) => s.replace(/\p{Cc}+/gu, " ");

/** Sent once when a channel is marked broken (every retry of an alert failed). */
export const channelBrokenMail = (
  name: string,
  kind: string,
  error: string,
  attempts: number,
  link: string,
): MailText => ({
  subject: `Alert channel "${plain(name)}" is broken`,
  text: [
    `Your ${kind} alert channel "${plain(name)}" did not take an alert in ${attempts} tries,`,
    "so it is marked broken. Alerts still go to it, and to your mail, but it may miss them.",
    "",
    `The last answer: ${plain(error)}`,
    "",
    "Check its settings, send a test from the channels page (a delivered test clears the mark),",
    "or remove it and add it again:",
    link,
  ].join("\n"),
});
