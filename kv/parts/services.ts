import type { AccountPart } from "../parts.ts";

/** What the services area holds of an account: watched services (issue 5). */
export const servicesPart: AccountPart = {
  name: "services",
  export: () => Promise.resolve({}),
  erase: () => Promise.resolve({}),
};
