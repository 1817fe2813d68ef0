import type { AccountPart } from "../parts.ts";

/** What the forms area holds of an account: requests and proposals (issue 7). */
export const formsPart: AccountPart = {
  name: "forms",
  export: () => Promise.resolve({}),
  erase: () => Promise.resolve({}),
};
