import type { Deps } from "../lib/deps.ts";
import { router } from "./_api.ts";

/** Routes of profile, avatar, journal, public profiles, search, applications, invitations, export, erasure (issue 3). */
export function accountsRoutes(_deps: Deps) {
  const app = router();
  return app;
}
