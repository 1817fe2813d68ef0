import { z } from "zod";
import { checkUpload, getFile, MAX_LABEL, readFile, type StoredFile } from "../kv/files/files.ts";
import type { Deps } from "../lib/deps.ts";
import { isActiveType, SANDBOX_INLINE, SANDBOX_STRICT } from "../lib/file_kinds.ts";
import { cleanText, contentDisposition, headerText } from "../lib/file_names.ts";
import { fail } from "./errors.ts";
import { INVISIBLE_MESSAGE, visibleText } from "./text.ts";

/**
 * What the files API (api/files.ts) and the files page (web/me_files.tsx) both read from a
 * request and answer in HTTP terms: the PATCH schema, an upload's headers, and a file's bytes
 * with ranges and validators. The rules themselves are kv/files/files.ts.
 */

export const Patch = z.object({
  public: z.boolean().optional(),
  label: z.string().refine((v) => [...cleanText(v)].length <= MAX_LABEL, {
    message: `must be at most ${MAX_LABEL} characters`,
  }).refine(visibleText, { message: INVISIBLE_MESSAGE }).optional(),
  name: z.string().min(1).max(1000).refine(visibleText, { message: INVISIBLE_MESSAGE })
    .optional(),
}).meta({ id: "FilePatch" });

/**
 * What an upload's headers say (Content-Length, X-File-Name, X-File-Label, X-Public), read as
 * PUT /api/me/files and the files page's upload both need it, then checked by kv/files/files.ts
 * `checkUpload`; 4xx errors name the header.
 */
export function uploadOf(header: (name: string) => string | undefined) {
  const lengthHeader = header("content-length");
  if (lengthHeader === undefined) fail(411, "Content-Length: required for uploads");
  if (!/^\s*\d{1,16}\s*$/.test(lengthHeader)) {
    fail(400, "Content-Length: must be a number of bytes", { field: "Content-Length" });
  }
  const rawName = header("x-file-name");
  if (!rawName?.trim()) {
    fail(400, "X-File-Name: required (the file name, URL-encoded)", { field: "X-File-Name" });
  }
  const name = headerText(rawName);
  // Not decodable: no usable name (checkUpload says so for names it cannot use).
  if (name === null) fail(400, "X-File-Name: not a usable file name", { field: "X-File-Name" });
  const rawLabel = header("x-file-label");
  return checkUpload({
    size: Number(lengthHeader),
    name,
    label: rawLabel === undefined ? "" : headerText(rawLabel),
    public: header("x-public")?.trim() === "1",
  });
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

/** A file's bytes for `viewer` (null: nobody signed in), as GET /api/files/... answers them. */
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
