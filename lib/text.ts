/**
 * The first `max` characters (code points) of a text, as people count them (docs/api.md "Resources, times and text").
 * `String.slice` counts UTF-16 units: it would keep half as many emoji and could cut one in
 * two, leaving a lone surrogate that is not text. Lone surrogates already present become
 * U+FFFD, so what is kept can always be written as UTF-8.
 */
export function cutChars(s: string, max: number): string {
  // Fast path (every heartbeat passes here): at most `max` units is at most `max` characters.
  if (s.length <= max && s.isWellFormed()) return s;
  let out = "";
  let n = 0;
  for (const ch of s.toWellFormed()) {
    if (n++ === max) break;
    out += ch;
  }
  return out;
}

/**
 * Invisible and direction-changing format characters: zero-width space, joiners and marks
 * (U+200B to U+200F), bidi embeddings and overrides (U+202A to U+202E), bidi isolates (U+2066
 * to U+2069) and the byte order mark (U+FEFF). In a name or label shown on a page they can hide
 * text or show it reversed (a "Trojan Source" spoof), so short texts refuse them.
 */
/** Why a short text with a zero-width or bidi control character is refused. */
export const INVISIBLE_MESSAGE =
  "must not contain invisible or direction-changing characters (U+200B-U+200F, U+202A-U+202E, " +
  "U+2066-U+2069, U+FEFF)";

export const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/u;

/** A zero-width joiner inside an emoji sequence (👩🏽‍💻): it joins pictographs, it hides nothing. */
const EMOJI_JOINER =
  /(?<=\p{Extended_Pictographic}[\u{1F3FB}-\u{1F3FF}\uFE0F]?)\u200D(?=\p{Extended_Pictographic})/gu;

/** Whether a short text is free of INVISIBLE characters (emoji joiners aside). */
export const visibleText = (s: string): boolean =>
  !INVISIBLE.test(s) || !INVISIBLE.test(s.replace(EMOJI_JOINER, ""));

/**
 * Characters as people count them (code points), as zod's own string bounds count them; for the
 * checks written by hand. `String.length` counts UTF-16 units: an emoji would count twice.
 */
export function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * A short fingerprint of a text (32-bit FNV-1a, hex): for telling that something changed (the
 * live pages' versions), never for security.
 */
export function fingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/**
 * A Healthchecks slug from a name, as Django's `slugify` makes it (Healthchecks derives a
 * check's slug so): accents folded, other non-ASCII dropped, lower-case, letters, digits,
 * `_` and `-` kept, spaces and hyphens run together as one `-`, `-` and `_` trimmed at the ends.
 */
export function hcSlug(name: string): string {
  return name.normalize("NFKD").replace(/[^ -~\s]/g, "").toLowerCase()
    .replace(/[^\w\s-]/g, "").replace(/[-\s]+/g, "-").replace(/^[-_]+|[-_]+$/g, "")
    .slice(0, 100);
}

/** A slug as Healthchecks allows it: lower-case ASCII letters, digits, `-` and `_` (empty: none). */
export const HC_SLUG_RE = /^[a-z0-9_-]{0,100}$/;
