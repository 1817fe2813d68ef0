/**
 * The owner's compaction command, run on the server machine while the server is stopped:
 *   deno task compact
 * Rewrites the KV file (KV_PATH, default ./data/kv.sqlite3) so that nothing deleted, an
 * erased account's records included, survives in its free pages or its -wal (kv/store/compact.ts).
 * It refuses, changing nothing, while another process has the file open.
 * Exit codes: 0 done, 1 refused or failed, 2 usage.
 *
 * Needs every permission (`deno run -A`): Deno's node:sqlite allows attached databases only
 * then, and VACUUM attaches its temporary copy.
 */
import { compact, CompactRefused } from "../kv/store/compact.ts";
import { ownerKvPath } from "./_kv.ts";
import { messageOf, runCommand } from "./_run.ts";

const USAGE = `usage: deno task compact
Rewrites the KV file KV_PATH (default ./data/kv.sqlite3) without the bytes of deleted records.
Stop the server first.`;

async function main(args: string[]): Promise<number> {
  if (args.length > 0) {
    console.error(USAGE);
    return 2;
  }
  const path = await ownerKvPath("compact", false);
  const r = await compact(path);
  const kib = (n: number) => `${Math.ceil(n / 1024)} KiB`;
  console.log(
    `compacted ${path}: ${kib(r.before)} -> ${kib(r.after)} (file and -wal), ` +
      `${r.freePages} free pages rewritten away`,
  );
  return 0;
}

if (import.meta.main) {
  await runCommand(
    main,
    (err) =>
      `compact: ${err instanceof CompactRefused ? err.message : `failed: ${messageOf(err)}`}`,
  );
}
