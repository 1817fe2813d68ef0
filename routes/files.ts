import type { Deps } from "../lib/deps.ts";
import { router } from "./_api.ts";

/** Routes of file storage and serving (issue 6). */
export function filesRoutes(_deps: Deps) {
  const app = router();
  return app;
}
