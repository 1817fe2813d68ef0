import type { Deps } from "../lib/deps.ts";
import { router } from "./_api.ts";
import { actorRoutes } from "./actors.ts";
import { applicationRoutes } from "./applications.ts";
import { exportRoutes } from "./export.ts";
import { inviteRoutes } from "./invites.ts";
import { journalRoutes } from "./journal.ts";
import { profileRoutes } from "./profile.ts";
import { searchRoutes } from "./search.ts";

/** Routes of profile, avatar, journal, public profiles, search, applications, invitations, export, erasure (issue 3). */
export function accountsRoutes(deps: Deps) {
  const app = router();
  app.route("/", profileRoutes(deps));
  app.route("/", journalRoutes(deps));
  app.route("/", searchRoutes(deps));
  app.route("/", applicationRoutes(deps));
  app.route("/", inviteRoutes(deps));
  app.route("/", actorRoutes(deps));
  app.route("/", exportRoutes(deps));
  return app;
}
