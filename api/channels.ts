import { z } from "zod";
import { isOwner } from "../kv/accounts/accounts.ts";
import { groupingOf, setGrouping } from "../kv/alerts/alert_groups.ts";
import { getChannel, MAX_CHANNELS, SIGNATURE_HEADER } from "../kv/alerts/channels.ts";
import { testChannel } from "../kv/alerts/outbox.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { KIND_LIST, KIND_NAMES } from "../lib/channels/mod.ts";
import {
  addChannel,
  applyChannel,
  changeChannel,
  channelsInUse,
  removeChannel,
} from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { body, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { fail } from "../http/errors.ts";
import { guarded, limit } from "../http/guards.ts";
import { oneLineField } from "../http/text.ts";

const ChannelSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: z.enum(KIND_NAMES),
  url_hint: z.string().meta({
    description: "What the channel reaches, never a secret: an origin, a chat, a region",
  }),
  settings: z.record(z.string(), z.string()).meta({
    description: "The fields that are not secret, as entered",
  }),
  secrets: z.record(z.string(), z.literal("set")).meta({
    description: 'Each secret field (token, key, webhook address) as "set": never shown again',
  }),
  state: z.enum(["ok", "failing", "broken"]).meta({
    description: "failing: the last delivery failed; broken: an alert failed every retry (a " +
      "delivered alert or test clears it)",
  }),
  for_new_services: z.boolean().meta({
    description: "A new service created without naming channels gets this one (and the add " +
      "form ticks it). Default true",
  }),
  services: z.number().int().meta({
    description: "How many of the account's services alert this channel",
  }),
  last_error: z.object({ at: z.string(), error: z.string() }).nullable(),
  last_delivered: z.string().nullable().meta({
    description: "When a test or an alert last went through (set when one first does, and " +
      "after a failure); null: nothing has gone through yet, which the page reads " +
      '"not tested yet"',
  }),
  broken_since: z.string().nullable(),
  created: z.string(),
}).meta({ id: "Channel" });

const ForNew = z.boolean().meta({
  description: "Use for new services: a service created without naming channels gets it " +
    "(default true)",
});

/** Every kind's fields, each an optional string here; kv/alerts/channels.ts checks them by kind. */
const FIELD_DOCS = new Map<string, string>();
for (const k of KIND_LIST) {
  for (const f of k.fields) {
    const line = `${k.kind}: ${f.label}${f.optional ? " (optional)" : ""}${
      f.secret ? ", secret" : ""
    }`;
    FIELD_DOCS.set(f.name, [FIELD_DOCS.get(f.name), line].filter(Boolean).join("; "));
  }
}

const NewChannel = z.object({
  name: oneLineField(80).min(2),
  kind: z.enum(KIND_NAMES).optional().meta({
    description: "The kind of channel (default webhook); docs/api.md lists each kind's fields",
  }),
  apprise: z.string().max(2000).optional().meta({
    description: "Instead of kind and fields: an Apprise-style URL (tgram://, discord://, " +
      "slack://, gchat://, mmosts://, ntfys://, gotifys://, matrixs://, pover://, " +
      "pagerduty://, opsgenie://, jsons://)",
    example: "tgram://123456789:AAE-token/-1001234567890",
  }),
  for_new_services: ForNew.optional(),
  apply_to_all: z.boolean().optional().meta({
    description: "Also add it to every service the account has now (default false; " +
      "POST /api/me/channels/<id>/apply does it later)",
  }),
  ...Object.fromEntries(
    [...FIELD_DOCS].map(([name, description]) => [
      name,
      z.string().max(4000).optional().meta({ description }),
    ]),
  ),
}).meta({ id: "NewChannel" });

const KindSchema = z.object({
  kind: z.string(),
  label: z.string(),
  about: z.string(),
  fields: z.array(z.object({
    name: z.string(),
    label: z.string(),
    help: z.string(),
    secret: z.boolean(),
    optional: z.boolean(),
    type: z.enum(["url", "text", "select", "textarea"]),
    options: z.array(z.string()).optional(),
    max: z.number().int(),
  })),
}).meta({ id: "ChannelKind" });

const Params = z.object({ id: idParam });

const ChannelChange = z.object({ for_new_services: ForNew }).meta({ id: "ChannelChange" });

/** Webhook alert channels of the caller (kv/alerts/channels.ts). */

const AlertSettings = z.object({
  grouping: z.boolean().meta({
    description: "Off and back alerts of services that share a place (or, without a place, a " +
      "group) and change within two minutes come as one mail and one post per channel " +
      "(default true)",
  }),
}).meta({ id: "AlertSettings" });

export function channelRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/alert-settings",
      tags: ["services"],
      summary: "The caller's alert settings: whether alerts of one outage come together",
      responses: { 200: jsonResponse(AlertSettings), ...errors(401) },
    }),
    async (c) => c.json({ grouping: await groupingOf(deps.kv, c.get("account").id) }, 200),
  );

  app.openapi(
    bearer({
      method: "patch",
      path: "/me/alert-settings",
      tags: ["services"],
      summary: "Turn grouped alerts on or off",
      description: "Off: every service alerts on its own at once. A group already waiting is " +
        "still sent.",
      request: body(AlertSettings),
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), grouping: z.boolean() })),
        ...errors(400, 401),
      },
    }),
    async (c) => {
      const { grouping } = c.req.valid("json");
      const on = await setGrouping(deps, c.get("account").id, grouping);
      return c.json({ ok: true as const, grouping: on }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/channels/kinds",
      tags: ["services"],
      summary: "The kinds of alert channel and the fields of each",
      responses: { 200: jsonResponse(z.object({ items: z.array(KindSchema) })), ...errors(401) },
    }),
    (c) =>
      c.json({
        items: KIND_LIST.map((k) => ({
          kind: k.kind,
          label: k.label,
          about: k.about,
          fields: k.fields.map((f) => ({
            name: f.name,
            label: f.label,
            help: f.help,
            secret: f.secret ?? false,
            optional: f.optional ?? false,
            type: f.type,
            ...(f.options ? { options: [...f.options] } : {}),
            max: f.max,
          })),
        })),
      }, 200),
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/channels",
      tags: ["services"],
      summary: "The caller's webhook alert channels",
      responses: {
        200: jsonResponse(z.object({ items: z.array(ChannelSchema), max: z.number().int() })),
        ...errors(401),
      },
    }),
    async (c) => {
      const { items } = await channelsInUse(deps.kv, c.get("account").id);
      return c.json({ items, max: MAX_CHANNELS }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/channels",
      tags: ["services"],
      summary: "Add an alert channel; a webhook's signing secret is shown only in this answer",
      description: "`kind` and that kind's fields (GET /api/me/channels/kinds, docs/api.md). A " +
        `webhook's alerts are JSON POSTs signed with \`${SIGNATURE_HEADER}: sha256=<hex ` +
        "HMAC-SHA256 of the body with the secret>`. Addresses are https; private addresses are " +
        "refused as for checks (a self-hosted kind may reach the networks of CHANNEL_NETWORKS). " +
        "Secret fields are stored sealed and never shown again.",
      request: body(NewChannel),
      responses: {
        200: jsonResponse(z.object({
          ok: z.literal(true),
          item: ChannelSchema,
          secret: z.string().optional().meta({ description: "A webhook's signing secret, once" }),
        })),
        ...errors(400, 401, 409),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const input = c.req.valid("json");
      const ch = await addChannel(deps, me.id, input, isOwner(me));
      c.header("Cache-Control", "no-store");
      const secret = ch.shownSecret ? { secret: ch.shownSecret } : {};
      return c.json({ ok: true as const, item: ch.item, ...secret }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "patch",
      path: "/me/channels/{id}",
      tags: ["services"],
      summary: 'Turn a channel\'s "use for new services" on or off',
      description: "Changes no existing service (POST .../apply adds it to all of them).",
      request: { params: Params, ...body(ChannelChange) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), item: ChannelSchema })),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      const item = await changeChannel(deps, me.id, id, c.req.valid("json"));
      if (!item) fail(404, "no such channel");
      return c.json({ ok: true as const, item }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/channels/{id}/apply",
      tags: ["services"],
      summary: "Apply a channel to all the caller's services",
      description: "Every service that does not alert this channel yet gets it, besides its " +
        'other channels (Healthchecks\' "Assign this integration to all existing checks", ' +
        'Uptime Kuma\'s "Apply on all existing monitors"). Answers how many services alert ' +
        "it now and how many were added.",
      request: { params: Params },
      responses: {
        200: jsonResponse(z.object({
          ok: z.literal(true),
          services: z.number().int(),
          added: z.number().int(),
        })),
        ...errors(401, 404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const done = await applyChannel(deps, c.get("account").id, id);
      if (!done) fail(404, "no such channel");
      return c.json({ ok: true as const, ...done }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/channels/{id}",
      tags: ["services"],
      summary: "Remove a channel (and its choice on every service)",
      request: { params: Params },
      responses: { 200: jsonResponse(z.object({ ok: z.literal(true) })), ...errors(401, 404) },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      if (!await removeChannel(deps, me.id, id)) fail(404, "no such channel");
      return c.json({ ok: true as const }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/channels/{id}/test",
      tags: ["services"],
      summary: "Send a test alert now (60 an hour with manual checks)",
      request: { params: Params },
      responses: {
        200: jsonResponse(z.object({
          ok: z.literal(true),
          delivered: z.boolean(),
          status: z.string().meta({
            description: "The provider's answer in plain words (wrong token, unknown chat, " +
              "rate limited, ...); a webhook's: its HTTP status",
          }),
        })),
        ...errors(401, 404, 429),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      const ch = await getChannel(deps.kv, me.id, id);
      if (!ch) fail(404, "no such channel");
      await limit(deps, RULES.manualCheck, me.id);
      const r = await testChannel(deps, ch);
      return c.json({ ok: true as const, delivered: r.ok, status: r.status }, 200);
    },
  );

  return app;
}
