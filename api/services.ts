import { z } from "zod";
import { type Account, getAccount, isOwner, isTeam } from "../kv/accounts.ts";
import { RULES } from "../kv/rate_limit.ts";
import {
  countServices,
  createService,
  deleteService,
  getBeat,
  getService,
  GROUPS,
  INTERVALS,
  listAllServices,
  listServices,
  MAX_SERVICES,
  patchService,
  PLACES,
  recordResult,
  rotateHook,
  type ServicePatch,
  type ServiceView,
  serviceView,
} from "../kv/services.ts";
import {
  cronError,
  GRACE_MAX,
  GRACE_MIN,
  MAX_CRON,
  type Schedule,
  validTimeZone,
} from "../lib/schedule.ts";
import { channelsOf } from "../kv/channels.ts";
import { readHistory } from "../kv/history.ts";
import { listEvents } from "../kv/hooks.ts";
import { withDurations } from "../lib/runs.ts";
import { runCheck } from "../lib/checks/mod.ts";
import { iso } from "../lib/clock.ts";
import { overallUptime } from "../lib/history.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "./_errors.ts";
import { readSnapshot } from "../lib/machine.ts";
import { KINDS, parseCheck, resolveTarget, type Target, TargetError } from "../lib/targets.ts";
import { bearer, body, createRoute, errors, idParam, json, router } from "./_api.ts";
import { multiLine, oneLine } from "./_text.ts";

// The same as _api.ts `team`, typed as createRoute wants it.
const teamSecurity: Record<string, string[]>[] = [{ bearer: [] }, { serviceToken: [] }];
import { limit, requireTeam, requireToken, withinLimit } from "./_guards.ts";

const ServiceSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  what: z.string(),
  group: z.string(),
  place: z.string().nullable(),
  kind: z.enum(KINDS),
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
    description: "Consecutive failed checks before warn or off (1 to 5)",
  }),
  failed_checks: z.number().int().meta({ description: "Failed checks in a row so far" }),
  cert_expires: z.string().nullable().meta({
    description: "tls: when the certificate last seen expires",
  }),
  schedule: z.string().nullable().meta({
    description: "Heartbeats: a cron expression used instead of the interval",
  }),
  tz: z.string().nullable().meta({ description: "The schedule's IANA time zone" }),
  grace: z.number().int().nullable().meta({
    description: "Minutes after a scheduled time before a missing run is off",
  }),
  channels: z.array(z.number().int()).meta({
    description: "Webhook channels alerted besides mail (GET /api/me/channels)",
  }),
  badge_path: z.string().nullable().meta({
    description: "Path of the public SVG badge (POST .../badge makes or replaces it)",
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

const interval = z.number().int().refine((v) => (INTERVALS as readonly number[]).includes(v), {
  message: `must be one of ${INTERVALS.join(", ")} (minutes)`,
});
// One line without control characters or lone surrogates, as every other name of the service:
// it goes into alert mail subjects and the team's listing.
const name = oneLine(80).min(2);
const what = multiLine(160);
const place = z.enum(PLACES).nullable();
const schedule = z.string().max(MAX_CRON).nullable().meta({
  description: "Heartbeats only: a 5-field cron expression (Healthchecks' semantics: due at " +
    "each scheduled time, off after the grace time); null: the fixed interval",
  example: "0 3 * * *",
});
const tz = z.string().max(64).meta({ description: "IANA time zone of the schedule" });
const grace = z.number().int().min(GRACE_MIN).max(GRACE_MAX).meta({
  description: "Minutes after a scheduled time before a missing run turns the heartbeat off",
});
const channels = z.array(z.number().int().positive()).max(10).meta({
  description: "Ids of the account's webhook channels to alert besides mail",
});
const threshold = z.number().int().min(1).max(5).meta({
  description: "Consecutive failed checks before a checked service turns warn or off",
});

export const CreateBody = z.object({
  name,
  check: z.string().max(2000).meta({
    description: "url:<address>, mcp:<https address>, tcp:<host>:<port>, tls:<host>[:<port>] " +
      "or webhook:",
    example: "url:https://example.org/health",
  }),
  what: what.default(""),
  group: z.enum(GROUPS).default("Public"),
  place: place.optional(),
  interval: interval.default(60),
  alerts: z.boolean().default(true),
  threshold: threshold.default(1),
  schedule: schedule.optional(),
  tz: tz.default("UTC"),
  grace: grace.default(60),
  channels: channels.default([]),
}).meta({ id: "NewService" });

const fixed = z.unknown().refine((v) => v === undefined, {
  message: "kind and target cannot change; create a new service",
}).meta({ description: "Cannot change: sending it answers 400" });
export const PatchBody = z.object({
  name: name.optional(),
  what: what.optional(),
  group: z.enum(GROUPS).optional(),
  place: place.optional(),
  interval: interval.optional(),
  alerts: z.boolean().optional(),
  threshold: threshold.optional(),
  schedule: schedule.optional(),
  tz: tz.optional(),
  grace: grace.optional(),
  channels: channels.optional(),
  check: fixed.optional(),
  kind: fixed.optional(),
  target: fixed.optional(),
}).meta({ id: "ServicePatch" });

const Params = z.object({ id: idParam });
const Item = z.object({ ok: z.literal(true), item: ServiceSchema });

/** The parsed check, with its address validated for this account (400 otherwise). */
export async function validTarget(deps: Deps, account: Account, check: string): Promise<Target> {
  let target: Target;
  try {
    target = parseCheck(check);
  } catch (err) {
    if (err instanceof TargetError) fail(400, `check: ${err.message}`, { field: "check" });
    throw err;
  }
  if (target.kind !== "webhook") {
    const r = await resolveTarget(deps.resolver, target.host, isOwner(account));
    if (!r.ok) fail(400, `check: ${r.error}`, { field: "check" });
  }
  return target;
}

/** A valid schedule for a service of this kind, or 400 naming the field. */
export function validSchedule(kind: string, cron: string, tz: string, grace: number): Schedule {
  if (kind !== "webhook") {
    fail(400, "schedule: only a heartbeat (webhook:) has a schedule", { field: "schedule" });
  }
  if (!validTimeZone(tz)) fail(400, "tz: not a known IANA time zone", { field: "tz" });
  const why = cronError(cron, tz);
  if (why) fail(400, `schedule: ${why}`, { field: "schedule" });
  return { cron: cron.trim().replace(/\s+/g, " "), tz, grace };
}

/** The ids, each one of the account's channels (400 naming `channels` otherwise). */
async function validChannels(deps: Deps, account: number, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  const found = await channelsOf(deps.kv, account, unique);
  if (found.length !== unique.length) {
    fail(400, "channels: not one of your channels (GET /api/me/channels)", {
      field: "channels",
    });
  }
  return unique;
}

export const hookUrl = (deps: Deps, key: string) => `${deps.config.baseUrl}/api/hooks/${key}`;

/**
 * Watches a new service for the account (POST /api/me/services and the page's form): checks
 * the target and schedule, the per-account limit, runs the first check (a checked kind, within
 * the manual-check limit) and stores it. The hook address comes only here, once.
 */
export async function addService(
  deps: Deps,
  me: Account,
  input: z.output<typeof CreateBody>,
): Promise<{ item: ServiceView; hook_url: string | null }> {
  const target = await validTarget(deps, me, input.check);
  const chans = await validChannels(deps, me.id, input.channels);
  const sched = input.schedule != null
    ? validSchedule(target.kind, input.schedule, input.tz, input.grace)
    : null;
  // Fail fast before a check runs; the atomic below enforces the limit for real.
  if (await countServices(deps.kv, me.id) >= MAX_SERVICES) {
    fail(409, `at most ${MAX_SERVICES} services per account; remove one first`, {
      max: MAX_SERVICES,
    });
  }
  // The check at creation counts as a manual check: create-and-delete loops must not probe
  // a target more often than "check now" may. Past the limit the service is still created
  // and the runner checks it at the next minute.
  const first = target.kind === "webhook" || !await withinLimit(deps, RULES.manualCheck, me.id)
    ? null
    : await runCheck(deps, target.check, isOwner(me));
  const { service, key } = await createService(deps, me.id, {
    name: input.name,
    what: input.what,
    group: input.group,
    place: input.place ?? null,
    interval: input.interval,
    alerts: input.alerts,
    kind: target.kind,
    check: target.check,
    hint: target.hint,
    threshold: input.threshold,
    schedule: sched,
    channels: chans,
  }, first);
  const item = serviceView(service, null, deps.clock.now());
  return { item, hook_url: key ? hookUrl(deps, key) : null };
}

/** Runs a checked service's check now (POST /api/me/services/{id}/check and the page). */
export async function checkServiceNow(deps: Deps, me: Account, id: number): Promise<ServiceView> {
  const s = (await getService(deps.kv, me.id, id)).value;
  if (!s) fail(404, "no such service");
  if (s.kind === "webhook") {
    fail(400, "a heartbeat service is not checked: it is called at its hook address");
  }
  await limit(deps, RULES.manualCheck, me.id);
  const result = await runCheck(deps, s.check, isOwner(me));
  const saved = await recordResult(deps, me.id, id, result, null);
  if (!saved) fail(404, "no such service");
  return serviceView(saved, null, deps.clock.now());
}

/** Changes a service (PATCH /api/me/services/{id} and the page's form). */
export async function editService(
  deps: Deps,
  me: Account,
  id: number,
  body: z.output<typeof PatchBody>,
): Promise<ServiceView> {
  const { check: _c, kind: _k, target: _t, schedule, tz, grace, channels: chans, ...rest } = body;
  const patch: ServicePatch = rest;
  if (chans !== undefined) patch.channels = await validChannels(deps, me.id, chans);
  if (schedule !== undefined || tz !== undefined || grace !== undefined) {
    const cur = (await getService(deps.kv, me.id, id)).value;
    if (!cur) fail(404, "no such service");
    const cron = schedule === undefined ? cur.schedule?.cron ?? null : schedule;
    if (cron === null) {
      if (tz !== undefined || grace !== undefined) {
        fail(400, "schedule: tz and grace go with a schedule", { field: "schedule" });
      }
      patch.schedule = null;
    } else {
      patch.schedule = validSchedule(
        cur.kind,
        cron,
        tz ?? cur.schedule?.tz ?? "UTC",
        grace ?? cur.schedule?.grace ?? 60,
      );
    }
  }
  const s = await patchService(deps, me.id, id, patch);
  if (!s) fail(404, "no such service");
  return serviceView(s, await getBeat(deps.kv, s), deps.clock.now());
}

export function servicesRoutes(deps: Deps) {
  const app = router();
  const auth = [requireToken(deps)];

  app.openapi(
    createRoute({
      method: "get",
      path: "/me/services",
      tags: ["services"],
      summary: "The caller's watched services, the allowed values, and (owner) the machine",
      security: bearer,
      middleware: auth,
      responses: {
        200: json(z.object({
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
      const items = (await listServices(deps.kv, me.id))
        .map(({ service, beat }) => serviceView(service, beat, now));
      return c.json({
        items,
        team: isTeam(me),
        machine: isOwner(me) ? await readSnapshot(deps.config) : null,
        kinds: [...KINDS],
        groups: [...GROUPS],
        places: [...PLACES],
        intervals: [...INTERVALS],
        max: MAX_SERVICES,
      }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/me/services",
      tags: ["services"],
      summary: "Watch a service; a checked kind is checked once before the answer",
      description: "hook_url is present only for a heartbeat (webhook:) and only in this answer.",
      security: bearer,
      middleware: auth,
      request: body(CreateBody),
      responses: {
        200: json(Item.extend({ hook_url: z.string().optional() }), "Created"),
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
    createRoute({
      method: "patch",
      path: "/me/services/{id}",
      tags: ["services"],
      summary: "Change name, what, group, place, interval or alerts (not kind or target)",
      security: bearer,
      middleware: auth,
      request: { params: Params, ...body(PatchBody) },
      responses: { 200: json(Item), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const item = await editService(deps, c.get("account"), id, c.req.valid("json"));
      return c.json({ ok: true as const, item }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/me/services/{id}/check",
      tags: ["services"],
      summary: "Run the check now (60 an hour per account; not for heartbeats)",
      security: bearer,
      middleware: auth,
      request: { params: Params },
      responses: { 200: json(Item), ...errors(400, 401, 404, 429) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const item = await checkServiceNow(deps, c.get("account"), id);
      return c.json({ ok: true as const, item }, 200);
    },
  );

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
  }).meta({ id: "HeartbeatEvent" });
  app.openapi(
    createRoute({
      method: "get",
      path: "/me/services/{id}/events",
      tags: ["services"],
      summary: "A heartbeat's last 100 signals, newest first",
      security: bearer,
      middleware: auth,
      request: { params: Params },
      responses: { 200: json(z.object({ items: z.array(EventSchema) })), ...errors(401, 404) },
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
        })),
      }, 200);
    },
  );

  const DaySchema = z.object({
    date: z.string(),
    uptime: z.number().nullable().meta({ description: "Fraction up (ok or warn), 0 to 1" }),
    down_s: z.number().int(),
    checks: z.number().int(),
    median_ms: z.number().int().nullable(),
    p95_ms: z.number().int().nullable(),
  }).meta({ id: "ServiceDay" });
  app.openapi(
    createRoute({
      method: "get",
      path: "/me/services/{id}/history",
      tags: ["services"],
      summary: "Every state change of the last 90 days and the figures per day",
      description: "Days are UTC dates, oldest first, the last one today (so far). uptime is " +
        "the time up (ok or warn) over the time with a known state; median and 95th " +
        "percentile durations are of that day's checks (checked kinds).",
      security: bearer,
      middleware: auth,
      request: { params: Params },
      responses: {
        200: json(z.object({
          uptime: z.number().nullable().meta({ description: "Mean of the days with data" }),
          days: z.array(DaySchema),
          changes: z.array(z.object({
            at: z.string(),
            state: z.enum(["ok", "warn", "off", "wait"]),
            status: z.string(),
          })),
        })),
        ...errors(401, 404),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      if (!(await getService(deps.kv, me.id, id)).value) fail(404, "no such service");
      const h = await readHistory(deps.kv, me.id, id, deps.clock.now());
      return c.json({
        uptime: overallUptime(h.days),
        days: h.days,
        changes: h.changes.map((x) => ({ ...x, at: iso(x.at) })),
      }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/me/services/{id}/rotate",
      tags: ["services"],
      summary: "A new hook address for a heartbeat; the old one stops at once",
      security: bearer,
      middleware: auth,
      request: { params: Params },
      responses: {
        200: json(z.object({ ok: z.literal(true), hook_url: z.string() })),
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
    createRoute({
      method: "delete",
      path: "/me/services/{id}",
      tags: ["services"],
      summary: "Stop watching a service",
      security: bearer,
      middleware: auth,
      request: { params: Params },
      responses: { 200: json(z.object({ ok: z.literal(true) })), ...errors(401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!await deleteService(deps, c.get("account").id, id)) fail(404, "no such service");
      return c.json({ ok: true as const }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/services",
      tags: ["team"],
      summary: "Every account's services with account and full target, and the machine",
      security: teamSecurity,
      middleware: [requireTeam(deps)],
      responses: {
        200: json(z.object({
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
      const items = [];
      for (const { service, beat } of all) {
        let acc = names.get(service.account);
        if (!acc) {
          const a = (await getAccount(deps.kv, service.account)).value;
          acc = { id: service.account, name: a?.name ?? "", email: a?.email ?? "" };
          names.set(service.account, acc);
        }
        items.push({ ...serviceView(service, beat, now), target: service.check, account: acc });
      }
      return c.json({ items, machine: await readSnapshot(deps.config) }, 200);
    },
  );

  return app;
}
