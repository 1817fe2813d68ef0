import type { AccountPart } from "../parts.ts";
import { countServices, eraseServices, listServices, serviceView } from "../services.ts";

/** What the services area holds of an account: watched services and their last beats. */
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
    const services = (await listServices(deps.kv, account.id)).map(({ service, beat }) => ({
      ...serviceView(service, beat, now),
      check: service.check,
    }));
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
