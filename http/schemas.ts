import { z } from "zod";

/**
 * Response schemas shared by several API areas (and checked against the domain's views in
 * tests/views_test.ts). A schema used by one area only stays in that area's module.
 */

export const ActorSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  created: z.string(),
  roles: z.array(z.string()),
  standing: z.string(),
}).meta({ id: "Actor" });

export const ProfileSchema = z.object({
  org: z.string(),
  role: z.string(),
  about: z.string(),
  bio: z.string(),
  place: z.string(),
  contact: z.string(),
  website: z.string(),
  langs: z.array(z.string()),
}).meta({ id: "Profile" });

export const AccountSchema = ActorSchema.extend({
  kind: z.string(),
  slug: z.string(),
  profile: ProfileSchema,
  avatar: z.string().nullable(),
}).meta({ id: "Account" });

/** How an application shows to its applicant (kv/accounts/applications.ts applicationView). */
export const ApplicationStateSchema = z.object({
  id: z.number().int(),
  created: z.string(),
  outcome: z.enum(["approved", "declined"]).nullable(),
  reason: z.string().nullable(),
  decided: z.string().nullable(),
}).meta({ id: "ApplicationState" });
