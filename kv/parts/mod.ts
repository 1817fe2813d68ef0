import { accountsPart } from "./accounts.ts";
import { cataloguePart } from "./catalogue.ts";
import { filesPart } from "./files.ts";
import { formsPart } from "./forms.ts";
import { mailPart } from "./mail.ts";
import { servicesPart } from "./services.ts";
import { statusPart } from "./status.ts";
import { maintenancePart } from "./maintenance.ts";
import { alertsPart } from "./alerts.ts";
import { signInMethodsPart } from "./sign_in_methods.ts";
import { apiKeysPart } from "./api_keys.ts";
import { pingKeysPart } from "./ping_keys.ts";
import { reportsPart } from "./reports.ts";
import { incidentsPart } from "./incidents.ts";

/**
 * Each area of the service that holds data about an account says here what it exports,
 * erases, counts and does after a mailed link is opened. The export, erasure, team
 * listing and sign-in code walk this list, so a new area plugs in without touching them.
 */

export type { AccountPart, ErasureCounts, ErasureDecisions, SectionInfo } from "./_part.ts";
import type { AccountPart } from "./_part.ts";

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
