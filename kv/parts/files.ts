import type { AccountPart } from "../parts.ts";

/** What the files area holds of an account: stored files (issue 6). */
export const filesPart: AccountPart = {
  name: "files",
  export: () => Promise.resolve({}),
  erase: () => Promise.resolve({}),
};
