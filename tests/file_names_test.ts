import assert from "node:assert/strict";
import { FILE_KINDS, fileKindOf, isActiveType } from "../lib/file_kinds.ts";
import {
  cleanFileName,
  cleanText,
  contentDisposition,
  headerText,
  MAX_NAME,
} from "../lib/file_names.ts";
import { parseRange } from "../http/files.ts";

Deno.test("file names: path parts, controls, bidi and reserved characters go", () => {
  const cases: [string, string, string][] = [
    ["notes.pdf", "notes.pdf", "pdf"],
    ["../../etc/passwd.txt", "passwd.txt", "txt"],
    ["C:\\Users\\ada\\Plan.PDF", "Plan.PDF", "pdf"],
    ["a\u0000b\u001fc\u007f.txt", "abc.txt", "txt"],
    // U+202E would show "invoice_fdp.exe" as "invoice_exe.pdf".
    ["invoice_\u202efdp.exe", "invoice_fdp.exe", "exe"],
    ["zero\u200bwidth\ufeff.md", "zerowidth.md", "md"],
    ['a<b>c:"d"|e?f*.csv', "a_b_c__d__e_f_.csv", "csv"],
    ["  .hidden.txt", "hidden.txt", "txt"],
    [".pdf", "file.pdf", "pdf"],
    ["trailing. . .pdf", "trailing.pdf", "pdf"],
    ["Cafe\u0301.txt", "Café.txt", "txt"],
    ["archive.tar.gz", "archive.tar.gz", "gz"],
    ["tabs\tand\nlines.txt", "tabsandlines.txt", "txt"],
    ["noending", "noending", ""],
  ];
  for (const [sent, name, ext] of cases) {
    assert.deepEqual(cleanFileName(sent), { name, ext }, sent);
  }
  for (const sent of ["", "   ", "../", "\u202e", "..."]) {
    assert.equal(cleanFileName(sent), null, sent);
  }
});

Deno.test("file names: long names are cut but keep their ending", () => {
  const long = cleanFileName("é".repeat(500) + ".docx")!;
  assert.equal([...long.name].length, MAX_NAME);
  assert.ok(long.name.endsWith("é.docx"));
  assert.equal(long.ext, "docx");
  // An "ending" too long to be one is part of the name.
  assert.equal(cleanFileName("a." + "x".repeat(40))!.ext, "");
});

Deno.test("file names: header values are URL-decoded, raw UTF-8 understood", () => {
  assert.equal(headerText("%C3%9Cbung%201.pdf"), "Übung 1.pdf");
  assert.equal(headerText("plain.pdf"), "plain.pdf");
  assert.equal(headerText("%E0%A4%A"), null);
  // "Ü" sent as raw UTF-8 bytes reaches the app as two Latin-1 characters.
  assert.equal(headerText("\u00c3\u009cbung.pdf"), "Übung.pdf");
  assert.equal(headerText("\u00ff\u00fe.pdf"), null);
  assert.equal(cleanText("  two\u202e  words\n"), "two words");
});

Deno.test("file names: Content-Disposition has an ASCII fallback and the UTF-8 name", () => {
  assert.equal(
    contentDisposition("inline", 'Ünïcode "quoted" 100%.pdf'),
    `inline; filename="Unicode _quoted_ 100_.pdf"; filename*=UTF-8''%C3%9Cn%C3%AFcode%20%22quoted%22%20100%25.pdf`,
  );
  assert.equal(
    contentDisposition("attachment", "日本(1)'s.svg"),
    `attachment; filename="__(1)'s.svg"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%281%29%27s.svg`,
  );
});

Deno.test("file kinds: endings decide the type; active types are flagged", () => {
  assert.equal(fileKindOf("pdf")?.type, "application/pdf");
  assert.equal(fileKindOf("mp4")?.group, "video");
  for (const bad of ["exe", "js", "sh", "bat", "php", "", "constructor", "__proto__"]) {
    assert.equal(fileKindOf(bad), null, bad);
  }
  for (const [ext, kind] of Object.entries(FILE_KINDS)) {
    assert.equal(ext, ext.toLowerCase());
    assert.match(kind.type, /^[a-z]+\/[a-z0-9.+-]+$/, ext);
  }
  for (const ext of ["html", "htm", "svg", "xml", "gpx", "kml"]) {
    assert.ok(isActiveType(fileKindOf(ext)!.type), ext);
  }
  for (const ext of ["pdf", "png", "txt", "json", "mp3"]) {
    assert.ok(!isActiveType(fileKindOf(ext)!.type), ext);
  }
});

Deno.test("file ranges: one range parsed, the rest ignored or refused", () => {
  assert.deepEqual(parseRange("bytes=0-9", 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange("bytes=90-", 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange("bytes=-10", 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange("bytes=-500", 100), { start: 0, end: 99 });
  assert.deepEqual(parseRange("bytes=50-500", 100), { start: 50, end: 99 });
  assert.equal(parseRange(undefined, 100), "none");
  assert.equal(parseRange("bytes=0-1,4-5", 100), "none");
  assert.equal(parseRange("bytes=9-3", 100), "none");
  assert.equal(parseRange("bytes=-", 100), "none");
  assert.equal(parseRange("items=0-1", 100), "none");
  assert.equal(parseRange("bytes=100-", 100), "unsatisfiable");
  assert.equal(parseRange("bytes=-0", 100), "unsatisfiable");
  assert.equal(parseRange("bytes=0-0", 0), "unsatisfiable");
});
