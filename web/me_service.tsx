/**
 * One watched service's page (/me/services/<id>): at the top whether it is fine and when it is
 * next due (state since when, timing and grace in words, last and next, the address to ping
 * with its lines, the ways it alerts); then its live figures and charts
 * (web/_me_service_live.tsx), the actions, and the settings behind "Edit settings". Its
 * changes: edit, check now, pause and resume, a new hook address, delete; the same functions as
 * /api/me/services/<id>.
 * This file holds the routes; the page is web/_me_service_page.tsx, its top and facts
 * web/_me_service_facts.tsx, the actions web/_me_service_actions.tsx, the settings form's values
 * and dependencies web/_me_service_settings.tsx.
 */
import { deleteService, rotateHook } from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { checkServiceNow, editService, hookUrl } from "../kv/service/rules.ts";
import { fail } from "../http/errors.ts";
import { requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { keepHook } from "./_service_form.tsx";
import { getMeServicesId, postMeServicesId } from "./_me_service_page.tsx";

async function postMeServicesIdCheck(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  await checkServiceNow(deps, me, id);
  return seeOther(c, `/me/services/${id}`);
}

/** POST /me/services/<id>/pause and /resume: the PATCH's `paused`, then the page again. */
async function postMeServicesIdPause(deps: Deps, c: WebCtx, paused: boolean) {
  const me = requireAccount(c);
  const id = routeId(c);
  await editService(deps, me, id, { paused });
  return seeOther(c, `/me/services/${id}`);
}

async function postMeServicesIdRotate(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  const key = await rotateHook(deps, me.id, id);
  if (!key) fail(404, "no such service");
  await keepHook(deps, c, id, { url: hookUrl(deps, key), made: "renewed" });
  return seeOther(c, `/me/services/${id}/hook`);
}

async function postMeServicesIdDelete(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  if (!await deleteService(deps, me.id, routeId(c))) fail(404, "no such service");
  return seeOther(c, "/me/services");
}

export function serviceOnePages(deps: Deps) {
  const app = webRouter();

  app.get("/me/services/:id{[0-9]{1,15}}", (c) => getMeServicesId(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}", (c) => postMeServicesId(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/check", (c) => postMeServicesIdCheck(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/rotate", (c) => postMeServicesIdRotate(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/pause", (c) => postMeServicesIdPause(deps, c, true));

  app.post("/me/services/:id{[0-9]{1,15}}/resume", (c) => postMeServicesIdPause(deps, c, false));

  app.post("/me/services/:id{[0-9]{1,15}}/delete", (c) => postMeServicesIdDelete(deps, c));

  return app;
}
