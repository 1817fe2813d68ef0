import { iso } from "../../lib/clock.ts";
import { eraseApiKeys, listApiKeys } from "../service/api_keys.ts";
import type { AccountPart } from "./_part.ts";

/** The account's keys of the Healthchecks-compatible API: that they exist, never the keys. */
export const apiKeysPart: AccountPart = {
  name: "api_keys",
  sections: {
    api_keys: {
      what: "Keys of the Healthchecks-compatible API you made: that each exists, its name, " +
        "whether it is read-only and when it was made (the key itself is stored only as a " +
        "hash and not repeated)",
      kept: "Until you revoke them or erase the account",
    },
  },
  async export(deps, account) {
    const keys = await listApiKeys(deps.kv, account.id);
    return {
      api_keys: keys.map((k) => ({
        id: k.id,
        name: k.name,
        readonly: k.readonly,
        created: iso(k.created),
        exists: true,
      })),
    };
  },
  async erase(deps, account) {
    await eraseApiKeys(deps, account.id);
    return {};
  },
};
