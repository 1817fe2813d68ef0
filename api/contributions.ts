import { z } from "zod";
import { LEARNING_SHAPE } from "../lib/learning.ts";
import { ProposalBody, ProposalPatch } from "../http/catalogue_inputs.ts";
import { createMiddleware } from "hono/factory";
import { isTeam } from "../kv/accounts/accounts.ts";
import { gateOf } from "../kv/catalogue/gate.ts";
import { isTeamCaller } from "../kv/accounts/caller.ts";
import {
  changeProposal,
  removeProposal,
  submitProposal,
  visibleProposal,
} from "../kv/catalogue/proposal_changes.ts";
import {
  getData,
  getProposal,
  keyMatches,
  listProposals,
  type Proposal,
  proposalView,
  publicStatusView,
  STATUSES,
  statusUrl,
} from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import {
  type AppEnv,
  body,
  createRoute,
  errors,
  idParam,
  jsonResponse,
  router,
} from "../http/router.ts";
import {
  callerOf,
  clientOrigin,
  guarded,
  hasServiceToken,
  honeypot,
  optionalToken,
  secured,
} from "../http/guards.ts";

const Check = z.object({ name: z.string(), ok: z.boolean(), detail: z.string() });
const GateSchema = z.object({
  open: z.boolean(),
  checks: z.array(Check),
  failed: z.array(z.string()),
}).meta({ id: "Gate" });

const ProposalItem = z.object({
  id: z.number().int(),
  status: z.enum(STATUSES),
  name: z.string(),
  email: z.string().nullable(),
  title: z.string(),
  area: z.string(),
  summary: z.string(),
  files: z.array(z.object({ label: z.string(), url: z.string() })),
  attribution: z.string(),
  who: z.string(),
  ...LEARNING_SHAPE,
  licence_url: z.string().nullable(),
  created: z.string(),
  updated: z.string(),
  confirmed: z.string().nullable(),
  submitter: z.object({
    name: z.string(),
    email: z.string().nullable(),
    account: z.number().int().nullable(),
  }),
  decisions: z.array(z.object({
    status: z.string(),
    from: z.string().nullable(),
    reason: z.string().nullable(),
    at: z.string(),
    by: z.string().optional(),
  })),
  reason: z.string().nullable(),
  records_sent: z.boolean(),
  slug: z.string().nullable(),
  module_url: z.string().nullable(),
  published: z.string().nullable(),
  status_url: z.string(),
  gate: GateSchema,
}).meta({ id: "Proposal" });

const ProposalFull = ProposalItem.extend({
  trail: z.string(),
  records: z.array(z.unknown()),
  chain: z.unknown().nullable(),
}).meta({ id: "ProposalFull" });

const PublicStatus = z.object({
  ok: z.literal(true),
  id: z.number().int(),
  status: z.string(),
  created: z.string(),
  updated: z.string(),
  history: z.array(z.object({
    status: z.string(),
    at: z.string(),
    reason: z.string().nullable().optional(),
  })),
  title: z.string().optional(),
  area: z.string().optional(),
  name: z.string().optional(),
  module_url: z.string().nullable().optional(),
}).meta({ id: "ProposalStatusPage" });

/** Signed-in caller or the service token; the team flag is set for either kind of team. */
const signedInOrService = (deps: Deps) => {
  const token = optionalToken(deps);
  return createMiddleware<AppEnv>(async (c, next) => {
    await token(c, () => Promise.resolve());
    if (hasServiceToken(deps, c)) {
      c.set("team", { via: "service" });
    } else {
      const account = c.get("account");
      if (!account) fail(401, "sign-in required: send a valid bearer token");
      if (isTeam(account)) c.set("team", { via: "account", account });
    }
    await next();
  });
};

export function contributionRoutes(deps: Deps) {
  const app = router();
  const { team } = guarded(deps);
  // The submitter (signed in) or the team: the domain function decides which may see what.
  const who = secured("team", signedInOrService(deps));
  const submitter = secured("bearer", signedInOrService(deps));

  const item = async (p: Proposal, teamView: boolean) => ({
    ...proposalView(deps.config.baseUrl, p, teamView),
    gate: await gateOf(deps.kv, p),
  });

  app.openapi(
    createRoute({
      method: "post",
      path: "/contributions",
      tags: ["forms"],
      summary: "Public proposal form",
      description: "Signed in with the proposal's address: confirmed at once and the team is " +
        "notified. Otherwise received, and a confirmation link (valid seven days) is mailed.",
      middleware: [
        honeypot("proposal", (id) => ({
          status: 201,
          body: {
            ok: true as const,
            id,
            status: "received",
            status_url: statusUrl(deps.config.baseUrl, id),
          },
        })),
        optionalToken(deps),
      ],
      request: body(ProposalBody),
      responses: {
        201: jsonResponse(
          z.object({
            ok: z.literal(true),
            id: z.number().int(),
            status: z.enum(["received", "confirmed"]),
            status_url: z.string(),
          }),
          "Stored",
        ),
        ...errors(400, 429),
      },
    }),
    async (c) => {
      const proposal = await submitProposal(
        deps,
        callerOf(deps, c),
        c.req.valid("json"),
        clientOrigin(deps, c),
      );
      return c.json({
        ok: true as const,
        id: proposal.id,
        status: proposal.status as "received" | "confirmed",
        status_url: statusUrl(deps.config.baseUrl, proposal.id),
      }, 201);
    },
  );

  app.openapi(
    team({
      method: "get",
      path: "/contributions",
      tags: ["team"],
      summary: "Every proposal, newest first, with state, submitter and gate checks",
      request: { query: z.object({ status: z.enum(STATUSES).optional() }) },
      responses: {
        200: jsonResponse(z.object({ items: z.array(ProposalItem) })),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const list = await listProposals(deps.kv, c.req.valid("query").status);
      const items = [];
      for (const p of list) items.push(await item(p, true));
      return c.json({ items }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/contributions/{id}/status",
      tags: ["forms"],
      summary: "What the public status page shows",
      description: "Without `key` (the secret of the mailed status link): state and dates " +
        "only. With it: also title, area, name and reasons. Never the address.",
      request: {
        params: z.object({ id: idParam }),
        query: z.object({ key: z.string().max(100).optional() }),
      },
      responses: { 200: jsonResponse(PublicStatus), ...errors(404) },
    }),
    async (c) => {
      const p = (await getProposal(deps.kv, c.req.valid("param").id)).value;
      if (!p) fail(404, "no such proposal");
      const withKey = await keyMatches(p, c.req.valid("query").key);
      c.header("Cache-Control", "no-store");
      return c.json({ ok: true as const, ...publicStatusView(p, withKey) }, 200);
    },
  );

  app.openapi(
    who({
      method: "get",
      path: "/contributions/{id}",
      tags: ["forms"],
      summary: "One proposal with state, decisions, reasons, records and gate (submitter or team)",
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), item: ProposalFull })),
        ...errors(401, 404),
      },
    }),
    async (c) => {
      const caller = callerOf(deps, c);
      const p = await visibleProposal(deps, caller, c.req.valid("param").id);
      const data = await getData(deps.kv, p.id);
      return c.json({
        ok: true as const,
        item: { ...await item(p, isTeamCaller(caller)), ...data },
      }, 200);
    },
  );

  app.openapi(
    who({
      method: "patch",
      path: "/contributions/{id}",
      tags: ["forms", "team"],
      summary: "Change status (team; withdrawn: submitter) or attribution (submitter, fresh)",
      description: "reviewing: from confirmed. admitted: from reviewing, reason needed; from " +
        "published (owner) takes the module back. rejected: from confirmed or reviewing, " +
        "reason needed. published: owner, from admitted or reviewing, gate open (else 409 " +
        "with `failed`). withdrawn: submitter, from received, confirmed, reviewing or " +
        "admitted, reason needed. Reasons have at least 3 characters.",
      request: { params: z.object({ id: idParam }), ...body(ProposalPatch) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), item: ProposalItem })),
        ...errors(400, 401, 403, 404, 409),
      },
    }),
    async (c) => {
      const caller = callerOf(deps, c);
      const next = await changeProposal(deps, caller, c.req.valid("param").id, c.req.valid("json"));
      return c.json({ ok: true as const, item: await item(next, isTeamCaller(caller)) }, 200);
    },
  );

  app.openapi(
    submitter({
      method: "delete",
      path: "/contributions/{id}",
      tags: ["forms"],
      summary: "Delete an unpublished proposal (submitter or owner)",
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), deleted: z.number().int() })),
        ...errors(401, 403, 404, 409),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      await removeProposal(deps, callerOf(deps, c), id);
      return c.json({ ok: true as const, deleted: id }, 200);
    },
  );

  return app;
}
