import { z } from "zod";
import { GROUPS, INTERVALS, MAX_TAG, MAX_TAGS, PLACES } from "../kv/service/commands.ts";
import { GRACE_MAX, GRACE_MIN, MAX_CRON, validTimeZone } from "../lib/schedule.ts";
import { MAX_NOTE_TEXT, NOTE_KINDS } from "../kv/status/notes.ts";
import { emailSchema } from "../lib/email.ts";
import { multiLine, oneLineField } from "./text.ts";
import { HC_SLUG_RE } from "../lib/text.ts";
import {
  HTTP_METHODS,
  JSON_OPERATORS,
  MAX_BODY,
  MAX_HEADER_VALUE,
  MAX_KEYWORD,
  MAX_QUERY,
} from "../lib/checks/http_options.ts";

/**
 * The request schemas of a watched service, validated by POST/PATCH /api/me/services
 * (api/services.ts) and the services pages (web/_me_services_add.tsx,
 * web/_me_service_page.tsx, web/me_watch.tsx) alike.
 */

const interval = z.number().int().refine((v) => (INTERVALS as readonly number[]).includes(v), {
  message: `must be one of ${INTERVALS.join(", ")} (minutes)`,
});
// One line without control characters or lone surrogates, as every other name of the service:
// it goes into alert mail subjects and the team's listing.
const name = oneLineField(80).min(2);
const what = multiLine(160);
const place = z.enum(PLACES).nullable();
const schedule = z.string().max(MAX_CRON).nullable().meta({
  description: "Heartbeats only: a 5-field cron expression, or a systemd OnCalendar " +
    "expression (one or more, one a line, as Healthchecks takes them: `Mon..Fri 09:00`, " +
    "`*-*-1/7 15:00 Europe/Riga`) (Healthchecks' semantics: due at each scheduled time, off " +
    "after the grace time); null: the fixed interval",
  example: "0 3 * * *",
});
const tz = z.string().max(64).meta({
  description: "IANA time zone of the schedule (default UTC); only with a schedule",
});
const grace = z.number().int().min(GRACE_MIN).max(GRACE_MAX).meta({
  description: "Minutes after a scheduled time before a missing run turns the heartbeat off " +
    "(default 60); only with a schedule",
});
const periodSeconds = z.number().int().min(60).max(31536000).meta({
  description: "Heartbeats on the interval: the exact period in seconds, 60 s to 365 days (as " +
    "Healthchecks' timeout); interval then reads the value of the list of intervals nearest below it",
  example: 600,
});
const graceSeconds = z.number().int().min(60).max(31536000).meta({
  description: "Heartbeats: the exact grace in seconds, 60 s to 365 days (as Healthchecks' " +
    "grace): after a scheduled time, or past the period, before a missing run is off",
  example: 3600,
});
const dependsOn = z.array(z.number().int().positive()).max(10).meta({
  description: "Ids of the account's services this one depends on (the NAS on the LAN router): " +
    "while one of them is off, this one's off alerts fold into its and it reads unreachable; " +
    "never a cycle",
});
const channels = z.array(z.number().int().positive()).max(10).meta({
  description: "Ids of the account's alert channels to alert besides mail (GET " +
    "/api/me/channels); [] none. Omitted on create: the channels marked " +
    "for_new_services (the account's first channel is, and each one added after unless " +
    "unticked)",
});
const remind = z.number().int().min(1).max(24).nullable().meta({
  description: "Hours between reminders (mail and channels) while the service stays off after " +
    "its off alert, 1 to 24; null: no reminders",
});
const threshold = z.number().int().min(1).max(5).meta({
  description: "Consecutive failed checks before a checked service turns warn or off; for a " +
    "heartbeat, consecutive failed or missing runs before it turns off",
});
const minDuration = z.number().int().min(1).max(7 * 24 * 3600).nullable().meta({
  description: "Heartbeats only: seconds a run takes at least; a start followed by a success " +
    "sooner counts as a failed run. Shorter than the run's grace; null: no minimum",
  example: 300,
});

const slug = z.string().regex(HC_SLUG_RE, {
  message: "must be up to 100 lower-case letters, digits, - and _ (as Healthchecks slugs are)",
}).meta({
  description: "Heartbeats: the slug of its Healthchecks ping address " +
    "/ping/<ping key>/<slug> (default: made from the name); not unique",
  example: "db-backup",
});
const methods = z.enum(["", "POST"]).meta({
  description: 'Heartbeats: "POST" records POST pings only (Healthchecks\' `methods`: other ' +
    "methods on /ping addresses are answered OK and recorded as ignored; on /api/hooks " +
    'answered 405); "" (the default) any method',
});

export { MAX_TAG, MAX_TAGS };

/**
 * An address check's options (url: only), as Uptime Kuma's http, keyword and json-query
 * monitors have them; the rules beyond each field's form are lib/checks/http_options.ts's.
 */
export const HttpOptionsBody = z.object({
  method: z.enum(HTTP_METHODS).optional().meta({ description: "The request's method (GET)" }),
  headers: z.record(z.string().max(64), z.string().max(MAX_HEADER_VALUE)).optional().meta({
    description: "Request headers by name, at most 20; Host, framing headers and credentials " +
      "(Authorization, Cookie) cannot be set: the address names the host, and checks keep no " +
      "secrets",
    example: { Accept: "application/json" },
  }),
  body: z.string().max(MAX_BODY).optional().meta({
    description: "The request's body (POST, PUT, PATCH, DELETE), up to 4000 characters",
  }),
  accepted: z.array(z.string().max(7)).min(1).max(10).optional().meta({
    description: 'Accepted status codes as Kuma writes them ("200-299", "404"); another status ' +
      "is off. Absent: 2xx and 3xx ok, 4xx warn, 5xx off",
    example: ["200-299"],
  }),
  keyword: z.string().min(1).max(MAX_KEYWORD).optional().meta({
    description: "A text the body must contain (the first 256 KB are read)",
    example: "OK",
  }),
  keyword_absent: z.boolean().optional().meta({
    description: "true: the keyword must not be in the body (Kuma's invertKeyword)",
  }),
  keyword_case: z.boolean().optional().meta({
    description: "false: the keyword is found whatever its case (default true, as Kuma)",
  }),
  json_query: z.string().min(1).max(MAX_QUERY).optional().meta({
    description: "A JSONata query of the body (Kuma's json-query), giving one value",
    example: "status",
  }),
  json_operator: z.enum(JSON_OPERATORS).optional().meta({
    description: "How the query's value compares with json_expected (default ==)",
  }),
  json_expected: z.string().max(MAX_KEYWORD).optional().meta({
    description: "The value the query must give (compared as text; <, >, <= and >= as numbers)",
    example: "up",
  }),
  max_ms: z.number().int().min(1).max(10_000).optional().meta({
    description: "Warn when the answer takes longer than this many milliseconds",
  }),
  follow_redirects: z.boolean().optional().meta({
    description: "false: a 3xx answer is the answer; default true, up to max_redirects",
  }),
  max_redirects: z.number().int().min(0).max(5).optional().meta({
    description: "Redirects followed at most (0 to 5, default 5), each hop checked as the first",
  }),
  cert_expiry_days: z.number().int().min(1).max(365).optional().meta({
    description: "https: warn when the certificate expires within this many days",
  }),
}).strict().meta({ id: "HttpCheckOptions" });

/** One free tag: a word without spaces or control characters. */
export const tag = z.string().min(1, "a tag cannot be empty").max(
  MAX_TAG,
  `a tag has at most ${MAX_TAG} characters`,
).regex(/^[^\s\p{Cc}\p{Cf}\p{Cs}]+$/u, "a tag is one word: no spaces or control characters")
  // The document's builder (@hono/zod-openapi) would write the regex's `u` flag into the pattern.
  .meta({ pattern: "^[^\\s\\p{Cc}\\p{Cf}\\p{Cs}]+$" });

const tags = z.array(tag).max(MAX_TAGS, `at most ${MAX_TAGS} tags`).meta({
  description: "Free tags, each one word (no spaces), up to 50 characters; at most 20. " +
    "Healthchecks' API shows them space-separated and filters by them (?tag=)",
  example: ["backup", "prod"],
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
  // No defaults here: given without a schedule they answer 400 (kv/service/rules.ts).
  tz: tz.optional(),
  grace: grace.optional(),
  period_seconds: periodSeconds.optional(),
  grace_seconds: graceSeconds.optional(),
  channels: channels.optional(),
  depends_on: dependsOn.default([]),
  remind: remind.default(null),
  min_duration: minDuration.optional(),
  slug: slug.optional(),
  methods: methods.optional(),
  tags: tags.default([]),
  http: HttpOptionsBody.optional(),
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
  period_seconds: periodSeconds.optional(),
  grace_seconds: graceSeconds.optional(),
  channels: channels.optional(),
  depends_on: dependsOn.optional(),
  remind: remind.optional(),
  min_duration: minDuration.optional(),
  slug: slug.optional(),
  methods: methods.optional(),
  tags: tags.optional(),
  http: HttpOptionsBody.nullable().optional().meta({
    description: "url checks: the request's options and assertions, all at once (null: none)",
  }),
  paused: z.boolean().optional().meta({
    description: "Heartbeats only: true pauses it (no alerts, no lateness, no missing runs), " +
      "false resumes it afresh",
  }),
  check: fixed.optional(),
  kind: fixed.optional(),
  target: fixed.optional(),
}).meta({ id: "ServicePatch" });

/** An incident note of the status page (POST /api/me/status-page/notes, /me/status-page). */
export const NoteBody = z.object({
  kind: z.enum(NOTE_KINDS).meta({
    description: "investigating, identified or resolved; note: free text without a label",
  }),
  text: multiLine(MAX_NOTE_TEXT, 1),
}).meta({ id: "StatusNoteInput" });

/** The status page's link to the owner's own site: an http(s) address, or empty for none. */
export const StatusLink = z.string().trim().max(2000).refine(
  (v) => v === "" || (/^https?:\/\/\S+$/i.test(v) && URL.canParse(v)),
  { error: "must be an address starting with https:// (or empty for none)" },
).meta({ description: "A link to the owner's own site shown in the page's header; empty: none" });

/** Following a status page by mail (POST /api/status/{slug}/follow, /status/<slug>). */
export const FollowBody = z.object({ email: emailSchema }).meta({ id: "FollowInput" });

/** The token of a mailed follow link (confirmation or unfollow). */
export const FollowToken = z.object({ token: z.string().min(1).max(200) });

const instant = z.iso.datetime({ offset: true, error: "must be a date and time" }).transform((s) =>
  Date.parse(s)
).meta({
  type: "string",
  format: "date-time",
  example: "2026-03-07T22:00:00+01:00",
});

/** A maintenance window (POST /api/me/maintenance, /me/maintenance). */
export const WindowBody = z.object({
  name: oneLineField(80).min(2, "must be at least 2 characters"),
  services: z.array(z.number().int().positive()).max(30).default([]).meta({
    description: "Ids of the services it covers",
  }),
  groups: z.array(z.string().max(40)).max(GROUPS.length).default([]).meta({
    description: "Groups whose services it covers",
  }),
  places: z.array(z.string().max(40)).max(PLACES.length).default([]).meta({
    description: "Places whose services it covers",
  }),
  from: instant.nullish().meta({ description: "Once: when it starts" }),
  to: instant.nullish().meta({ description: "Once: when it ends" }),
  cron: z.string().max(MAX_CRON).nullish().meta({
    description: "On a schedule: a 5-field cron expression of the starts",
    example: "0 2 * * 0",
  }),
  tz: z.string().max(64).refine(validTimeZone, "must be a known time zone, e.g. Europe/Berlin")
    .nullish().meta({ description: "The schedule's IANA time zone (UTC)" }),
  minutes: z.number().int().nullish().meta({
    description: "On a schedule: how long each run lasts, 1 to 10080 minutes",
  }),
}).meta({ id: "MaintenanceWindowInput" });
