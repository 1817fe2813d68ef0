import { iso, isoOrNull } from "../../lib/clock.ts";
import { eraseGroups, groupingOf, listGroupsOf } from "../alerts/alert_groups.ts";
import type { AccountPart } from "./_part.ts";

/** What alert grouping holds of an account: its switch and the alerts waiting together. */
export const alertsPart: AccountPart = {
  name: "alerts",
  sections: {
    alert_settings: {
      what: "Whether alerts of services sharing a place or group come as one, and the off " +
        "and back alerts waiting to be sent together (the service, what it said and when)",
      kept: "The setting until you change it or erase the account; waiting alerts two " +
        "minutes, until they are sent",
    },
  },
  async export(deps, account) {
    const pending = (await listGroupsOf(deps.kv, account.id)).map((g) => ({
      ...g,
      opened: iso(g.opened),
      due: iso(g.due),
      members: g.members.map((m) => ({
        ...m,
        as: { ...m.as, since: isoOrNull(m.as.since) },
        said: m.said.map((a) => ({ ...a, at: iso(a.at) })),
      })),
    }));
    return {
      alert_settings: { grouping: await groupingOf(deps.kv, account.id), pending },
    };
  },
  async erase(deps, account) {
    await eraseGroups(deps.kv, account.id);
    return {};
  },
};
