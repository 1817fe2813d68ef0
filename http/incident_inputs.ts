import { z } from "zod";
import {
  IMPACTS,
  INCIDENT_STATES,
  MAX_AFFECTED,
  MAX_TITLE,
  MAX_UPDATE_TEXT,
} from "../kv/status/incidents.ts";
import { multiLine, oneLineField } from "./text.ts";

/**
 * The request schemas of incidents (kv/status/incidents.ts), validated by /api/me/incidents
 * (api/incidents.ts) and the status page's incident forms alike.
 */

const state = z.enum(INCIDENT_STATES).meta({
  description: "investigating, identified, monitoring or resolved (resolved closes it)",
});
const impact = z.enum(IMPACTS).meta({
  description: "none, minor, major or critical: how much the affected services are hurt",
});
const services = z.array(z.number().int().positive()).max(MAX_AFFECTED).meta({
  description: "Ids of the account's services it affects",
});

export const IncidentBody = z.object({
  title: oneLineField(MAX_TITLE).min(3),
  services: services.default([]),
  impact: impact.default("minor"),
  state: state.default("investigating"),
  text: multiLine(MAX_UPDATE_TEXT, 1).meta({ description: "The first update's words" }),
}).meta({ id: "NewIncident" });

export const IncidentUpdateBody = z.object({
  state,
  text: multiLine(MAX_UPDATE_TEXT, 1),
  title: oneLineField(MAX_TITLE).min(3).optional(),
  impact: impact.optional(),
  services: services.optional(),
}).meta({ id: "IncidentUpdateInput" });
