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
