import type { Deps } from "../lib/deps.ts";
import { router } from "./_api.ts";

/** Routes of watched services and heartbeat hooks (issue 5). */
export function servicesRoutes(_deps: Deps) {
  const app = router();
  return app;
}
