import { z } from "zod";
import {
  CHUNK,
  deleteFile,
  fileItem,
  getFile,
  getUsage,
  listFiles,
  MAX_FILE,
  QUOTA,
  readFile,
  type StoredFile,
  updateFile,
  uploadFile,
} from "../kv/files.ts";
import { RULES } from "../kv/rate_limit.ts";
import type { Config } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "./_errors.ts";
import {
  FILE_KINDS,
  isActiveType,
  kindOf,
  SANDBOX_INLINE,
  SANDBOX_STRICT,
} from "../lib/file_kinds.ts";
import { cleanFileName, cleanText, contentDisposition, headerText } from "../lib/file_names.ts";
import { bearer, body, createRoute, errors, idParam, json, router } from "./_api.ts";
import { limit, optionalToken, requireToken } from "./_guards.ts";
import { INVISIBLE_MESSAGE, visibleText } from "./_text.ts";

export const MAX_LABEL = 60;

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

export const Patch = z.object({
  public: z.boolean().optional(),
  label: z.string().refine((v) => [...cleanText(v)].length <= MAX_LABEL, {
    message: `up to ${MAX_LABEL} characters`,
  }).refine(visibleText, { message: INVISIBLE_MESSAGE }).optional(),
  name: z.string().min(1).max(1000).refine(visibleText, { message: INVISIBLE_MESSAGE })
    .optional(),
}).meta({ id: "FilePatch" });

const binary = (description: string) => ({
  description,
  content: {
    "application/octet-stream": { schema: z.string().meta({ format: "binary" }) },
  },
});

/** `where` of GET /api/me/files: which storage holds the bytes, without paths or hosts. */
export function storageText(config: Config): string {
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

const httpDate = (ms: number) => new Date(ms).toUTCString();
const etagOf = (f: StoredFile) => `"${f.sha256.slice(0, 40)}"`;

/** The one range of a `Range: bytes=...` header; "none" for absent, multiple or malformed. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | "none" | "unsatisfiable" {
  const m = header?.trim().match(/^bytes=(\d*)-(\d*)$/);
  if (!m || (m[1] === "" && m[2] === "")) return "none";
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== "" && Number(m[2]) < start) return "none";
  if (start >= size) return "unsatisfiable";
  return { start, end };
}

/**
 * What an upload's headers say (Content-Length, X-File-Name, X-File-Label, X-Public), checked
 * as PUT /api/me/files and the files page's upload both need it; 4xx errors name the header.
 */
export function uploadOf(header: (name: string) => string | undefined) {
  const lengthHeader = header("content-length");
  if (lengthHeader === undefined) fail(411, "Content-Length: required for uploads");
  if (!/^\s*\d{1,16}\s*$/.test(lengthHeader)) {
    fail(400, "Content-Length: must be a number of bytes", { field: "Content-Length" });
  }
  const size = Number(lengthHeader);

  const rawName = header("x-file-name");
  if (!rawName?.trim()) {
    fail(400, "X-File-Name: required (the file name, URL-encoded)", { field: "X-File-Name" });
  }
  const decoded = headerText(rawName);
  if (decoded !== null && !visibleText(decoded)) {
    fail(400, `X-File-Name: ${INVISIBLE_MESSAGE}`, { field: "X-File-Name" });
  }
  const clean = decoded === null ? null : cleanFileName(decoded);
  if (!clean) fail(400, "X-File-Name: not a usable file name", { field: "X-File-Name" });
  const kind = kindOf(clean.ext);
  if (!kind) {
    fail(
      415,
      clean.ext
        ? `files ending in .${clean.ext} are not accepted; accepted lists the endings`
        : "the file name needs an ending (.pdf, .png, ...) that says its kind",
      { accepted: Object.keys(FILE_KINDS) },
    );
  }
  const rawLabel = header("x-file-label");
  const labelText = rawLabel === undefined ? "" : headerText(rawLabel);
  if (labelText === null) {
    fail(400, "X-File-Label: not URL-encoded text", { field: "X-File-Label" });
  }
  if (!visibleText(labelText)) {
    fail(400, `X-File-Label: ${INVISIBLE_MESSAGE}`, { field: "X-File-Label" });
  }
  const label = cleanText(labelText);
  if ([...label].length > MAX_LABEL) {
    fail(400, `X-File-Label: up to ${MAX_LABEL} characters`, { field: "X-File-Label" });
  }
  if (size > MAX_FILE) fail(413, `a file may hold at most ${MAX_FILE} bytes`);

  return {
    size,
    name: clean.name,
    ext: clean.ext,
    type: kind.type,
    label,
    public: header("x-public")?.trim() === "1",
  };
}

/** PATCH of a file (the API's and the files page's): public, label, name with its ending. */
export async function changeFile(
  deps: Deps,
  account: number,
  id: number,
  p: z.output<typeof Patch>,
): Promise<StoredFile> {
  const current = (await getFile(deps.kv, account, id)).value;
  if (!current) fail(404, "no such file");
  const change: Partial<StoredFile> = {};
  if (p.public !== undefined) change.public = p.public;
  if (p.label !== undefined) change.label = cleanText(p.label);
  if (p.name !== undefined) {
    const clean = cleanFileName(p.name);
    if (!clean) fail(400, "name: not a usable file name", { field: "name" });
    if (clean.ext !== current.ext) {
      fail(400, `name: must keep the ending .${current.ext}`, { field: "name" });
    }
    change.name = clean.name;
  }
  const f = await updateFile(deps.kv, account, id, change, deps.clock.now());
  if (!f) fail(404, "no such file");
  return f;
}

/** Routes of file storage and serving (issue 6). */
export function filesRoutes(deps: Deps) {
  const app = router();
  const auth = [requireToken(deps)];
  const { kv } = deps;

  app.openapi(
    createRoute({
      method: "get",
      path: "/me/files",
      tags: ["files"],
      summary: "The account's files, newest first, with the space used",
      security: bearer,
      middleware: auth,
      responses: {
        200: json(z.object({
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
    createRoute({
      method: "put",
      path: "/me/files",
      tags: ["files"],
      summary: "Upload a file: the body is the raw bytes, streamed into storage",
      security: bearer,
      middleware: auth,
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
        201: json(z.object({ ok: z.literal(true), item: FileSchema, ...Space }), "Stored"),
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
    createRoute({
      method: "patch",
      path: "/me/files/{id}",
      tags: ["files"],
      summary: "Make a file public or private, relabel or rename it (same ending)",
      security: bearer,
      middleware: auth,
      request: { params: z.object({ id: idParam }), ...body(Patch) },
      responses: {
        200: json(z.object({ ok: z.literal(true), item: FileSchema })),
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
    createRoute({
      method: "delete",
      path: "/me/files/{id}",
      tags: ["files"],
      summary: "Delete a file and its bytes; answers the space used",
      security: bearer,
      middleware: auth,
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: json(z.object({ ok: z.literal(true), ...Space })),
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

export async function serveFile(
  deps: Deps,
  p: { account: number; file: number; name: string },
  viewer: number | null,
  req: Request,
): Promise<Response> {
  const f = (await getFile(deps.kv, p.account, p.file)).value;
  const hidden = { "Cache-Control": "no-store" };
  // Same answer for absent, private and misnamed: nothing tells them apart.
  if (!f || f.name !== p.name.normalize("NFC") || (!f.public && viewer !== f.account)) {
    fail(404, "not found", undefined, hidden);
  }
  const active = isActiveType(f.type);
  const etag = etagOf(f);
  const headers = new Headers({
    "Cache-Control": f.public ? "public, max-age=300" : "no-store",
    "ETag": etag,
    "Last-Modified": httpDate(f.created),
    "Accept-Ranges": "bytes",
    "X-Content-Type-Options": "nosniff",
  });
  // Every download is sandboxed (no script, no same-origin access), inline kinds included: a file
  // that a browser sniffs or renders as a document can never act as the service's own page.
  headers.set("Content-Security-Policy", active ? SANDBOX_STRICT : SANDBOX_INLINE);

  const inm = req.headers.get("if-none-match");
  const ims = req.headers.get("if-modified-since");
  const notModified = inm !== null
    ? inm.split(",").some((t) => t.trim().replace(/^W\//, "") === etag || t.trim() === "*")
    : ims !== null && !Number.isNaN(Date.parse(ims)) &&
      Math.floor(f.created / 1000) * 1000 <= Date.parse(ims);
  if (notModified) return new Response(null, { status: 304, headers });

  headers.set("Content-Type", f.type);
  headers.set("Content-Disposition", contentDisposition(active ? "attachment" : "inline", f.name));
  const ifRange = req.headers.get("if-range");
  const rangeHeader = ifRange !== null && ifRange.trim() !== etag &&
      ifRange.trim() !== httpDate(f.created)
    ? undefined
    : req.headers.get("range") ?? undefined;
  const range = parseRange(rangeHeader, f.size);
  if (range === "unsatisfiable") {
    fail(416, `range not satisfiable: the file has ${f.size} bytes`, { size: f.size }, {
      "Content-Range": `bytes */${f.size}`,
    });
  }
  if (range === "none") {
    headers.set("Content-Length", String(f.size));
    return new Response(readFile(deps.kv, f), { status: 200, headers });
  }
  headers.set("Content-Length", String(range.end - range.start + 1));
  headers.set("Content-Range", `bytes ${range.start}-${range.end}/${f.size}`);
  return new Response(readFile(deps.kv, f, range.start, range.end), { status: 206, headers });
}
