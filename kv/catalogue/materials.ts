import { invalid } from "../../lib/errors.ts";
import { fileUrl, getFile, listFiles } from "../files/files.ts";

/**
 * A module's materials: links (https) and the contributors' own public files of the service's
 * file storage (kv/files/files.ts), listed on the module page with their kind and size, in its
 * JSON-LD (`hasPart`, and `encoding` for files) and in the feed. A file is named by its path
 * (`/api/files/<account>/<id>/<name>`, the File resource's `url`); when attached, it must be
 * public and the attaching account's own (the team may attach any contributor's), and its
 * type and size are copied into the module. Holds no KV keys.
 */

export const MAX_MATERIALS = 20;
export const MAX_MATERIAL_LABEL = 120;

export interface Material {
  label: string;
  /** An https address, or the path of a stored file. */
  url: string;
  /** Media type and size in bytes of a stored file; null for a link. */
  type: string | null;
  size: number | null;
}

/** What a caller sends: a label (optional) and the address. */
export interface MaterialInput {
  label?: string | null;
  url: string;
}

/** The account and file id of a stored file's path (`/api/files/<account>/<id>/<name>`). */
function filePath(url: string): [number, number] | null {
  const parts = url.split("/");
  if (parts.length !== 6 || parts[0] !== "" || parts[1] !== "api" || parts[2] !== "files") {
    return null;
  }
  const digits = (s: string) =>
    s.length > 0 && s.length <= 16 && [...s].every((c) => c >= "0" && c <= "9");
  return digits(parts[3]) && digits(parts[4]) && parts[5] !== ""
    ? [Number(parts[3]), Number(parts[4])]
    : null;
}

/** True when the address is a stored file's path. */
export const isFilePath = (url: string) => filePath(url) !== null;

/**
 * The materials as stored: each file path checked against the file (it exists, it is public,
 * it is `account`'s or, for the team (`account` null), a contributor's), links kept as sent.
 */
export async function resolveMaterials(
  kv: Deno.Kv,
  input: MaterialInput[],
  who: { account: number | null; team: boolean; contributors: number[] },
): Promise<Material[]> {
  const out: Material[] = [];
  for (const [i, m] of input.entries()) {
    const at = `materials: entry ${i + 1}`;
    const path = filePath(m.url);
    if (!path) {
      const u = URL.canParse(m.url) ? new URL(m.url) : null;
      if (!u || u.protocol !== "https:" || u.username || u.password) {
        invalid(`${at}: an https:// link or the address of one of your public files`, "materials");
      }
      out.push({ label: m.label?.trim() || u!.host, url: u!.href, type: null, size: null });
      continue;
    }
    const [owner, id] = path;
    const f = (await getFile(kv, owner, id)).value;
    const mayUse = owner === who.account || (who.team && who.contributors.includes(owner));
    if (!f || !mayUse || fileUrl(f) !== m.url) {
      invalid(`${at}: no file of yours is at this address`, "materials");
    }
    if (!f.public) {
      invalid(`${at}: the file ${f.name} is private; make it public first`, "materials");
    }
    out.push({
      label: m.label?.trim() || f.label || f.name,
      url: fileUrl(f),
      type: f.type,
      size: f.size,
    });
  }
  return out;
}

/** The account's public files, for the editor's choice. */
export async function attachableFiles(kv: Deno.Kv, account: number) {
  return (await listFiles(kv, account)).filter((f) => f.public).map((f) => ({
    url: fileUrl(f),
    name: f.name,
    label: f.label,
    type: f.type,
    size: f.size,
  }));
}

/** A size as a person reads it: "820 bytes", "12 KB", "1.4 MB". */
export function readableSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 1000)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** A media type as a person reads it: "PDF", "PNG image", "Word document". */
export function readableType(type: string | null, url: string): string {
  if (type === null) return `Link to ${URL.canParse(url) ? new URL(url).host : url}`;
  const known: Record<string, string> = {
    "application/pdf": "PDF",
    "image/png": "PNG image",
    "image/jpeg": "JPEG image",
    "image/svg+xml": "SVG image",
    "text/plain": "Text",
    "text/csv": "CSV table",
    "application/zip": "ZIP archive",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel sheet",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation":
      "PowerPoint slides",
    "application/vnd.oasis.opendocument.text": "OpenDocument text",
  };
  return known[type] ?? type;
}
