/**
 * Writing XML by hand, safely: text and attribute values escaped, and the characters XML 1.0
 * cannot hold (controls other than tab and line ends, lone surrogates, U+FFFE and U+FFFF)
 * dropped, so a feed or a harvest answer is always well-formed.
 */

const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** A text for XML character data or an attribute value in double quotes. */
export function xmlText(s: string): string {
  return s.replace(NOT_XML, "").replace(
    /[<>&"]/g,
    (ch) => ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : ch === "&" ? "&amp;" : "&quot;",
  );
}

/** `<name attrs>text</name>`, the text escaped; nothing when the text is null or undefined. */
export function el(
  name: string,
  text: string | null | undefined,
  attrs: Record<string, string> = {},
): string {
  if (text === null || text === undefined) return "";
  return `<${name}${attrsOf(attrs)}>${xmlText(text)}</${name}>`;
}

/** `<name attrs/>`. */
export function empty(name: string, attrs: Record<string, string>): string {
  return `<${name}${attrsOf(attrs)}/>`;
}

function attrsOf(attrs: Record<string, string>): string {
  return Object.entries(attrs).map(([k, v]) => ` ${k}="${xmlText(v)}"`).join("");
}
