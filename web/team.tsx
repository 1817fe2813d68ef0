/**
 * The team's pages (reviewers and the owner), under /team: the proposal queue with gate
 * checks and every transition with its reason (publication for the owner only), applications
 * (approve or decline with a reason), requests (mark handled), accounts, invitations, and
 * every account's watched services (with the machine snapshot for the owner). The same
 * domain functions as the team's API routes; team mails link here. This file holds the routes;
 * each page is in its module, web/_team_<page>.tsx, around the frame of web/_team.tsx.
 */
import type { Deps } from "../lib/deps.ts";
import { emptyView } from "./_form.tsx";
import { webRouter } from "./_web.tsx";
import {
  getTeam,
  postTeamProposalLinks,
  postTeamProposalsId,
  proposalPage,
} from "./_team_proposals.tsx";
import { applicationsPage, postTeamApplicationsId } from "./_team_applications.tsx";
import { getTeamRequests, postTeamRequestsId } from "./_team_requests.tsx";
import { getTeamAccounts, getTeamInvitations } from "./_team_accounts.tsx";
import { getTeamServices } from "./_team_services.tsx";

export function teamPages(deps: Deps) {
  const app = webRouter();
  // ---- proposals ----
  app.get("/team", (c) => getTeam(deps, c));

  app.get(
    "/team/proposals/:id{[0-9]{1,15}}",
    async (c) =>
      c.render(await proposalPage(deps, c, emptyView()), { title: "Proposal", noindex: true }),
  );

  app.post("/team/proposals/:id{[0-9]{1,15}}", (c) => postTeamProposalsId(deps, c));

  app.post("/team/proposals/:id{[0-9]{1,15}}/links", (c) => postTeamProposalLinks(deps, c));

  // ---- applications ----
  app.get(
    "/team/applications",
    async (c) =>
      c.render(await applicationsPage(deps, c), { title: "Applications", noindex: true }),
  );

  app.post("/team/applications/:id{[0-9]{1,15}}", (c) => postTeamApplicationsId(deps, c));

  // ---- requests ----
  app.get("/team/requests", (c) => getTeamRequests(deps, c));

  app.post("/team/requests/:id{[0-9]{1,15}}", (c) => postTeamRequestsId(deps, c));

  // ---- accounts ----
  app.get("/team/accounts", (c) => getTeamAccounts(deps, c));

  // ---- invitations ----
  app.get("/team/invitations", (c) => getTeamInvitations(deps, c));

  // ---- every account's services ----
  app.get("/team/services", (c) => getTeamServices(deps, c));

  return app;
}
