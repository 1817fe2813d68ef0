import { eraseWindows, listWindows } from "../service/maintenance.ts";
import { windowView } from "../service/windows.ts";
import { eraseFormTokens } from "../store/form_tokens.ts";
import type { AccountPart } from "./_part.ts";

/** What the maintenance area holds of an account: its maintenance windows. */
export const maintenancePart: AccountPart = {
  name: "maintenance",
  sections: {
    maintenance_windows: {
      what: "Your maintenance windows: their names, the services, groups and places they " +
        "cover, and when they run",
      kept: "Until you delete them or erase the account",
    },
  },
  async export(deps, account) {
    const now = deps.clock.now();
    const windows = await listWindows(deps.kv, account.id);
    return { maintenance_windows: windows.map((w) => windowView(w, now)) };
  },
  async erase(deps, account) {
    await eraseWindows(deps.kv, account.id);
    await eraseFormTokens(deps.kv, account.id);
    return {};
  },
};
