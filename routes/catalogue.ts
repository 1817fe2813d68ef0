import type { Deps } from "../lib/deps.ts";
import { router } from "./_api.ts";

/** Routes of modules, contributors, points, the published catalogue (issue 4). */
export function catalogueRoutes(_deps: Deps) {
  const app = router();
  return app;
}
