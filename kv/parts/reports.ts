import { eraseReportMail, reportMailWanted } from "../status/reports.ts";
import type { AccountPart } from "./_part.ts";

/** What the reports area holds of an account: whether it asked for the monthly report mail. */
export const reportsPart: AccountPart = {
  name: "reports",
  sections: {
    report_mail: {
      what: "Whether you asked for the monthly uptime report by mail",
      kept: "Until you turn it off or erase the account",
    },
  },
  async export(deps, account) {
    return { report_mail: { monthly: await reportMailWanted(deps.kv, account.id) } };
  },
  async erase(deps, account) {
    await eraseReportMail(deps.kv, account.id);
    return {};
  },
};
