import { eraseIncidents, incidentView, listIncidents } from "../status/incidents.ts";
import type { AccountPart } from "./_part.ts";

/** What the incidents area holds of an account: its status page's incidents and updates. */
export const incidentsPart: AccountPart = {
  name: "incidents",
  sections: {
    incidents: {
      what: "The incidents of your status page: their titles, services, impact and updates",
      kept: "A year after each was opened, or until you delete it or erase the account",
    },
  },
  async export(deps, account) {
    const list = await listIncidents(deps.kv, account.id, deps.clock.now());
    return { incidents: list.map(incidentView) };
  },
  async erase(deps, account) {
    await eraseIncidents(deps.kv, account.id);
    return {};
  },
};
