import { accountsPart } from "./parts/accounts.ts";
import { cataloguePart } from "./parts/catalogue.ts";
import { filesPart } from "./parts/files.ts";
import { formsPart } from "./parts/forms.ts";
import { mailPart } from "./parts/mail.ts";
import { servicesPart } from "./parts/services.ts";
import { statusPart } from "./parts/status.ts";
import { maintenancePart } from "./parts/maintenance.ts";
import { alertsPart } from "./parts/alerts.ts";
import { signInMethodsPart } from "./parts/sign_in_methods.ts";
import { apiKeysPart } from "./parts/api_keys.ts";
import { pingKeysPart } from "./parts/ping_keys.ts";
import { reportsPart } from "./parts/reports.ts";
import { incidentsPart } from "./parts/incidents.ts";

/**
 * Each area of the service that holds data about an account says here what it exports,
 * erases, counts and does after a mailed link is opened. The export, erasure, team
 * listing and sign-in code walk this list, so a new area plugs in without touching them.
 */

export type { AccountPart, ErasureCounts, ErasureDecisions, SectionInfo } from "./parts/_part.ts";
import type { AccountPart } from "./parts/_part.ts";

export const accountParts: AccountPart[] = [
  accountsPart,
  signInMethodsPart,
  cataloguePart,
  servicesPart,
  pingKeysPart,
  statusPart,
  maintenancePart,
  reportsPart,
  incidentsPart,
  alertsPart,
  apiKeysPart,
  filesPart,
  formsPart,
  mailPart,
];
