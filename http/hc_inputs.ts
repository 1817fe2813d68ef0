import { z } from "zod";
import { validTimeZone } from "../lib/schedule.ts";

/**
 * Healthchecks' request schemas (api/hc.ts): the create/update `Spec` with its limits and its
 * own words for what fails ("json validation error: name is too long"), and the flips filter.
 * Types are strict as there: a number is not a string, null is no value.
 */

const text = (name: string, max?: number) => {
  const s = z.string({ error: `${name} is not a string` });
  return max === undefined ? s : s.max(max, `${name} is too long`);
};
const bool = (name: string) => z.boolean({ error: `${name} is not a boolean` });
const seconds = (name: string) =>
  z.number({ error: `${name} is not a number` }).int(`${name} is not a number`)
    .min(60, `${name} is too small`).max(31536000, `${name} is too large`);
/** Keyword filters are not run here: only their "off" values are taken (docs/api.md). */
const off = <T extends z.ZodType>(schema: T, name: string, none: unknown) =>
  schema.refine((v) => v === none, `${name} is not supported here`);

export const HcSpecBody = z.object({
  name: text("name", 100),
  slug: text("slug", 100).regex(/^[a-z0-9_-]*$/, "slug does not match pattern"),
  tags: text("tags", 500),
  desc: text("desc"),
  timeout: seconds("timeout"),
  grace: seconds("grace"),
  schedule: text("schedule", 100),
  tz: text("tz").refine(validTimeZone, "tz is not a valid timezone"),
  manual_resume: bool("manual_resume"),
  methods: z.enum(["", "POST"], { error: "methods has unexpected value" }),
  channels: text("channels"),
  unique: z.array(
    z.enum(["name", "slug", "tags", "timeout", "grace"], {
      error: "an item in 'unique' has unexpected value",
    }),
    { error: "unique is not an array" },
  ),
  subject: off(text("subject", 200), "subject", ""),
  subject_fail: off(text("subject_fail", 200), "subject_fail", ""),
  start_kw: off(text("start_kw", 200), "start_kw", ""),
  success_kw: off(text("success_kw", 200), "success_kw", ""),
  failure_kw: off(text("failure_kw", 200), "failure_kw", ""),
  filter_subject: off(bool("filter_subject"), "filter_subject", false),
  filter_body: off(bool("filter_body"), "filter_body", false),
  filter_http_body: off(bool("filter_http_body"), "filter_http_body", false),
  filter_default_fail: off(bool("filter_default_fail"), "filter_default_fail", false),
}).partial().meta({
  description: "Healthchecks' check fields; every one optional. `api_key` may come here " +
    "instead of the X-Api-Key header. The body is read as JSON whatever its Content-Type",
});

/** The first failure of a spec in Healthchecks' words. */
export function specError(error: z.ZodError): string {
  return `json validation error: ${error.issues[0]?.message ?? "invalid value"}`;
}

/** A UNIX time as Healthchecks' flips filter takes it: an integer from 0 to 10000000000. */
const unixTime = z.string().regex(/^[0-9]+$/).transform(Number).refine((n) => n <= 10000000000);

export const FlipsQuery = z.object({
  start: unixTime.optional(),
  end: unixTime.optional(),
  seconds: z.string().regex(/^[0-9]+$/).transform(Number).refine((n) => n <= 31536000)
    .optional(),
});
