import { z } from "zod";
import { LinkRequest } from "../http/account_inputs.ts";
import { standingOf } from "../kv/accounts/accounts.ts";
import { afterLinkOpened } from "../kv/parts/after_link.ts";
import { completeLink, issueLink } from "../kv/accounts/sign_in.ts";
import { signInMail } from "../mail/sign_in.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { body, createRoute, errors, jsonResponse, router } from "../http/router.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { ActorSchema } from "../http/schemas.ts";
import { actorView } from "../kv/accounts/accounts.ts";

const VerifyAnswer = z.object({
  ok: z.literal(true),
  token: z.string(),
  expires: z.string(),
  confirmed: z.number().int(),
  actor: ActorSchema,
}).meta({ id: "VerifyAnswer" });

export function signInRoutes(deps: Deps) {
  const app = router();

  app.openapi(
    createRoute({
      method: "post",
      path: "/verify/request",
      tags: ["sign-in"],
      summary: "Mail a sign-in (login) or address confirmation link",
      request: body(LinkRequest),
      responses: {
        202: jsonResponse(z.object({ ok: z.literal(true), sent: z.literal(true) }), "Link mailed"),
        ...errors(400, 429),
      },
    }),
    async (c) => {
      const { email, purpose, age_ok, name } = c.req.valid("json");
      if (purpose === "login" && age_ok !== true) {
        fail(400, "age_ok: must be true to sign in", { field: "age_ok" });
      }
      await limit(deps, RULES.linkByOrigin, clientOrigin(deps, c));
      await limit(deps, RULES.linkByAddress, email);
      // The same answer and the same work whether or not the address has an account.
      await issueLink(deps, { purpose, email, name }, signInMail(purpose));
      return c.json({ ok: true as const, sent: true as const }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/verify",
      tags: ["sign-in"],
      summary: "Complete a mailed link: signs in, creating the account on first use",
      request: { query: z.object({ token: z.string().min(1).max(200) }) },
      responses: { 200: jsonResponse(VerifyAnswer), ...errors(400, 410) },
    }),
    async (c) => {
      // Hono answers HEAD with the GET handler; a HEAD (a link checker, a prefetch) must not
      // use up the link and throw away the token it would give.
      if (c.req.method === "HEAD") fail(405, "use GET to complete a link", {}, { Allow: "GET" });
      const { token } = c.req.valid("query");
      const done = await completeLink(deps, token, {
        address: clientOrigin(deps, c),
        agent: c.req.header("user-agent") ?? "",
      });
      const { confirmed } = await afterLinkOpened(deps, done.account, done.link);
      c.header("Cache-Control", "no-store");
      return c.json({
        ok: true as const,
        token: done.token,
        expires: iso(done.session.expires),
        confirmed,
        actor: actorView({ ...done.account, roles: done.account.roles }),
      }, 200);
    },
  );

  return app;
}

export { standingOf };
