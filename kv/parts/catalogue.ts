import type { AccountPart } from "../parts.ts";

/** What the catalogue area holds of an account: modules, contributor places and points (issue 4). */
export const cataloguePart: AccountPart = {
  name: "catalogue",
  export: () => Promise.resolve({}),
  erase: () => Promise.resolve({}),
};
