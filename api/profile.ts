import { z } from "zod";
import { ProfilePatchBody } from "../http/account_inputs.ts";
import { publicProfile } from "../kv/accounts/profile.ts";
import { getAccount, slugKey } from "../kv/accounts/accounts.ts";
import {
  MAX_AVATAR_BYTES,
  prepareAvatar,
  readAvatar,
  removeAvatar,
  setAvatar,
} from "../kv/files/avatars.ts";
import { catalogueChanged } from "../kv/catalogue/catalogue_doc.ts";
import { updateProfile } from "../kv/accounts/profile.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { body, createRoute, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";
import { SANDBOX_INLINE } from "../lib/file_kinds.ts";
import { ProfileSchema } from "../http/schemas.ts";
import { avatarUrl } from "../kv/accounts/accounts.ts";
import { joinBytes } from "../lib/bytes.ts";

const ProfileAnswer = z.object({
  ok: z.literal(true),
  name: z.string(),
  slug: z.string(),
  profile: ProfileSchema,
});

const PublicProfile = z.object({
  id: z.number().int(),
  name: z.string(),
  slug: z.string(),
  standing: z.string(),
  since: z.string(),
  avatar: z.string().nullable(),
  contact: z.string(),
  profile: z.object({
    org: z.string(),
    role: z.string(),
    about: z.string(),
    bio: z.string(),
    place: z.string(),
    website: z.string(),
    langs: z.array(z.string()),
  }),
  modules: z.array(z.object({ title: z.string(), slug: z.string(), published: z.string() })),
  journal: z.array(z.object({
    id: z.number().int(),
    text: z.string(),
    created: z.string(),
    updated: z.string().nullable(),
  })),
}).meta({ id: "PublicProfile" });

const binary = (description: string) => ({
  description,
  content: {
    "image/png": { schema: z.any().meta({ type: "string", format: "binary" }) },
    "image/jpeg": { schema: z.any().meta({ type: "string", format: "binary" }) },
    "image/gif": { schema: z.any().meta({ type: "string", format: "binary" }) },
  },
});

/** Reads a raw body up to `max` bytes; 413 past it, without reading the rest. */
async function readCapped(req: Request, max: number): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > max) fail(413, `body over ${max} bytes`);
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      fail(413, `body over ${max} bytes`);
    }
    chunks.push(value);
  }
  return joinBytes(chunks, size);
}

const ProfileAnswerPublic = z.object({ ok: z.literal(true), profile: PublicProfile });

export function profileRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "patch",
      path: "/me",
      tags: ["account"],
      summary: "Change name and profile fields; absent fields stay, an empty string clears",
      request: body(ProfilePatchBody),
      responses: { 200: jsonResponse(ProfileAnswer), ...errors(400, 401) },
    }),
    async (c) => {
      const patch = c.req.valid("json");
      const before = c.get("account");
      const next = await updateProfile(deps.kv, before.id, patch, deps.clock.now());
      if (!next) fail(401, "sign-in required: send a valid bearer token");
      // Contributor names are in the catalogue file too.
      if (next.name !== before.name) await catalogueChanged(deps);
      return c.json({
        ok: true as const,
        name: next.name,
        slug: next.slug,
        profile: { ...next.profile, langs: [...next.profile.langs] },
      }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/avatar",
      // Raw bytes: the route caps its own stream.
      bodyLimit: "upload",
      tags: ["account"],
      summary: "Upload a picture (raw PNG, JPEG or GIF bytes); stored at 256 x 256",
      request: { body: { required: true, ...binary("The image bytes") } },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), avatar: z.string() })),
        ...errors(400, 401, 413, 415),
      },
    }),
    async (c) => {
      const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (type && !type.startsWith("image/") && type !== "application/octet-stream") {
        fail(415, "Content-Type: send the image with an image/png, image/jpeg or image/gif type");
      }
      const bytes = await readCapped(c.req.raw, MAX_AVATAR_BYTES);
      const pic = await prepareAvatar(bytes);
      const next = await setAvatar(deps.kv, c.get("account").id, pic, deps.clock.now());
      if (!next) fail(401, "sign-in required: send a valid bearer token");
      return c.json({ ok: true as const, avatar: avatarUrl(next)! }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/avatar",
      tags: ["account"],
      summary: "Remove the picture",
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), removed: z.boolean() })),
        ...errors(401),
      },
    }),
    async (c) => {
      const removed = await removeAvatar(deps.kv, c.get("account").id);
      return c.json({ ok: true as const, removed }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/avatars/{id}",
      tags: ["public"],
      summary: "An account's picture",
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: binary("The picture"),
        304: { description: "Not modified (If-None-Match)" },
        ...errors(404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const pic = await readAvatar(deps.kv, id);
      if (!pic) fail(404, "no picture");
      const etag = `"${pic.ref.etag}"`;
      const headers = {
        "ETag": etag,
        "Cache-Control": "public, max-age=300",
        "Last-Modified": new Date(pic.ref.updated).toUTCString(),
        "Content-Security-Policy": SANDBOX_INLINE,
      };
      const inm = c.req.header("if-none-match");
      if (inm && inm.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) {
        return c.body(null, 304, headers);
      }
      return c.body(pic.bytes as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "Content-Type": pic.ref.type,
        "Content-Length": String(pic.bytes.length),
      });
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/profiles/{id}",
      tags: ["public"],
      summary: "Public profile of a named account",
      request: { params: z.object({ id: idParam }) },
      responses: { 200: jsonResponse(ProfileAnswerPublic), ...errors(404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const a = (await getAccount(deps.kv, id)).value;
      if (!a || !a.name) fail(404, "no such profile");
      return c.json({ ok: true as const, profile: await publicProfile(deps, a) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/profiles/slug/{name}",
      tags: ["public"],
      summary: "Public profile by its slug",
      request: {
        params: z.object({
          name: z.string().regex(/^[a-z0-9-]{1,80}$/).meta({
            example: "ada-lovelace",
          }),
        }),
      },
      responses: { 200: jsonResponse(ProfileAnswerPublic), ...errors(404) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const idx = await deps.kv.get<number>(slugKey(name));
      const a = idx.value === null ? null : (await getAccount(deps.kv, idx.value)).value;
      if (!a || !a.name || a.slug !== name) fail(404, "no such profile");
      return c.json({ ok: true as const, profile: await publicProfile(deps, a) }, 200);
    },
  );

  return app;
}
