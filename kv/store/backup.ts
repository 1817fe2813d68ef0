import { parse, stringify } from "devalue";
import { atomic, commit } from "../_atomic.ts";

/**
 * Logical dumps of the whole KV, whatever its backend (a file, Deno Deploy through KV Connect).
 * Owns no keys: it reads and writes every key as it is. The format is lines of text:
 *   {"format":"catalogue-kv-dump","version":1,"created":"…"}    (JSON)
 *   [key, value]                                                 (devalue, one per entry)
 *   {"end":true,"entries":N}                                     (JSON)
 * devalue keeps every type KV stores: Uint8Array and other typed arrays, ArrayBuffer, bigint,
 * Date, RegExp, Map, Set, undefined, NaN, -0, nested and shared objects, and Deno.KvU64 (a
 * custom type). A line never holds a raw line break (strings are escaped). The end line proves
 * the dump complete. What KV does not tell a reader is lost: versionstamps (new ones are given)
 * and the `expireIn` of entries written with one (they are restored without it).
 */

const FORMAT = "catalogue-kv-dump";
const VERSION = 1;
const u64 = {
  KvU64: (v: unknown) => v instanceof Deno.KvU64 && v.value.toString(),
};
const fromU64 = {
  KvU64: (s: string) => new Deno.KvU64(BigInt(s)),
};

interface Progress {
  entries: number;
  bytes: number;
}

/**
 * Every entry of `kv` as dump lines, read in pages of 500 (each page is one consistent read;
 * entries written while the dump runs may or may not be in it: stop the server, or accept that).
 */
export function dumpStream(
  kv: Deno.Kv,
  onProgress: (p: Progress) => void = () => {},
  now = new Date(),
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const progress: Progress = { entries: 0, bytes: 0 };
  let iter: AsyncIterator<Deno.KvEntry<unknown>> | null = null;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const head = JSON.stringify({ format: FORMAT, version: VERSION, created: now.toISOString() });
      controller.enqueue(enc.encode(head + "\n"));
    },
    async pull(controller) {
      iter ??= kv.list({ prefix: [] }, { batchSize: 500 })[Symbol.asyncIterator]();
      // About 64 KiB per chunk: lines are joined so the writer is not called per entry.
      const lines: string[] = [];
      let size = 0;
      while (size < 64 * 1024) {
        const next = await iter.next();
        if (next.done) {
          lines.push(JSON.stringify({ end: true, entries: progress.entries }));
          const bytes = enc.encode(lines.join("\n") + "\n");
          progress.bytes += bytes.length;
          controller.enqueue(bytes);
          onProgress(progress);
          controller.close();
          return;
        }
        const line = stringify([next.value.key, next.value.value], u64);
        lines.push(line);
        size += line.length;
        progress.entries++;
      }
      const bytes = enc.encode(lines.join("\n") + "\n");
      progress.bytes += bytes.length;
      controller.enqueue(bytes);
      onProgress(progress);
    },
  });
}

export class RestoreError extends Error {}

/** Splits a byte stream into lines. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    rest += text;
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
  if (rest) yield rest;
}

/** True when `kv` holds no entry at all. */
async function isEmpty(kv: Deno.Kv): Promise<boolean> {
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) return false;
  return true;
}

/** Atomic limits: 1000 mutations and about 800 KB each; stay well under both. */
const BATCH_ENTRIES = 400;
const BATCH_BYTES = 400 * 1024;

/**
 * Loads a dump into an empty KV; refuses one that holds anything. Writes in batches, each
 * checking that its keys are still absent (nothing else may write meanwhile). Throws
 * RestoreError on a bad or incomplete dump, saying how far it got.
 */
export async function restoreStream(
  kv: Deno.Kv,
  stream: ReadableStream<Uint8Array>,
  onProgress: (p: Progress) => void = () => {},
): Promise<Progress> {
  if (!(await isEmpty(kv))) {
    throw new RestoreError("the KV is not empty: restore loads only into an empty KV");
  }
  const progress: Progress = { entries: 0, bytes: 0 };
  let batch: [Deno.KvKey, unknown][] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const op = atomic(kv);
    // Checks are limited per atomic; the first keys suffice to notice a concurrent writer.
    for (const [key] of batch.slice(0, 10)) op.check({ key, versionstamp: null });
    for (const [key, value] of batch) op.set(key, value);
    const res = await commit(op);
    if (!res.ok) throw new RestoreError("the KV changed while restoring: another writer?");
    progress.entries += batch.length;
    onProgress(progress);
    batch = [];
    batchBytes = 0;
  };
  let n = 0;
  let ended: { end: true; entries: number } | null = null;
  for await (const line of lines(stream)) {
    n++;
    progress.bytes += line.length + 1;
    if (n === 1) {
      const head = tryJson(line) as { format?: string; version?: number } | null;
      if (head?.format !== FORMAT || head.version !== VERSION) {
        throw new RestoreError(`not a ${FORMAT} version ${VERSION} file`);
      }
      continue;
    }
    if (ended) throw new RestoreError(`line ${n}: data after the end line`);
    if (line.startsWith('{"end":')) {
      ended = tryJson(line) as { end: true; entries: number };
      continue;
    }
    let entry: [Deno.KvKey, unknown];
    try {
      entry = parse(line, fromU64) as [Deno.KvKey, unknown];
    } catch {
      throw new RestoreError(`line ${n}: not a dump entry (${progress.entries} entries restored)`);
    }
    if (!Array.isArray(entry) || !Array.isArray(entry[0])) {
      throw new RestoreError(`line ${n}: not a dump entry (${progress.entries} entries restored)`);
    }
    batch.push(entry);
    batchBytes += line.length;
    if (batch.length >= BATCH_ENTRIES || batchBytes >= BATCH_BYTES) await flush();
  }
  await flush();
  if (!ended) {
    throw new RestoreError(
      `the dump ends early (no end line): ${progress.entries} entries restored, not a full copy`,
    );
  }
  if (ended.entries !== progress.entries) {
    throw new RestoreError(`the dump says ${ended.entries} entries, ${progress.entries} restored`);
  }
  return progress;
}

function tryJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}
