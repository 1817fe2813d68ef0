import { z } from "zod";
import { InviteBody } from "../http/account_inputs.ts";
import { type Account, getAccount } from "../kv/accounts/accounts.ts";
import { allInvites, inviteAddress, invitesBy, inviteView } from "../kv/accounts/invites.ts";
import type { Deps } from "../lib/deps.ts";
import { body, errors, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";

const InviteItem = z.object({
  id: z.number().int(),
  email: z.string(),
  message: z.string(),
  created: z.string(),
  expires: z.string(),
  accepted: z.boolean(),
  account: z.number().int().nullable(),
}).meta({ id: "Invite" });

const TeamInvite = InviteItem.extend({
  inviter: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  outcome: z.enum(["accepted", "open", "expired"]),
}).meta({ id: "TeamInvite" });

export function inviteRoutes(deps: Deps) {
  const app = router();
  const { bearer, team } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/invites",
      tags: ["account"],
      summary: "Invitations sent, newest first, with the accepted marker and resulting account",
      responses: { 200: jsonResponse(z.object({ items: z.array(InviteItem) })), ...errors(401) },
    }),
    async (c) => {
      const items = (await invitesBy(deps.kv, c.get("account").id)).map(inviteView);
      return c.json({ items }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/invites",
      tags: ["account"],
      summary: "Invite an address with no account; the mailed link lasts seven days",
      request: body(InviteBody),
      responses: {
        201: jsonResponse(z.object({ ok: z.literal(true), item: InviteItem }), "Invitation mailed"),
        ...errors(400, 401, 409, 429),
      },
    }),
    async (c) => {
      const invite = await inviteAddress(deps, c.get("account"), c.req.valid("json"));
      return c.json({ ok: true as const, item: inviteView(invite) }, 201);
    },
  );

  app.openapi(
    team({
      method: "get",
      path: "/invites",
      tags: ["team"],
      summary: "Every invitation with inviter and outcome, newest first",
      responses: {
        200: jsonResponse(z.object({ items: z.array(TeamInvite) })),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const now = deps.clock.now();
      const names = new Map<number, Account | null>();
      const items = [];
      for (const i of await allInvites(deps.kv)) {
        if (!names.has(i.inviter)) {
          names.set(i.inviter, (await getAccount(deps.kv, i.inviter)).value);
        }
        const who = names.get(i.inviter);
        items.push({
          ...inviteView(i),
          inviter: who ? { id: who.id, name: who.name } : null,
          outcome: i.accepted !== null
            ? "accepted" as const
            : i.expires <= now
            ? "expired" as const
            : "open" as const,
        });
      }
      return c.json({ items }, 200);
    },
  );

  return app;
}
