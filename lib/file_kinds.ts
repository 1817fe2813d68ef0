/**
 * The file kinds an account may store, by the name's ending (lower-case, without the dot).
 * The ending alone decides the stored media type: the client's Content-Type is not trusted,
 * so a file is always served as what its name says it is. The list is documented in
 * docs/api.md ("Files"); keep both in step.
 */

type FileGroup = "document" | "image" | "audio" | "video" | "archive" | "text" | "data";

interface FileKind {
  type: string;
  group: FileGroup;
}

const k = (type: string, group: FileGroup): FileKind => ({ type, group });

export const FILE_KINDS: Readonly<Record<string, FileKind>> = {
  // Documents, slides, spreadsheets, e-books.
  pdf: k("application/pdf", "document"),
  doc: k("application/msword", "document"),
  docx: k("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "document"),
  odt: k("application/vnd.oasis.opendocument.text", "document"),
  rtf: k("application/rtf", "document"),
  ppt: k("application/vnd.ms-powerpoint", "document"),
  pptx: k(
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "document",
  ),
  odp: k("application/vnd.oasis.opendocument.presentation", "document"),
  xls: k("application/vnd.ms-excel", "document"),
  xlsx: k("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "document"),
  ods: k("application/vnd.oasis.opendocument.spreadsheet", "document"),
  odg: k("application/vnd.oasis.opendocument.graphics", "document"),
  epub: k("application/epub+zip", "document"),
  // Images.
  png: k("image/png", "image"),
  jpg: k("image/jpeg", "image"),
  jpeg: k("image/jpeg", "image"),
  gif: k("image/gif", "image"),
  webp: k("image/webp", "image"),
  avif: k("image/avif", "image"),
  heic: k("image/heic", "image"),
  bmp: k("image/bmp", "image"),
  tif: k("image/tiff", "image"),
  tiff: k("image/tiff", "image"),
  svg: k("image/svg+xml", "image"),
  // Audio.
  mp3: k("audio/mpeg", "audio"),
  m4a: k("audio/mp4", "audio"),
  aac: k("audio/aac", "audio"),
  wav: k("audio/wav", "audio"),
  ogg: k("audio/ogg", "audio"),
  oga: k("audio/ogg", "audio"),
  opus: k("audio/opus", "audio"),
  flac: k("audio/flac", "audio"),
  weba: k("audio/webm", "audio"),
  mid: k("audio/midi", "audio"),
  midi: k("audio/midi", "audio"),
  // Video.
  mp4: k("video/mp4", "video"),
  m4v: k("video/mp4", "video"),
  webm: k("video/webm", "video"),
  ogv: k("video/ogg", "video"),
  mov: k("video/quicktime", "video"),
  mkv: k("video/x-matroska", "video"),
  // Archives.
  zip: k("application/zip", "archive"),
  "7z": k("application/x-7z-compressed", "archive"),
  tar: k("application/x-tar", "archive"),
  gz: k("application/gzip", "archive"),
  tgz: k("application/gzip", "archive"),
  // Text.
  txt: k("text/plain", "text"),
  md: k("text/markdown", "text"),
  tex: k("text/x-tex", "text"),
  srt: k("text/plain", "text"),
  vtt: k("text/vtt", "text"),
  html: k("text/html", "text"),
  htm: k("text/html", "text"),
  // Data.
  csv: k("text/csv", "data"),
  tsv: k("text/tab-separated-values", "data"),
  json: k("application/json", "data"),
  geojson: k("application/geo+json", "data"),
  xml: k("application/xml", "data"),
  gpx: k("application/gpx+xml", "data"),
  kml: k("application/vnd.google-earth.kml+xml", "data"),
  yaml: k("application/yaml", "data"),
  yml: k("application/yaml", "data"),
  ics: k("text/calendar", "data"),
  ipynb: k("application/x-ipynb+json", "data"),
  ggb: k("application/vnd.geogebra.file", "data"),
  sb3: k("application/x.scratch.sb3", "data"),
};

/** The kind for an ending, or null when it is not on the list. */
export function fileKindOf(ext: string): FileKind | null {
  return Object.hasOwn(FILE_KINDS, ext) ? FILE_KINDS[ext] : null;
}

/**
 * Types a browser would run as a page or script: served only as a download, inside a
 * sandboxing Content-Security-Policy, so a stored file can never act on the site's origin.
 */
export function isActiveType(type: string): boolean {
  return /html|xml|svg/i.test(type);
}

/** The policy of active kinds (HTML, SVG, ...), always downloaded as attachments. */
export const SANDBOX_STRICT = "sandbox; default-src 'none'";
/**
 * The policy of kinds shown inline (images, PDF, audio, video, text): sandboxed, no script and no
 * fetches, but the file itself may show as an image or media document.
 */
export const SANDBOX_INLINE =
  "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'";
