/**
 * File names as accounts send them and as downloads show them. A stored name has no path
 * part, no control, bidi or invisible characters, none of the characters that common file
 * systems refuse, and at most MAX_NAME characters; its ending survives any shortening.
 */

export const MAX_NAME = 160;
const MAX_EXT = 16;

// C0/C1 controls, bidi embeddings/overrides/isolates and marks, zero-width characters, BOM.
const INVISIBLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
// Refused by Windows or meaningful in shells and headers.
const RESERVED = /[<>:"|?*\\/]/g;

/**
 * Reads a URL-encoded header value (X-File-Name, X-File-Label). A client that sent raw
 * UTF-8 instead is understood too. Null when the value cannot be decoded.
 */
export function headerText(raw: string): string | null {
  let s = raw;
  if ([...s].some((ch) => ch.charCodeAt(0) > 0x7f)) {
    if ([...s].some((ch) => ch.charCodeAt(0) > 0xff)) return null;
    try {
      s = new TextDecoder("utf-8", { fatal: true }).decode(
        Uint8Array.from(s, (ch) => ch.charCodeAt(0)),
      );
    } catch {
      return null;
    }
    return s;
  }
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** Removes what a label must not hold; whitespace runs become one space. */
export function cleanText(s: string): string {
  return s.normalize("NFC").replace(INVISIBLE, " ").replace(/\s+/g, " ").trim();
}

interface CleanName {
  name: string;
  /** The ending, lower-case, without the dot; "" when there is none. */
  ext: string;
}

/** A safe stored name for what a client sent, or null when nothing usable is left. */
export function cleanFileName(sent: string): CleanName | null {
  // Only the last path part counts: "../../etc/passwd" and "C:\\x\\y.pdf" keep their base.
  const base = sent.normalize("NFC").split(/[\\/]/).pop() ?? "";
  const s = base.replace(INVISIBLE, "").replace(RESERVED, "_").replace(/\s+/g, " ").trim();
  const dot = s.lastIndexOf(".");
  const hasExt = dot >= 0 && dot < s.length - 1 && s.length - dot - 1 <= MAX_EXT;
  let stem = hasExt ? s.slice(0, dot) : s;
  const ending = hasExt ? s.slice(dot + 1).replace(/[\s.]+/g, "") : "";
  // No hidden names, no names that end in dots or spaces (Windows drops them).
  stem = stem.replace(/^[\s.]+/, "").replace(/[\s.]+$/, "");
  if (!stem && !ending) return null;
  if (!stem) stem = "file";
  const room = MAX_NAME - (ending ? ending.length + 1 : 0);
  stem = [...stem].slice(0, room).join("").replace(/[\s.]+$/, "") || "file";
  return { name: ending ? `${stem}.${ending}` : stem, ext: ending.toLowerCase() };
}

/** RFC 5987 value: UTF-8, percent-encoded, safe in a header. */
function extValue(s: string): string {
  return encodeURIComponent(s).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** Content-Disposition (RFC 6266) with an ASCII fallback and the exact UTF-8 name. */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\x20-\x7e]/g, "_").replace(/["\\%]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${extValue(name)}`;
}
