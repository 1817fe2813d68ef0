import { z } from "zod";
import { getAccount, isOwner, isTeam } from "../kv/accounts/accounts.ts";
import {
  deleteService,
  getService,
  GROUPS,
  INTERVALS,
  listAllServices,
  listServices,
  MAX_SERVICES,
  PLACES,
  rotateHook,
  serviceView,
} from "../kv/service/commands.ts";
import { serviceHistory } from "../kv/service/windows.ts";
import { listWindows, type Window } from "../kv/service/maintenance.ts";
import { listEvents } from "../kv/service/heartbeats.ts";
import { withDurations } from "../lib/runs.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { readSnapshot } from "../lib/machine.ts";
import { TARGET_KINDS } from "../lib/targets.ts";
import { body, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";
import { CreateBody, HttpOptionsBody, PatchBody } from "../http/services_inputs.ts";
import { addService, checkServiceNow, editService, hookUrl } from "../kv/service/rules.ts";

const ServiceSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  what: z.string(),
  group: z.string(),
  place: z.string().nullable(),
  kind: z.enum(TARGET_KINDS),
  interval: z.number().int(),
  target_hint: z.string().nullable(),
  state: z.enum(["ok", "warn", "off", "wait"]),
  status: z.string(),
  checked: z.string().nullable(),
  ms: z.number().int().nullable(),
  beat: z.string().nullable(),
  created: z.string(),
  alerts: z.boolean(),
  threshold: z.number().int().meta({
    description: "Consecutive failed checks before warn or off (1 to 5); heartbeats: failed or " +
      "missing runs before off",
  }),
  failed_checks: z.number().int().meta({
    description: "Failed checks in a row so far; heartbeats: failed or missing runs in a row",
  }),
  remind: z.number().int().nullable().meta({
    description: "Hours between reminders while off (1 to 24); null: none",
  }),
  cert_expires: z.string().nullable().meta({
    description: "tls: when the certificate last seen expires",
  }),
  schedule: z.string().nullable().meta({
    description: "Heartbeats: a cron expression used instead of the interval",
  }),
  tz: z.string().nullable().meta({ description: "The schedule's IANA time zone" }),
  grace: z.number().int().nullable().meta({
    description: "Minutes after a scheduled time before a missing run is off; without a " +
      "schedule, a grace set through the Healthchecks API (null: one interval)",
  }),
  period_seconds: z.number().int().nullable().meta({
    description: "Heartbeats on the interval: the exact period in seconds (60 to 31536000), " +
      "which judging uses; interval then holds the value of the list of intervals nearest below it. Null for " +
      "checked kinds and schedules",
  }),
  grace_seconds: z.number().int().nullable().meta({
    description: "Heartbeats: the exact grace in seconds after a missed time before off (the " +
      "schedule's grace, or past the period; one period unless set); null for checked kinds",
  }),
  channels: z.array(z.number().int()).meta({
    description: "Webhook channels alerted besides mail (GET /api/me/channels)",
  }),
  depends_on: z.array(z.number().int()).meta({
    description: "Services it depends on: while one is off, its own off alerts fold into that " +
      "one's and it reads unreachable",
  }),
  min_duration: z.number().int().nullable().meta({
    description: "Heartbeats: seconds a run takes at least (a shorter one failed); null: none",
  }),
  paused: z.boolean().meta({
    description: "Heartbeats: paused (state wait, no alerts, no lateness); PATCH paused resumes",
  }),
  maintenance: z.boolean().meta({
    description: "A maintenance window covers it now (GET /api/me/maintenance): its failures " +
      "alert nobody; state keeps what its checks say",
  }),
  badge_path: z.string().nullable().meta({
    description: "Path of the public SVG badge (POST .../badge makes or replaces it)",
  }),
  tags: z.array(z.string()).meta({ description: "Free tags, one word each" }),
  uuid: z.string().nullable().meta({
    description: "Its id in the Healthchecks-compatible API (/api/v3/checks/<uuid>)",
  }),
  slug: z.string().nullable().meta({
    description: "Heartbeats: its slug (/ping/<ping key>/<slug>); not unique",
  }),
  http: HttpOptionsBody.nullable().meta({
    description: "url checks: the request's options and the answer's assertions; null: a plain " +
      "GET judged by its status",
  }),
  methods: z.enum(["", "POST"]).nullable().meta({
    description: 'Heartbeats: "POST" takes POST pings only; "" any method',
  }),
}).meta({ id: "Service" });

const SnapshotSchema = z.object({
  host: z.string(),
  read: z.string(),
  services: z.array(z.object({
    group: z.string(),
    name: z.string(),
    what: z.string(),
    where: z.string(),
    state: z.string(),
    status: z.string(),
    flag: z.union([z.string(), z.boolean(), z.null()]),
  })),
}).nullable().meta({ id: "MachineSnapshot" });

const Params = z.object({ id: idParam });
const Item = z.object({ ok: z.literal(true), item: ServiceSchema });

const EventSchema = z.object({
  at: z.string(),
  kind: z.enum(["success", "start", "fail", "log"]),
  code: z.number().int().nullable().meta({ description: "Exit code sent as /<0-255>" }),
  rid: z.string().nullable(),
  duration_ms: z.number().int().nullable().meta({
    description: "For an end: the time since its start (same rid)",
  }),
  status: z.string(),
  body: z.string().meta({ description: "The request body as text (up to 10 KB)" }),
  origin: z.string().meta({ description: "The client's network, never its address" }),
  ms: z.number().nullable().meta({
    description: "A response time the client reported (Uptime Kuma's `ping`), in ms",
  }),
}).meta({ id: "HeartbeatEvent" });

const DaySchema = z.object({
  date: z.string(),
  uptime: z.number().nullable().meta({ description: "Fraction up (ok or warn), 0 to 1" }),
  down_s: z.number().int(),
  maintenance_s: z.number().int().meta({
    description: "Seconds in a maintenance window: left out of uptime and down_s",
  }),
  monitor_down_s: z.number().int().meta({
    description: "Seconds this monitor itself was not running: no data, left out of uptime",
  }),
  checks: z.number().int(),
  median_ms: z.number().int().nullable(),
  p95_ms: z.number().int().nullable(),
}).meta({ id: "ServiceDay" });

export function servicesRoutes(deps: Deps) {
  const app = router();
  const { bearer, team } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/services",
      tags: ["services"],
      summary: "The caller's watched services, the allowed values, and (owner) the machine",
      responses: {
        200: jsonResponse(z.object({
          items: z.array(ServiceSchema),
          team: z.boolean(),
          machine: SnapshotSchema,
          kinds: z.array(z.string()),
          groups: z.array(z.string()),
          places: z.array(z.string()),
          intervals: z.array(z.number()),
          max: z.number().int(),
        })),
        ...errors(401),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const now = deps.clock.now();
      const windows = await listWindows(deps.kv, me.id);
      const items = (await listServices(deps.kv, me.id))
        .map(({ service, beat }) => serviceView(service, beat, now, windows));
      return c.json({
        items,
        team: isTeam(me),
        machine: isOwner(me) ? await readSnapshot(deps.config) : null,
        kinds: [...TARGET_KINDS],
        groups: [...GROUPS],
        places: [...PLACES],
        intervals: [...INTERVALS],
        max: MAX_SERVICES,
      }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/services",
      tags: ["services"],
      summary: "Watch a service; a checked kind is checked once before the answer",
      description: "hook_url is present only for a heartbeat (webhook:) and only in this answer.",
      request: body(CreateBody),
      responses: {
        200: jsonResponse(Item.extend({ hook_url: z.string().optional() }), "Created"),
        ...errors(400, 401, 409),
      },
    }),
    async (c) => {
      const added = await addService(deps, c.get("account"), c.req.valid("json"));
      c.header("Cache-Control", "no-store");
      return c.json(
        added.hook_url
          ? { ok: true as const, item: added.item, hook_url: added.hook_url }
          : { ok: true as const, item: added.item },
        200,
      );
    },
  );

  app.openapi(
    bearer({
      method: "patch",
      path: "/me/services/{id}",
      tags: ["services"],
      summary: "Change name, what, group, place, interval, alerts and the other settings " +
        "(not kind or target); pause or resume a heartbeat",
      request: { params: Params, ...body(PatchBody) },
      responses: { 200: jsonResponse(Item), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const item = await editService(deps, c.get("account"), id, c.req.valid("json"));
      return c.json({ ok: true as const, item }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/services/{id}/check",
      tags: ["services"],
      summary: "Run the check now (60 an hour per account; not for heartbeats)",
      request: { params: Params },
      responses: { 200: jsonResponse(Item), ...errors(400, 401, 404, 429) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const item = await checkServiceNow(deps, c.get("account"), id);
      return c.json({ ok: true as const, item }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/services/{id}/events",
      tags: ["services"],
      summary: "A heartbeat's last 100 signals, newest first",
      request: { params: Params },
      responses: {
        200: jsonResponse(z.object({ items: z.array(EventSchema) })),
        ...errors(401, 404),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      if (!(await getService(deps.kv, me.id, id)).value) fail(404, "no such service");
      const events = withDurations(await listEvents(deps.kv, me.id, id));
      c.header("Cache-Control", "no-store");
      return c.json({
        items: events.map((e) => ({
          at: iso(e.at),
          kind: e.kind,
          code: e.code,
          rid: e.rid,
          duration_ms: e.duration_ms,
          status: e.status,
          body: e.body,
          origin: e.origin,
          ms: e.ms ?? null,
        })),
      }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/services/{id}/history",
      tags: ["services"],
      summary: "Every state change of the last 90 days and the figures per day",
      description: "Days are UTC dates, oldest first, the last one today (so far). uptime is " +
        "the time up (ok or warn) over the time with a known state; median and 95th " +
        "percentile durations are of that day's checks (checked kinds).",
      request: { params: Params },
      responses: {
        200: jsonResponse(z.object({
          uptime: z.number().nullable().meta({ description: "Mean of the days with data" }),
          days: z.array(DaySchema),
          changes: z.array(z.object({
            at: z.string(),
            state: z.enum(["ok", "warn", "off", "wait"]),
            status: z.string(),
          })),
          monitor_down: z.array(z.object({ from: z.string(), to: z.string() })).meta({
            description: "When this monitor itself was not running: no data (neither up nor down)",
          }),
        })),
        ...errors(401, 404),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      const s = (await getService(deps.kv, me.id, id)).value;
      if (!s) fail(404, "no such service");
      const h = await serviceHistory(deps.kv, s, deps.clock.now());
      return c.json({
        uptime: h.uptime.all,
        days: h.days,
        changes: h.changes.map((x) => ({ ...x, at: iso(x.at) })),
        monitor_down: h.gaps.map(([from, to]) => ({ from: iso(from), to: iso(to) })),
      }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/services/{id}/rotate",
      tags: ["services"],
      summary: "A new hook address for a heartbeat; the old one stops at once",
      request: { params: Params },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), hook_url: z.string() })),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      const key = await rotateHook(deps, me.id, id);
      if (!key) fail(404, "no such service");
      c.header("Cache-Control", "no-store");
      return c.json({ ok: true as const, hook_url: hookUrl(deps, key) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/services/{id}",
      tags: ["services"],
      summary: "Stop watching a service",
      request: { params: Params },
      responses: { 200: jsonResponse(z.object({ ok: z.literal(true) })), ...errors(401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!await deleteService(deps, c.get("account").id, id)) fail(404, "no such service");
      return c.json({ ok: true as const }, 200);
    },
  );

  app.openapi(
    team({
      method: "get",
      path: "/services",
      tags: ["team"],
      summary: "Every account's services with account and full target, and the machine",
      responses: {
        200: jsonResponse(z.object({
          items: z.array(ServiceSchema.extend({
            target: z.string(),
            account: z.object({ id: z.number().int(), name: z.string(), email: z.string() }),
          })),
          machine: SnapshotSchema,
        })),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const now = deps.clock.now();
      const all = await listAllServices(deps.kv);
      const names = new Map<number, { id: number; name: string; email: string }>();
      const windows = new Map<number, Window[]>();
      const items = [];
      for (const { service, beat } of all) {
        let acc = names.get(service.account);
        if (!acc) {
          const a = (await getAccount(deps.kv, service.account)).value;
          acc = { id: service.account, name: a?.name ?? "", email: a?.email ?? "" };
          names.set(service.account, acc);
          windows.set(service.account, await listWindows(deps.kv, service.account));
        }
        const view = serviceView(service, beat, now, windows.get(service.account)!);
        items.push({ ...view, target: service.check, account: acc });
      }
      return c.json({ items, machine: await readSnapshot(deps.config) }, 200);
    },
  );

  return app;
}
