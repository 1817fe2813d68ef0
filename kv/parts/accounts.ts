import type { AccountPart } from "../parts.ts";

/** What the accounts area holds of an account: profile, avatar, journal, applications, invitations (issue 3). */
export const accountsPart: AccountPart = {
  name: "accounts",
  export: () => Promise.resolve({}),
  erase: () => Promise.resolve({}),
};
