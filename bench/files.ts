/**
 * Files benchmark: upload and download of a 50 MB file against the real server (main.ts on
 * 127.0.0.1, KV file under /tmp), the server's memory growth during the upload, and, in the
 * same run, writing and reading the same bytes as a local file.
 *
 *   deno run -A bench/files.ts [--rounds 5]
 *
 * `deno task bench` runs it after its own table. Exit 1 when uploads fall below UPLOAD_TARGET of
 * the bare writer (issue 16: "keep them there").
 */
import { BATCH, CHUNK, MAX_FILE } from "../kv/files/files.ts";
import { rawRequest, startFreshServer } from "../tests/_real_server.ts";
import { atomic, commit } from "../kv/_atomic.ts";

const MB = 1_000_000;
/** Upload speed ÷ the bare KV chunk writer's, at least. */
const UPLOAD_TARGET = 0.86;
const PIECE = 64 * 1024;

export interface FilesBenchResult {
  size: number;
  rounds: number;
  uploadMBs: number;
  downloadMBs: number;
  /** The same bytes written by a bare loop of KV atomics (the floor for uploads). */
  bareKvWriteMBs: number;
  localWriteMBs: number;
  localReadMBs: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssGrowthMiB: number;
  downloadGrowthMiB: number;
}

/** VmRSS and VmHWM of a process, in KiB (Linux). */
async function memory(pid: number): Promise<{ rss: number; hwm: number }> {
  const s = await Deno.readTextFile(`/proc/${pid}/status`);
  const kib = (k: string) => Number(s.match(new RegExp(`${k}:\\s+(\\d+) kB`))?.[1] ?? 0);
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round1 = (x: number) => Math.round(x * 10) / 10;

export async function filesBench(rounds = 3, size = MAX_FILE): Promise<FilesBenchResult> {
  const bytes = new Uint8Array(size);
  for (let off = 0; off < size; off += PIECE) {
    crypto.getRandomValues(bytes.subarray(off, Math.min(size, off + PIECE)));
  }
  await using server = await startFreshServer();
  const token = await server.signIn("bench@example.org");
  const auth = { authorization: `Bearer ${token}` };

  // Warm up (JIT, KV file creation) with a small file, then measure the baseline.
  const warm = await rawRequest(server.port, "PUT", "/api/me/files", {
    ...auth,
    "Content-Length": "100000",
    "X-File-Name": "warm.bin.zip",
  }, (write) => write(bytes.subarray(0, 100000)));
  if (warm.status !== 201) throw new Error(`warm-up upload answered ${warm.status}`);

  const up: number[] = [];
  const down: number[] = [];
  const growth: number[] = [];
  const downGrowth: number[] = [];
  let before = 0;
  let peak = 0;
  for (let r = 0; r < rounds; r++) {
    const base = await memory(server.pid);
    if (r === 0) before = base.rss;
    let sampledPeak = base.rss;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        sampledPeak = Math.max(sampledPeak, (await memory(server.pid)).rss);
        await new Promise((res) => setTimeout(res, 10));
      }
    })();
    const t0 = performance.now();
    const res = await rawRequest(server.port, "PUT", "/api/me/files", {
      ...auth,
      "Content-Length": String(size),
      "X-File-Name": `bench-${r}.zip`,
    }, async (write) => {
      for (let off = 0; off < size; off += PIECE) {
        await write(bytes.subarray(off, Math.min(size, off + PIECE)));
      }
    });
    const t1 = performance.now();
    sampling = false;
    await sampler;
    if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${res.text}`);
    const after = await memory(server.pid);
    // VmHWM catches a peak between samples when it is above every earlier peak.
    const roundPeak = Math.max(sampledPeak, after.hwm > base.hwm ? after.hwm : 0);
    if (r === 0) peak = roundPeak;
    growth.push(roundPeak - base.rss);
    up.push(size / MB / ((t1 - t0) / 1000));

    const item = JSON.parse(res.text).item;
    const downBase = (await memory(server.pid)).rss;
    let downPeak = downBase;
    const t2 = performance.now();
    const got = await fetch(`${server.base}${item.url}`, { headers: auth });
    let n = 0;
    let k = 0;
    for await (const chunk of got.body!) {
      n += chunk.length;
      if (++k % 16 === 0) downPeak = Math.max(downPeak, (await memory(server.pid)).rss);
    }
    const t3 = performance.now();
    downGrowth.push(Math.max(downPeak, (await memory(server.pid)).rss) - downBase);
    if (n !== size) throw new Error(`download gave ${n} bytes`);
    down.push(size / MB / ((t3 - t2) / 1000));
    const del = await fetch(`${server.base}/api/me/files/${item.id}`, {
      method: "DELETE",
      headers: auth,
    });
    await del.body?.cancel();
  }

  // The same bytes to a local file, in the same pieces, synced to disk as KV commits are.
  const dir = await Deno.makeTempDir({ prefix: "files_bench_" });
  const writes: number[] = [];
  const reads: number[] = [];
  const bareKv: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const path = `${dir}/local-${r}.bin`;
      const t0 = performance.now();
      const f = await Deno.open(path, { write: true, create: true, truncate: true });
      for (let off = 0; off < size; off += PIECE) {
        const piece = bytes.subarray(off, Math.min(size, off + PIECE));
        for (let w = 0; w < piece.length;) w += await f.write(piece.subarray(w));
      }
      await f.syncData();
      f.close();
      writes.push(size / MB / ((performance.now() - t0) / 1000));
      const t1 = performance.now();
      const rf = await Deno.open(path);
      let n = 0;
      for await (const chunk of rf.readable) n += chunk.length;
      reads.push(size / MB / ((performance.now() - t1) / 1000));
      if (n !== size) throw new Error("local read short");
    }
    // The floor for uploads: the same bytes straight into a KV file in this process, in the
    // chunk size and batch size kv/files/files.ts uses, one atomic commit after another: what any
    // upload into Deno KV costs without HTTP, validation, quota or bookkeeping.
    for (let r = 0; r < rounds; r++) {
      const kv = await Deno.openKv(`${dir}/bare-${r}.sqlite3`);
      try {
        const t0 = performance.now();
        let op = atomic(kv);
        let inBatch = 0;
        for (let off = 0, i = 0; off < size; off += CHUNK, i++) {
          op.set(["chunk", i], bytes.subarray(off, Math.min(size, off + CHUNK)));
          if (++inBatch === BATCH) {
            await commit(op);
            op = atomic(kv);
            inBatch = 0;
          }
        }
        if (inBatch > 0) await commit(op);
        bareKv.push(size / MB / ((performance.now() - t0) / 1000));
      } finally {
        kv.close();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }

  return {
    bareKvWriteMBs: round1(median(bareKv)),
    size,
    rounds,
    uploadMBs: round1(median(up)),
    downloadMBs: round1(median(down)),
    localWriteMBs: round1(median(writes)),
    localReadMBs: round1(median(reads)),
    rssBeforeMiB: round1(before / 1024),
    rssPeakMiB: round1(peak / 1024),
    rssGrowthMiB: round1(Math.max(...growth) / 1024),
    downloadGrowthMiB: round1(Math.max(...downGrowth) / 1024),
  };
}

/** The table printed by this file and by bench/run.ts. */
export function filesTable(r: FilesBenchResult): string {
  const mb = (r.size / MB).toFixed(1);
  return [
    `Files: ${mb} MB file, median of ${r.rounds} rounds, server on 127.0.0.1, KV file in /tmp`,
    "",
    "| measure | MB/s |",
    "| --- | ---: |",
    `| upload (PUT /api/me/files, streamed into KV) | ${r.uploadMBs} |`,
    `| download (GET /api/files/..., streamed from KV) | ${r.downloadMBs} |`,
    `| bare KV chunk writer, same bytes (${
      CHUNK / 1024
    } KiB chunks, ${BATCH} per atomic) | ${r.bareKvWriteMBs} |`,
    `| upload ÷ bare KV chunk writer | ${(r.uploadMBs / r.bareKvWriteMBs).toFixed(2)} |`,
    `| local file write + fdatasync, same bytes | ${r.localWriteMBs} |`,
    `| local file read, same bytes | ${r.localReadMBs} |`,
    "",
    `| server memory (the file: ${(r.size / 1048576).toFixed(0)} MiB) | MiB |`,
    "| --- | ---: |",
    `| RSS before the first upload | ${r.rssBeforeMiB} |`,
    `| peak RSS during the first upload | ${r.rssPeakMiB} |`,
    `| largest RSS growth during one upload | ${r.rssGrowthMiB} |`,
    `| largest RSS growth during one download | ${r.downloadGrowthMiB} |`,
  ].join("\n");
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--rounds");
  const rounds = i >= 0 ? Number(Deno.args[i + 1]) : 5;
  const r = await filesBench(rounds);
  console.log(filesTable(r));
  const met = r.uploadMBs / r.bareKvWriteMBs >= UPLOAD_TARGET;
  console.log(
    `\n${met ? "met   " : "MISSED"} upload >= ${UPLOAD_TARGET} of the bare KV chunk writer`,
  );
  if (!met) Deno.exit(1);
}
