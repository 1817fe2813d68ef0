/**
 * Watched services (/me/services): the list with state, last result and last beat; adding one
 * of every kind; a heartbeat's hook address shown once (with a copy button and a ready cron
 * line). The same functions as /api/me/services (kv/service/rules.ts addService). One
 * service's page is web/me_service.tsx; the form both use is web/_service_form.tsx.
 * This file holds the routes; the list is web/_me_services_list.tsx, adding one
 * web/_me_services_add.tsx, the hook address web/_me_services_hook.tsx.
 */
import type { Deps } from "../lib/deps.ts";
import { webRouter } from "./_web.tsx";
import { getMeServices } from "./_me_services_list.tsx";
import { getMeServicesNew, postMeServices } from "./_me_services_add.tsx";
import { getMeServicesIdHook } from "./_me_services_hook.tsx";

export function servicePages(deps: Deps) {
  const app = webRouter();

  app.get("/me/services", (c) => getMeServices(deps, c));

  app.post("/me/services", (c) => postMeServices(deps, c));

  app.get("/me/services/new", (c) => getMeServicesNew(deps, c));

  app.get("/me/services/:id{[0-9]{1,15}}/hook", (c) => getMeServicesIdHook(deps, c));

  return app;
}
