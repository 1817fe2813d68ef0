import { iso } from "../../lib/clock.ts";
import { dropIdentities, identitiesOf } from "../identities.ts";
import type { AccountPart } from "./_part.ts";

/**
 * What the sign-in methods hold of an account: the accounts elsewhere (identities at sign-in
 * providers) that sign it in. No provider token is kept, so there is none to export.
 */
export const signInMethodsPart: AccountPart = {
  name: "sign_in_methods",
  sections: {
    identities: {
      what: "Accounts at sign-in providers that sign you in: the provider, its id of you, the " +
        "address it gave, when added and last used (no provider token is kept)",
      kept: "Until you remove them on your sign-in methods page or erase the account",
    },
  },
  async export({ kv }, account) {
    const identities = await identitiesOf(kv, account.id);
    return {
      identities: identities.map((i) => ({
        provider: i.provider,
        subject: i.subject,
        email: i.email,
        created: iso(i.created),
        last_used: iso(i.last_used),
      })),
    };
  },
  async erase({ kv }, account) {
    await dropIdentities(kv, account.id);
    return {};
  },
};
