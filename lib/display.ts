/**
 * Text from users as it may be shown on a page. JSX escapes markup; this removes what
 * escaping leaves: bidirectional controls (which can make "moc.elpmaxe" read as
 * "example.com", or reorder a name and the words after it) and invisible zero-width
 * characters (which let two different names look the same). A zero-width joiner between two
 * pictographs stays: it is how emoji sequences are written.
 */
const HIDDEN =
  /[\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B\u200C\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\u3164\uFEFF\uFFA0]|(?<!\p{Extended_Pictographic}\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})/gu;

export function displayText(s: string): string {
  return s.replace(HIDDEN, "");
}

const UNITS: [limit: number, size: number, one: string, many: string][] = [
  [45_000, 1_000, "second", "seconds"],
  [45 * 60_000, 60_000, "minute", "minutes"],
  [22 * 3_600_000, 3_600_000, "hour", "hours"],
  [Infinity, 86_400_000, "day", "days"],
];

/** "just now", "3 minutes ago", "in 2 hours": a time as people say it, from `now`. */
export function agoText(at: number, now: number): string {
  const d = now - at;
  if (Math.abs(d) < 45_000) return "just now";
  const [, size, one, many] = UNITS.find(([limit]) => Math.abs(d) < limit)!;
  const n = Math.max(1, Math.round(Math.abs(d) / size));
  const text = `${n} ${n === 1 ? one : many}`;
  return d > 0 ? `${text} ago` : `in ${text}`;
}
