import { iso } from "../../lib/clock.ts";
import { erasePingKey, pingKeyEntry } from "../service/ping_keys.ts";
import type { AccountPart } from "./_part.ts";

/**
 * The account's ping key (Healthchecks' `/ping/<ping key>/<slug>`): that it exists and when it
 * was made, never the key. Listed after the services, whose erasure drops the slugs' entries
 * under the key.
 */
export const pingKeysPart: AccountPart = {
  name: "ping_keys",
  sections: {
    ping_key: {
      what: "Your ping key for Healthchecks' slug addresses: that it exists and when it was " +
        "made (the key itself is stored only as a hash and not repeated); null when none",
      kept: "Until you make a new one or erase the account",
    },
  },
  async export(deps, account) {
    const pk = (await pingKeyEntry(deps.kv, account.id)).value;
    return { ping_key: pk ? { exists: true, created: iso(pk.created) } : null };
  },
  async erase(deps, account) {
    await erasePingKey(deps.kv, account.id);
    return {};
  },
};
