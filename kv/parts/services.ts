import { iso } from "../../lib/clock.ts";
import { readHistory } from "../history.ts";
import type { AccountPart } from "./_part.ts";
import { countServices, eraseServices, listServices, serviceView } from "../services.ts";

/** What the services area holds of an account: watched services, their last
 * beats and their kept history (kv/history.ts). */
export const servicesPart: AccountPart = {
  name: "services",
  sections: {
    services: {
      what: "Services you watch: settings, check, last result and last heartbeat (the " +
        "heartbeat address is stored only as a hash and not repeated)",
      kept: "Until you delete them or erase the account; only the last heartbeat is kept",
    },
  },
  async export(deps, account) {
    const now = deps.clock.now();
    const services = [];
    for (const { service, beat } of await listServices(deps.kv, account.id)) {
      const h = await readHistory(deps.kv, account.id, service.id, now);
      services.push({
        ...serviceView(service, beat, now),
        check: service.check,
        // The kept history (90 days): every state change and the per-day figures with data.
        changes: h.changes.map((c) => ({ ...c, at: iso(c.at) })),
        days: h.days.filter((d) => d.uptime !== null || d.checks > 0),
      });
    }
    return { services };
  },
  async erase(deps, account) {
    await eraseServices(deps, account.id);
    return {};
  },
  async counts(deps, account) {
    return { services: await countServices(deps.kv, account.id) };
  },
};
