/**
 * The first `max` characters (code points) of a text, as people and SPEC.md count them.
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
 * Characters as people count them (code points), as zod's own string bounds count them; for the
 * checks written by hand. `String.length` counts UTF-16 units: an emoji would count twice.
 */
export function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
