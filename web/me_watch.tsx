/**
 * Monitoring pages next to /me/services: alert channels (/me/channels), a service's channel
 * choice and badge. The same domain functions as /api/me/channels (kv/alerts/channels.ts). The status
 * pages' settings are web/me_status_pages.tsx, the public page web/status.tsx. This file holds
 * the routes; the channels page is web/_me_channels.tsx, the form of a new one
 * web/_me_channel_new.tsx.
 */
import { rotateBadge } from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { editService } from "../kv/service/rules.ts";
import { PatchBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { readBody } from "./_form.tsx";
import { requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import {
  getMeChannels,
  postMeChannelsApprise,
  postMeChannelsGrouping,
  postMeChannelsIdApply,
  postMeChannelsIdDelete,
  postMeChannelsIdForNew,
  postMeChannelsIdTest,
} from "./_me_channels.tsx";
import { getMeChannelsNew, postMeChannelsNew } from "./_me_channel_new.tsx";

async function postMeServicesIdChannels(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  const body = await readBody(c);
  const raw = body.channel;
  const ids = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw])
    .map((x) => Number(x)).filter((n) => Number.isInteger(n) && n > 0);
  await editService(deps, me, id, PatchBody.parse({ channels: ids }));
  return seeOther(c, `/me/services/${id}`);
}

async function postMeServicesIdBadge(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  if (!await rotateBadge(deps, me.id, id)) fail(404, "no such service");
  return seeOther(c, `/me/services/${id}`);
}

export function watchPages(deps: Deps) {
  const app = webRouter();

  // ---- a service's channels and badge (its page is web/me_service.tsx) ----

  app.post("/me/services/:id{[0-9]{1,15}}/channels", (c) => postMeServicesIdChannels(deps, c));

  app.post("/me/services/:id{[0-9]{1,15}}/badge", (c) => postMeServicesIdBadge(deps, c));

  // ---- channels ----

  app.get("/me/channels", (c) => getMeChannels(deps, c));

  app.get("/me/channels/new/:kind{[a-z_]{1,20}}", (c) => getMeChannelsNew(deps, c));
  app.post("/me/channels/new/:kind{[a-z_]{1,20}}", (c) => postMeChannelsNew(deps, c));
  app.post("/me/channels/grouping", (c) => postMeChannelsGrouping(deps, c));
  app.post("/me/channels/apprise", (c) => postMeChannelsApprise(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/test", (c) => postMeChannelsIdTest(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/apply", (c) => postMeChannelsIdApply(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/for-new", (c) => postMeChannelsIdForNew(deps, c));

  app.post("/me/channels/:id{[0-9]{1,15}}/delete", (c) => postMeChannelsIdDelete(deps, c));

  return app;
}
