import { z } from "zod";
import { LANGS, PROFILE_ROLES } from "../kv/accounts/profile.ts";
import { canonicalEmail, emailSchema } from "../lib/email.ts";
import { chars, INVISIBLE_MESSAGE, multiLine, oneLineField, visibleText } from "./text.ts";

/**
 * The request schemas of an account's own things, validated by the API's routes (api/sign_in.ts,
 * api/profile.ts, api/journal.ts, api/applications.ts, api/invites.ts, api/api_keys.ts) and the
 * pages (web/_sign_in_page.tsx, web/me_profile.tsx, web/me_journal.tsx, web/me_standing.tsx,
 * web/me_api_keys.tsx, web/_team_applications.tsx) alike.
 */

/**
 * A person's name: 2 to 120 characters after trimming, no control characters (CR/LF would
 * break the mails it is written into) and no lone surrogates (not valid text).
 */
const nameSchema = z.string().trim().min(2).max(120)
  .refine((s) => s.isWellFormed() && !/\p{Cc}/u.test(s), {
    message: "must be plain text without control characters",
  }).refine(visibleText, { message: INVISIBLE_MESSAGE });

export const LinkRequest = z.object({
  email: emailSchema,
  purpose: z.enum(["login", "address"]).default("login"),
  age_ok: z.boolean().optional(),
  name: nameSchema.optional(),
}).meta({ id: "LinkRequest" });

const langSet = new Set(LANGS);

export const ProfilePatchBody = z.object({
  name: z.string().trim().refine((s) => s === "" || (chars(s) >= 2 && chars(s) <= 120), {
    message: "must be 2 to 120 characters (empty clears)",
  }).refine((s) => s.isWellFormed() && !/\p{Cc}/u.test(s), { message: "must be one line of text" })
    .refine(visibleText, { message: INVISIBLE_MESSAGE }).optional(),
  org: oneLineField(200).optional(),
  role: z.enum(["", ...PROFILE_ROLES]).optional(),
  about: multiLine(280).optional(),
  bio: multiLine(4000).optional(),
  place: oneLineField(120).optional(),
  contact: z.string().trim().max(320).transform((v, ctx) => {
    if (v === "") return "";
    const e = canonicalEmail(v);
    if (e === null) {
      ctx.addIssue({ code: "custom", message: "must be an e-mail address (empty clears)" });
      return z.NEVER;
    }
    return e;
  }).optional(),
  website: z.string().trim().max(500).refine(
    (v) =>
      v === "" || (URL.canParse(v) && new URL(v).protocol === "https:" && !new URL(v).username),
    { message: "must be an https:// address (empty clears)" },
  ).optional(),
  langs: z.union([
    z.array(
      z.string().trim().toLowerCase().refine((l) => langSet.has(l), {
        message: "must be a two-letter language code, such as en, de or fr",
      }),
    ).max(20),
    z.literal("").transform(() => [] as string[]),
  ]).transform((l) => [...new Set(l)]).optional(),
}).meta({ id: "ProfilePatch" });

const entryText = multiLine(2000, 1);

export const NewEntry = z.object({ text: entryText, public: z.boolean().default(true) })
  .meta({ id: "NewJournalEntry" });
export const EntryPatch = z.object({ text: entryText.optional(), public: z.boolean().optional() })
  .meta({ id: "JournalPatch" });

export const ApplyBody = z.object({
  text: multiLine(2000, 20),
}).meta({ id: "ApplicationRequest" });

export const DecisionBody = z.object({
  outcome: z.enum(["approved", "declined"]),
  reason: z.string().trim().min(3).max(2000),
}).meta({ id: "ApplicationDecision" });

export const InviteBody = z.object({
  email: emailSchema,
  message: multiLine(500).default(""),
}).meta({ id: "InviteRequest" });

/** A key of the Healthchecks-compatible API (POST /api/me/api-keys, /me/api-keys). */
export const ApiKeyInput = z.object({
  name: oneLineField(80).default("").meta({ description: "A name to tell keys apart" }),
  readonly: z.boolean().default(false).meta({
    description: "true: a read-only key (hcr_), which lists and reads checks only",
  }),
}).meta({ id: "ApiKeyInput" });

/** The token of the owner's first-run link (kv/accounts/owner_claim.ts), as the claim page posts it. */
export const OwnerClaimBody = z.object({
  claim: z.string().trim().min(1, { message: "the link's token is missing" }).max(100, {
    message: "this is not a token the server printed",
  }),
});
