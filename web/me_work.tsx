/**
 * Modules and proposals (/me/work): the modules you contribute to, each editable in every
 * field (facts as "label: value" lines, gets as lines) with contributors added and removed
 * (kv/catalogue/modules.ts, as /api/me/modules), and your proposals with their status, withdrawal with
 * a reason and the attribution choice (kv/catalogue/proposal_changes.ts changeProposal, as PATCH
 * /api/contributions/{id}).
 * This file holds the routes; the list of modules and proposals is web/_me_work_page.tsx, a
 * module's editing page web/_me_work_module_page.tsx.
 */
import { changeProposal } from "../kv/catalogue/proposal_changes.ts";
import type { Deps } from "../lib/deps.ts";
import { callerOf } from "../http/guards.ts";
import { readForm } from "./_form.tsx";
import { formLimit, requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { getMeWork, postMeWorkProposalsIdWithdraw } from "./_me_work_page.tsx";
import {
  getMeWorkModulesSlug,
  postMeWorkModulesSlug,
  postMeWorkModulesSlugContributors,
  postMeWorkModulesSlugContributorsIdRemove,
} from "./_me_work_module_page.tsx";

async function postMeWorkProposalsIdAttribution(deps: Deps, c: WebCtx) {
  requireAccount(c);
  const caller = callerOf(deps, c);
  if (!caller.fresh) return seeOther(c, "/sign-in?next=/me/work&fresh=1");
  const form = await readForm(c);
  const attribution = form.attribution === "remove" ? "remove" : "keep";
  await changeProposal(deps, caller, routeId(c), { attribution, reason: "" });
  return seeOther(c, "/me/work");
}

export function workPages(deps: Deps) {
  const app = webRouter();

  app.get("/me/work", (c) => getMeWork(deps, c));

  app.post(
    "/me/work/proposals/:id{[0-9]{1,15}}/withdraw",
    (c) => postMeWorkProposalsIdWithdraw(deps, c),
  );

  app.post(
    "/me/work/proposals/:id{[0-9]{1,15}}/attribution",
    (c) => postMeWorkProposalsIdAttribution(deps, c),
  );

  app.get("/me/work/modules/:slug", (c) => getMeWorkModulesSlug(deps, c));

  // about 4,000 + note 2,000 + up to 10,000 of lines + facts and the short texts.
  app.post("/me/work/modules/:slug", formLimit(256 * 1024), (c) => postMeWorkModulesSlug(deps, c));

  app.post(
    "/me/work/modules/:slug/contributors",
    (c) => postMeWorkModulesSlugContributors(deps, c),
  );

  app.post(
    "/me/work/modules/:slug/contributors/:id{[0-9]{1,15}}/remove",
    (c) => postMeWorkModulesSlugContributorsIdRemove(deps, c),
  );

  return app;
}
