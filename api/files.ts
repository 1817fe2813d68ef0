import { z } from "zod";
import {
  changeFile,
  CHUNK,
  deleteFile,
  fileItem,
  getUsage,
  listFiles,
  MAX_FILE,
  MAX_LABEL,
  QUOTA,
  uploadFile,
} from "../kv/files/files.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import type { Config } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { body, createRoute, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { guarded, limit, optionalToken } from "../http/guards.ts";
import { Patch, serveFile, uploadOf } from "../http/files.ts";

const FileSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  label: z.string(),
  ext: z.string().meta({ description: "the ending, lower-case, without the dot" }),
  type: z.string(),
  size: z.number().int(),
  public: z.boolean(),
  created: z.string(),
  url: z.string().meta({ example: "/api/files/1/7/notes.pdf" }),
}).meta({ id: "File" });

const Space = { used: z.number().int(), quota: z.number().int() };

const UploadHeaders = z.object({
  "content-length": z.string().optional().meta({ description: "required (411 without)" }),
  "x-file-name": z.string().optional().meta({
    description: "file name, URL-encoded; its ending decides the kind (415 when not accepted)",
  }),
  "x-file-label": z.string().optional().meta({
    description: `title up to ${MAX_LABEL} characters, URL-encoded`,
  }),
  "x-public": z.string().optional().meta({ description: "1 makes the file public" }),
});

const FileParams = z.object({
  account: z.string().regex(/^[1-9][0-9]{0,14}$/).transform(Number).meta({
    type: "string",
  }),
  file: z.string().regex(/^[1-9][0-9]{0,14}$/).transform(Number).meta({
    type: "string",
  }),
  name: z.string().min(1).max(1000),
});

const binary = (description: string) => ({
  description,
  content: {
    "application/octet-stream": { schema: z.string().meta({ format: "binary" }) },
  },
});

/** `where` of GET /api/me/files: which storage holds the bytes, without paths or hosts. */
function storageText(config: Config): string {
  const p = config.kvPath;
  const kv = p === undefined
    ? "the platform's Deno KV"
    : p === ":memory:"
    ? "Deno KV in memory (lost when the server stops)"
    : /^https?:/.test(p)
    ? "a remote Deno KV (KV Connect)"
    : "Deno KV in a local SQLite file";
  return `${kv}, in chunks of ${CHUNK} bytes`;
}

/** Routes of file storage and serving. */

export function filesRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);
  const { kv } = deps;

  app.openapi(
    bearer({
      method: "get",
      path: "/me/files",
      tags: ["files"],
      summary: "The account's files, newest first, with the space used",
      responses: {
        200: jsonResponse(z.object({
          ok: z.literal(true),
          items: z.array(FileSchema),
          ...Space,
          max_file: z.number().int(),
          where: z.string(),
        })),
        ...errors(401),
      },
    }),
    async (c) => {
      const id = c.get("account").id;
      const [files, usage] = await Promise.all([listFiles(kv, id), getUsage(kv, id)]);
      return c.json({
        ok: true as const,
        items: files.map(fileItem),
        used: usage.bytes,
        quota: QUOTA,
        max_file: MAX_FILE,
        where: storageText(deps.config),
      }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "put",
      path: "/me/files",
      // Raw bytes: the route caps its own stream.
      bodyLimit: "upload",
      tags: ["files"],
      summary: "Upload a file: the body is the raw bytes, streamed into storage",
      request: {
        headers: UploadHeaders,
        body: {
          required: true,
          content: {
            "application/octet-stream": { schema: z.string().meta({ format: "binary" }) },
          },
        },
      },
      responses: {
        201: jsonResponse(z.object({ ok: z.literal(true), item: FileSchema, ...Space }), "Stored"),
        ...errors(400, 401, 409, 411, 413, 415, 429),
      },
    }),
    async (c) => {
      const account = c.get("account").id;
      const up = uploadOf((name) => c.req.header(name));
      await limit(deps, RULES.upload, account);
      const { file, usage } = await uploadFile(deps, account, { ...up, body: c.req.raw.body });
      return c.json({
        ok: true as const,
        item: fileItem(file),
        used: usage.bytes,
        quota: QUOTA,
      }, 201);
    },
  );

  app.openapi(
    bearer({
      method: "patch",
      path: "/me/files/{id}",
      tags: ["files"],
      summary: "Make a file public or private, relabel or rename it (same ending)",
      request: { params: z.object({ id: idParam }), ...body(Patch) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), item: FileSchema })),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const account = c.get("account").id;
      const { id } = c.req.valid("param");
      const p = c.req.valid("json");
      if (p.public === undefined && p.label === undefined && p.name === undefined) {
        fail(400, "body: nothing to change; send public, label or name", { field: "body" });
      }
      const f = await changeFile(deps, account, id, p);
      return c.json({ ok: true as const, item: fileItem(f) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/files/{id}",
      tags: ["files"],
      summary: "Delete a file and its bytes; answers the space used",
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), ...Space })),
        ...errors(401, 404),
      },
    }),
    async (c) => {
      const account = c.get("account").id;
      const { id } = c.req.valid("param");
      if (!await deleteFile(kv, account, id, deps.clock.now())) fail(404, "no such file");
      const usage = await getUsage(kv, account);
      return c.json({ ok: true as const, used: usage.bytes, quota: QUOTA }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/files/{account}/{file}/{name}",
      tags: ["files"],
      summary: "A file's bytes; private files only for their owner's bearer token",
      middleware: [optionalToken(deps)],
      request: { params: FileParams },
      responses: {
        200: binary("The bytes, with the stored type"),
        206: binary("The requested range (Range: bytes=...)"),
        304: { description: "Not modified (If-None-Match / If-Modified-Since)" },
        ...errors(404, 416),
      },
    }),
    (c) => {
      return serveFile(deps, c.req.valid("param"), c.get("account")?.id ?? null, c.req.raw);
    },
  );

  return app;
}
