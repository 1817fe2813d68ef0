import { iso, isoOrNull } from "../../lib/clock.ts";
import { dropIdentities, identitiesOf } from "../accounts/identities.ts";
import { dropPasskeys, passkeysOf } from "../accounts/passkeys.ts";
import type { AccountPart } from "./_part.ts";

/**
 * What the sign-in methods hold of an account: the accounts elsewhere (identities at sign-in
 * providers) and the passkeys that sign it in. No provider token is kept; a passkey's public
 * key is left out of the export (it is no secret, but of no use to a person either).
 */
export const signInMethodsPart: AccountPart = {
  name: "sign_in_methods",
  sections: {
    identities: {
      what: "Accounts at sign-in providers that sign you in: the provider, its id of you, the " +
        "address it gave, when added and last used (no provider token is kept)",
      kept: "Until you remove them on your sign-in methods page or erase the account",
    },
    passkeys: {
      what: "Your passkeys: name, when added and last used, whether synced and backed up " +
        "(this site holds only their public keys; the private keys never leave your devices)",
      kept: "Until you remove them on your sign-in methods page or erase the account",
    },
  },
  async export({ kv }, account) {
    const identities = await identitiesOf(kv, account.id);
    const passkeys = await passkeysOf(kv, account.id);
    return {
      passkeys: passkeys.map((p) => ({
        name: p.name,
        created: iso(p.created),
        last_used: isoOrNull(p.last_used),
        synced: p.device_type === "multiDevice",
        backed_up: p.backed_up,
      })),
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
    await dropPasskeys(kv, account.id);
    return {};
  },
};
