/** The monthly uptime report mail. Pure functions from data to {subject, text}. */
import { readable } from "../lib/clock.ts";
import type { MailText } from "../lib/mail.ts";
import { durationText, uptimeText } from "../lib/report.ts";

/** Control characters would break the subject line and the layout. */
const plain = (text: string) => text.replace(/\p{Cc}+/gu, " ");

interface ReportData {
  period: string;
  rule: string;
  rows: {
    name: string;
    uptime: number | null;
    down_s: number;
    unreachable_s: number;
    maintenance_s: number;
    outages: unknown[];
    longest_outage_s: number;
  }[];
  totals: { uptime: number | null; outages: number; longest_outage_s: number };
  to: number;
}

export function monthlyReportMail(r: ReportData, link: string): MailText {
  const lines = [
    `Uptime report for ${r.period} (up to ${readable(r.to)}).`,
    "",
    `All services: ${uptimeText(r.totals.uptime)} up, ${r.totals.outages} outage${
      r.totals.outages === 1 ? "" : "s"
    }${
      r.totals.longest_outage_s ? `, the longest ${durationText(r.totals.longest_outage_s)}` : ""
    }.`,
    "",
    ...r.rows.map((x) =>
      `- ${plain(x.name)}: ${uptimeText(x.uptime)} up` +
      (x.down_s ? `, down ${durationText(x.down_s)}` : "") +
      (x.unreachable_s
        ? `, unreachable through a dependency ${durationText(x.unreachable_s)}`
        : "") +
      (x.maintenance_s ? `, maintenance ${durationText(x.maintenance_s)}` : "")
    ),
    "",
    r.rule,
    "",
    `The whole report (to print, or as CSV): ${link}`,
    "You get this mail because you asked for the monthly report. To stop it, turn it off there.",
  ];
  return { subject: `Uptime report for ${r.period}`, text: lines.join("\n") };
}
