import { z } from "zod";

// Characters that render like "@" but are not; NFKC would quietly turn some into "@".
const AT_LOOKALIKES = /[\uFF20\uFE6B\u0040\u2148]/g;
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Canonical form of an e-mail address (trimmed, NFKC, lower-case), or null when the address
 * is not one we accept: CR/LF, quoted local parts, several "@", "@" look-alikes, address
 * literals and non-ASCII text are all refused (internationalised domains go as punycode).
 */
export function canonicalEmail(raw: string): string | null {
  if (/[\r\n\0]/.test(raw)) return null;
  const ats = raw.match(AT_LOOKALIKES) ?? [];
  if (ats.length !== 1 || ats[0] !== "@") return null;
  const s = raw.trim().normalize("NFKC").toLowerCase();
  if (s.length > 254 || !/^[\x21-\x7e]+$/.test(s)) return null;
  const at = s.indexOf("@");
  if (at !== s.lastIndexOf("@")) return null;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1);
  if (local.length < 1 || local.length > 64 || !LOCAL.test(local)) return null;
  if (domain.length > 253) return null;
  const labels = domain.split(".");
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  if (!/^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(labels[labels.length - 1])) return null;
  return s;
}

/** zod schema: any string in, the canonical address out, or a validation error. */
export const emailSchema = z.string().max(320).transform((raw, ctx) => {
  const email = canonicalEmail(raw);
  if (email === null) {
    ctx.addIssue({ code: "custom", message: "not a valid e-mail address" });
    return z.NEVER;
  }
  return email;
}).meta({ type: "string", format: "email", example: "ada@example.org" });
