import { iso, MINUTE } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, invalid, notFound, tooLarge, unsupported } from "../../lib/errors.ts";
import { FILE_KINDS, fileKindOf } from "../../lib/file_kinds.ts";
import { INVISIBLE_MESSAGE, visibleText } from "../../lib/text.ts";
import { cleanFileName, cleanText } from "../../lib/file_names.ts";
import { atomic, commit, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { claimId } from "../store/ids.ts";

/**
 * Stored files: records, per-account usage, uploads in progress, and the bytes, all in KV
 * (Deno Deploy has no writable disk). Key layout:
 *   ["files", account_id, file_id]           -> StoredFile (a completed upload)
 *   ["file_chunks", account_id, file_id, n]  -> Uint8Array, bytes n*chunk .. (n+1)*chunk-1
 *   ["file_usage", account_id]               -> Usage {bytes, files}: completed files plus
 *                                               uploads and removals in progress
 *   ["file_uploads", account_id, file_id]    -> UploadRecord {state, deadline, size, chunk, ...}
 *
 * Quota and file count are reserved in the usage record (version-checked) in the same
 * atomic that writes the upload record, before any byte is stored; so concurrent uploads
 * can never together pass the quota. Chunks are then written in batches, each batch with a
 * check on the upload record, which also pushes its deadline on. Completing swaps the upload record
 * for the StoredFile in one atomic. Failing, deleting and sweeping all go the same way:
 * The upload record turns to state "removing" (a writer still busy fails its next check), the chunks
 * are deleted, and then the upload record goes and the usage is released in one atomic, so the
 * reservation is released exactly once and no chunk outlives its upload record. An upload
 * record past its deadline is finished by the minutely sweep (jobs/sweep_uploads.ts): a
 * crash mid-upload holds neither chunks nor quota for long.
 */

export const QUOTA = 419430400;
export const MAX_FILE = 52428800;
const MAX_FILES = 200;
/** Characters of a file's title (label). */
export const MAX_LABEL = 60;
/** Bytes per chunk: values must stay under 64 KiB. */
export const CHUNK = 60 * 1024;
/** Chunks per atomic: 12 x 60 KiB = 720 KiB, under the 800 KiB of values per atomic. */
export const BATCH = 12;
/** An upload that stores nothing for this long is abandoned and swept. */
export const UPLOAD_DEADLINE = 5 * MINUTE;

export interface StoredFile {
  id: number;
  account: number;
  name: string;
  label: string;
  ext: string;
  type: string;
  size: number;
  public: boolean;
  created: number;
  updated: number;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  /** Chunk size the bytes were written with. */
  chunk: number;
}

interface Usage {
  bytes: number;
  files: number;
}

interface UploadRecord {
  state: "uploading" | "removing";
  /** Past this, the sweep removes the chunks and releases the reservation. */
  deadline: number;
  size: number;
  chunk: number;
  started: number;
  written: number;
}

const fileKey = (account: number, id: number) => ["files", account, id] as const;
const chunkKey = (account: number, id: number, n: number) =>
  ["file_chunks", account, id, n] as const;
const usageKey = (account: number) => ["file_usage", account] as const;
const uploadKey = (account: number, id: number) => ["file_uploads", account, id] as const;

const noUsage = (): Usage => ({ bytes: 0, files: 0 });

/** Where a file is served: the name is part of the path, so a wrong name answers 404. */
export const fileUrl = (f: StoredFile) =>
  `/api/files/${f.account}/${f.id}/${encodeURIComponent(f.name)}`;

/** The File resource of docs/api.md "Resources, times and text". */
export function fileItem(f: StoredFile) {
  return {
    id: f.id,
    name: f.name,
    label: f.label,
    ext: f.ext,
    type: f.type,
    size: f.size,
    public: f.public,
    created: iso(f.created),
    url: fileUrl(f),
  };
}

export async function getUsage(kv: Deno.Kv, account: number): Promise<Usage> {
  return (await kv.get<Usage>(usageKey(account))).value ?? noUsage();
}

export async function getFile(kv: Deno.Kv, account: number, id: number) {
  return await kv.get<StoredFile>(fileKey(account, id));
}

/** The account's completed files, newest first. */
export async function listFiles(kv: Deno.Kv, account: number): Promise<StoredFile[]> {
  const out: StoredFile[] = [];
  for await (const e of kv.list<StoredFile>({ prefix: ["files", account] })) out.push(e.value);
  return out.sort((a, b) => b.id - a.id);
}

type Reservation =
  | { ok: true; id: number; usage: Usage }
  | { ok: false; reason: "count" | "quota"; usage: Usage };

/** Takes a file id and reserves `size` bytes and one file in the account's usage. */
export async function reserveUpload(
  kv: Deno.Kv,
  account: number,
  size: number,
  now: number,
): Promise<Reservation> {
  return await transact<Reservation>(async () => {
    const entry = await kv.get<Usage>(usageKey(account));
    const usage = entry.value ?? noUsage();
    if (usage.files >= MAX_FILES) {
      return { op: null, result: { ok: false, reason: "count", usage } };
    }
    if (usage.bytes + size > QUOTA) {
      return { op: null, result: { ok: false, reason: "quota", usage } };
    }
    const claim = await claimId(
      kv,
      "file",
      (id) => [uploadKey(account, id), fileKey(account, id)],
    );
    const next = { bytes: usage.bytes + size, files: usage.files + 1 };
    const pending: UploadRecord = {
      state: "uploading",
      deadline: now + UPLOAD_DEADLINE,
      size,
      chunk: CHUNK,
      started: now,
      written: 0,
    };
    const op = claim.apply(atomic(kv)).check(entry)
      .set(usageKey(account), next)
      .set(uploadKey(account, claim.id), pending);
    return { op, result: { ok: true, id: claim.id, usage: next } };
  });
}

type WriteOutcome =
  | { ok: true; sha256: string }
  | { ok: false; reason: "short" | "long" | "aborted" | "stalled" };

class Abort extends Error {
  constructor(readonly reason: "short" | "long" | "aborted" | "stalled") {
    super(reason);
  }
}

/**
 * Streams `body` into chunks of upload `id`. At most one batch (720 KiB) is held at a time,
 * and the body is read only as fast as KV takes the batches. Chunk buffers are reused from
 * batch to batch and, on a byte stream (a real connection), the body is read straight into
 * them: an upload allocates next to nothing, so memory does not grow with the file, not even
 * as garbage waiting for the collector. Anything but exactly `size` bytes fails; the caller
 * then calls `discardUpload`.
 */
export async function writeUpload(
  kv: Deno.Kv,
  account: number,
  id: number,
  size: number,
  body: ReadableStream<Uint8Array> | null,
  now: () => number,
  idleMs = MINUTE,
): Promise<WriteOutcome> {
  // Native hashing for bulk bytes, loaded on the first upload (see lib/net.ts on node:*).
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  const free: Uint8Array[] = [];
  const take = () => free.pop() ?? new Uint8Array(Math.min(CHUNK, Math.max(1, size)));
  let pending: Uint8Array[] = [];
  let buf = take();
  let fill = 0;
  let next = 0;
  let total = 0;

  // The upload's record as this writer last committed it. Each batch is checked against its
  // versionstamp: a removal or a sweep changes the record, the check fails and nothing lands.
  // So does any other write of the record while the upload runs: only removals may write it.
  // It is read once, here: KV's thread runs the reads and the commits one after another, so a
  // read before every batch held up every commit behind it (docs/performance.md, "Start-up and
  // the request path", "an upload's record read once").
  let record = await kv.get<UploadRecord>(uploadKey(account, id));

  /** One batch of chunks and the progress in one atomic, checked against a removal. */
  const commitBatch = async (batch: Uint8Array[], first: number, written: number) => {
    if (record.value?.state !== "uploading") throw new Abort("aborted");
    const op = atomic(kv).check(record);
    batch.forEach((chunk, i) => op.set(chunkKey(account, id, first + i), chunk));
    const value: UploadRecord = { ...record.value, written, deadline: now() + UPLOAD_DEADLINE };
    op.set(uploadKey(account, id), value);
    const res = await commit(op);
    if (!res.ok) throw new Abort("aborted");
    record = { key: record.key, value, versionstamp: res.versionstamp };
    // Committed: KV holds its own copy, so the buffers take the next batch.
    for (const b of batch) if (b.length === CHUNK) free.push(b);
  };

  // The commit of a batch runs while the next one is read: an upload costs about the longer of
  // reading and writing, not their sum. The batch before is awaited first, so batches land in
  // order and at most two are held in memory.
  let inflight: Promise<void> | null = null;
  const settle = async () => {
    const i = inflight;
    inflight = null;
    await i;
  };

  const flush = async (last: boolean) => {
    if (last && fill > 0) pending.push(buf.slice(0, fill));
    await settle();
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const first = next;
    next += batch.length;
    inflight = commitBatch(batch, first, total);
    inflight.catch(() => {}); // its error surfaces where it is awaited
    if (last) await settle();
  };

  /** Takes `n` bytes now at the end of `buf` into the hash and the chunk sequence. */
  const took = async (n: number) => {
    total += n;
    if (total > size) throw new Abort("long");
    hash.update(buf.subarray(fill, fill + n));
    fill += n;
    if (fill === buf.length) {
      pending.push(buf);
      buf = take();
      fill = 0;
      if (pending.length === BATCH) await flush(false);
    }
  };

  const timed = async <T>(read: Promise<T>): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Abort("stalled")), idleMs);
    });
    try {
      return await Promise.race([read, stalled]);
    } catch (err) {
      if (err instanceof Abort) throw err;
      // The client went away or the connection broke mid-body.
      throw new Abort("short");
    } finally {
      clearTimeout(timer);
    }
  };

  let byob: ReadableStreamBYOBReader | null = null;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  try {
    byob = body?.getReader({ mode: "byob" }) ?? null;
  } catch {
    reader = body?.getReader() ?? null; // not a byte stream: copy from its chunks
  }
  try {
    while (byob) {
      // One byte more than expected would show a body longer than announced.
      const want = Math.max(1, Math.min(buf.length - fill, size - total));
      const read = await timed(byob.read(new Uint8Array(buf.buffer, fill, want)));
      // The read moved the buffer; keep using it under its new name.
      if (read.value) buf = new Uint8Array(read.value.buffer);
      if (read.done) break;
      await took(read.value.length);
    }
    while (reader) {
      const read = await timed(reader.read());
      if (read.done) break;
      let value = read.value;
      while (value.length > 0) {
        const n = Math.min(buf.length - fill, value.length);
        buf.set(value.subarray(0, n), fill);
        value = value.subarray(n);
        await took(n);
      }
    }
    if (total < size) throw new Abort("short");
    await flush(true);
    return { ok: true, sha256: hash.digest("hex") };
  } catch (err) {
    // No batch may land after this answer: the caller discards what was written.
    await settle().catch(() => {});
    if (!(err instanceof Abort)) throw err;
    (byob ?? reader)?.cancel().catch(() => {});
    return { ok: false, reason: err.reason };
  }
}

/** Turns a finished upload into a stored file; false when it was swept meanwhile. */
async function completeUpload(
  kv: Deno.Kv,
  file: StoredFile,
): Promise<boolean> {
  const entry = await kv.get<UploadRecord>(uploadKey(file.account, file.id));
  if (entry.value?.state !== "uploading" || entry.value.written !== file.size) return false;
  const res = await commit(
    atomic(kv).check(entry)
      .delete(uploadKey(file.account, file.id))
      .set(fileKey(file.account, file.id), file),
  );
  return res.ok;
}

/** Marks an upload as being removed, so a writer still busy with it stops at its next batch. */
async function markRemoving(kv: Deno.Kv, account: number, id: number, now: number) {
  return await transact(async () => {
    const entry = await kv.get<UploadRecord>(uploadKey(account, id));
    if (!entry.value) return { op: null, result: null };
    if (entry.value.state === "removing") return { op: null, result: entry.value };
    const value: UploadRecord = { ...entry.value, state: "removing", deadline: now };
    return { op: atomic(kv).check(entry).set(uploadKey(account, id), value), result: value };
  });
}

/** Deletes the chunks, then the upload record together with its reservation. */
async function finishRemoval(kv: Deno.Kv, account: number, id: number, p: UploadRecord) {
  const count = Math.ceil(p.size / p.chunk);
  await deleteKeys(kv, Array.from({ length: count }, (_, i) => chunkKey(account, id, i)));
  await transact(async () => {
    const [entry, usage] = await kv.getMany<[UploadRecord, Usage]>([
      uploadKey(account, id),
      usageKey(account),
    ]);
    if (entry.value?.state !== "removing") return { op: null, result: null };
    const u = usage.value ?? noUsage();
    const next = { bytes: Math.max(0, u.bytes - p.size), files: Math.max(0, u.files - 1) };
    const op = atomic(kv).check(entry, usage).delete(uploadKey(account, id))
      .set(usageKey(account), next);
    return { op, result: null };
  });
}

/** Drops a failed upload: no chunk stays, the reservation is released. */
export async function discardUpload(kv: Deno.Kv, account: number, id: number, now: number) {
  const p = await markRemoving(kv, account, id, now);
  if (p) await finishRemoval(kv, account, id, p);
}

/** A file to store: its cleaned name, kind and label, and the body as it streams in. */
export interface Upload {
  size: number;
  name: string;
  ext: string;
  type: string;
  label: string;
  public: boolean;
  body: ReadableStream<Uint8Array> | null;
}

/**
 * The whole upload: reserves the bytes and the file in the account's usage, streams the
 * body into chunks, completes the record, and discards everything when any step fails.
 * Answers the stored file and the usage after it.
 */
export async function uploadFile(
  deps: Deps,
  account: number,
  upload: Upload,
): Promise<{ file: StoredFile; usage: Usage }> {
  const { kv } = deps;
  const { size } = upload;
  const now = deps.clock.now();
  const r = await reserveUpload(kv, account, size, now);
  if (!r.ok && r.reason === "count") conflict(`${MAX_FILES} files already held: delete one first`);
  if (!r.ok) {
    tooLarge(`over the quota: ${r.usage.bytes} of ${QUOTA} bytes used`, {
      used: r.usage.bytes,
      quota: QUOTA,
    });
  }
  let stored: StoredFile | null = null;
  try {
    const clock = () => deps.clock.now();
    const w = await writeUpload(kv, account, r.id, size, upload.body, clock);
    if (w.ok) {
      const file: StoredFile = {
        id: r.id,
        account,
        name: upload.name,
        label: upload.label,
        ext: upload.ext,
        type: upload.type,
        size,
        public: upload.public,
        created: now,
        updated: now,
        sha256: w.sha256,
        chunk: CHUNK,
      };
      if (await completeUpload(kv, file)) stored = file;
    } else if (w.reason === "long") {
      invalid("the body is longer than Content-Length; the file was discarded");
    } else if (w.reason === "stalled") {
      invalid("the upload stalled before Content-Length bytes arrived; discarded");
    }
    if (!stored && (w.ok || w.reason === "aborted")) {
      invalid("the upload took too long (nothing stored for 5 minutes); discarded");
    }
    if (!stored) {
      invalid("fewer bytes arrived than Content-Length announced; the file was discarded");
    }
  } finally {
    if (!stored) await discardUpload(kv, account, r.id, deps.clock.now());
  }
  return { file: stored, usage: await getUsage(kv, account) };
}

/** Deletes a stored file and its bytes; false when there is no such file. */
export async function deleteFile(
  kv: Deno.Kv,
  account: number,
  id: number,
  now: number,
): Promise<boolean> {
  const p = await transact(async () => {
    const entry = await kv.get<StoredFile>(fileKey(account, id));
    if (!entry.value) return { op: null, result: null };
    const f = entry.value;
    const value: UploadRecord = {
      state: "removing",
      deadline: now,
      size: f.size,
      chunk: f.chunk,
      started: now,
      written: f.size,
    };
    const op = atomic(kv).check(entry).delete(fileKey(account, id))
      .set(uploadKey(account, id), value);
    return { op, result: value };
  });
  if (!p) return false;
  await finishRemoval(kv, account, id, p);
  return true;
}

/** Changes what PATCH may change; null when there is no such file. */
async function updateFile(
  kv: Deno.Kv,
  account: number,
  id: number,
  change: Partial<Pick<StoredFile, "name" | "label" | "public">>,
  now: number,
): Promise<StoredFile | null> {
  return await transact(async () => {
    const entry = await kv.get<StoredFile>(fileKey(account, id));
    if (!entry.value) return { op: null, result: null };
    const f: StoredFile = { ...entry.value, ...change, updated: now };
    return { op: atomic(kv).check(entry).set(fileKey(account, id), f), result: f };
  });
}

/** An upload as sent: its bytes, and its name and title as text (null: not decodable). */
interface UploadSent {
  size: number;
  name: string;
  label: string | null;
  public: boolean;
}

/**
 * The rules of an upload, checked before any byte is read (PUT /api/me/files and the files
 * page): a usable file name of visible text whose ending is an accepted kind (`unsupported`
 * with the endings accepted otherwise), a title of visible text up to MAX_LABEL characters,
 * at most MAX_FILE bytes. Both send name and title in the headers X-File-Name and
 * X-File-Label, which the messages and fields name.
 */
export function checkUpload(sent: UploadSent) {
  if (!visibleText(sent.name)) invalid(`X-File-Name: ${INVISIBLE_MESSAGE}`, "X-File-Name");
  const clean = cleanFileName(sent.name);
  if (!clean) invalid("X-File-Name: not a usable file name", "X-File-Name");
  const kind = fileKindOf(clean.ext);
  if (!kind) {
    unsupported(
      clean.ext
        ? `files ending in .${clean.ext} are not accepted; accepted lists the endings`
        : "the file name needs an ending (.pdf, .png, ...) that says its kind",
      { accepted: Object.keys(FILE_KINDS), ...(clean.ext ? { ext: clean.ext } : {}) },
    );
  }
  if (sent.label === null) invalid("X-File-Label: not URL-encoded text", "X-File-Label");
  if (!visibleText(sent.label)) invalid(`X-File-Label: ${INVISIBLE_MESSAGE}`, "X-File-Label");
  const label = cleanText(sent.label);
  if ([...label].length > MAX_LABEL) {
    invalid(`X-File-Label: up to ${MAX_LABEL} characters`, "X-File-Label");
  }
  if (sent.size > MAX_FILE) tooLarge(`a file may hold at most ${MAX_FILE} bytes`);
  return {
    size: sent.size,
    name: clean.name,
    ext: clean.ext,
    type: kind.type,
    label,
    public: sent.public,
  };
}

/** What a file's owner may change (PATCH of the API, the files page's forms). */
interface FileChange {
  public?: boolean;
  label?: string;
  name?: string;
}

/**
 * Changes a file of the account: public, label, or name with the same ending. Not found for
 * an absent file; `invalid` naming `name` for an unusable name or another ending.
 */
export async function changeFile(
  deps: Deps,
  account: number,
  id: number,
  p: FileChange,
): Promise<StoredFile> {
  const current = (await getFile(deps.kv, account, id)).value;
  if (!current) notFound("no such file");
  const change: Partial<StoredFile> = {};
  if (p.public !== undefined) change.public = p.public;
  if (p.label !== undefined) change.label = cleanText(p.label);
  if (p.name !== undefined) {
    const clean = cleanFileName(p.name);
    if (!clean) invalid("name: not a usable file name", "name");
    if (clean.ext !== current.ext) invalid(`name: must keep the ending .${current.ext}`, "name");
    change.name = clean.name;
  }
  const f = await updateFile(deps.kv, account, id, change, deps.clock.now());
  if (!f) notFound("no such file");
  return f;
}

/** Ends uploads and removals whose deadline has passed; answers how many. */
export async function sweepUploads(kv: Deno.Kv, now: number): Promise<number> {
  const due: [number, number][] = [];
  for await (const e of kv.list<UploadRecord>({ prefix: ["file_uploads"] })) {
    if (e.value.deadline <= now) due.push([e.key[1] as number, e.key[2] as number]);
  }
  for (const [account, id] of due) await discardUpload(kv, account, id, now);
  return due.length;
}

/** Removes every file, upload and the usage record of an account (erasure). */
export async function eraseFiles(kv: Deno.Kv, account: number, now: number): Promise<number> {
  const ids: number[] = [];
  for await (const e of kv.list({ prefix: ["files", account] })) ids.push(e.key[2] as number);
  for (const id of ids) await deleteFile(kv, account, id, now);
  const pending: number[] = [];
  for await (const e of kv.list({ prefix: ["file_uploads", account] })) {
    pending.push(e.key[2] as number);
  }
  for (const id of pending) await discardUpload(kv, account, id, now);
  // Chunks of anything that raced the erasure (an upload started meanwhile).
  await deleteKeys(kv, keysOf(kv, { prefix: ["file_chunks", account] }));
  await commit(atomic(kv).delete(usageKey(account)));
  return ids.length;
}

/**
 * The bytes `start` to `end` (inclusive) of a stored file, read from KV a few chunks at a
 * time as the client takes them.
 */
export function readFile(
  kv: Deno.Kv,
  f: StoredFile,
  start = 0,
  end = f.size - 1,
): ReadableStream<Uint8Array> {
  const first = Math.floor(start / f.chunk);
  const last = Math.floor(end / f.chunk);
  let iter: AsyncIterator<Deno.KvEntry<Uint8Array>> | null = null;
  let expected = first;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (end < start) return controller.close();
      iter ??= kv.list<Uint8Array>({
        start: chunkKey(f.account, f.id, first),
        end: chunkKey(f.account, f.id, last + 1),
      }, { batchSize: 4 })[Symbol.asyncIterator]();
      const r = await iter.next();
      if (r.done) {
        // Deleted while being read: end the answer short rather than send wrong bytes.
        if (expected <= last) return controller.error(new Error("file removed while read"));
        return controller.close();
      }
      const n = r.value.key[3] as number;
      if (n !== expected) return controller.error(new Error("chunk missing"));
      expected++;
      const base = n * f.chunk;
      const from = Math.max(0, start - base);
      const to = Math.min(r.value.value.length, end - base + 1);
      controller.enqueue(r.value.value.subarray(from, to));
      if (n === last) controller.close();
    },
    async cancel() {
      await iter?.return?.();
    },
  }, { highWaterMark: 0 });
}
