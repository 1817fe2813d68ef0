import type { Deps } from "../lib/deps.ts";
import { router } from "./_api.ts";

/** Routes of public forms and the team workflow (issue 7). */
export function formsRoutes(_deps: Deps) {
  const app = router();
  return app;
}
