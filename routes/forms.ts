import type { Deps } from "../lib/deps.ts";
import { router } from "./_api.ts";
import { contributionRoutes } from "./contributions.ts";
import { requestRoutes } from "./requests.ts";

/** Routes of public forms and the team workflow (issue 7). */
export function formsRoutes(deps: Deps) {
  const app = router();
  app.route("/", requestRoutes(deps));
  app.route("/", contributionRoutes(deps));
  return app;
}
