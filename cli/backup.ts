import { dumpStream } from "../kv/store/backup.ts";
import { envRecord, loadConfig } from "../lib/config.ts";
import { openRawKv, ownerKvPath, progressLine } from "./_kv.ts";
import { messageOf, runCommand } from "./_run.ts";

/**
 * `deno task backup [file]`: a logical dump of the whole KV of KV_PATH (a file, or Deno Deploy's
 * KV through its KV Connect URL and DENO_KV_ACCESS_TOKEN) to `file`, or to standard output when
 * no file (or `-`) is given; streamed, with a progress line on standard error. kv/store/backup.ts
 * describes the format. A file is written beside its name first and renamed when complete.
 */

const USAGE = "usage: deno task backup [file | -]";

async function main(args: string[]): Promise<number> {
  if (args.length > 1 || args[0]?.startsWith("--")) {
    console.error(USAGE);
    return 2;
  }
  const target = args[0] && args[0] !== "-" ? args[0] : null;
  loadConfig(envRecord()); // a bad setting is refused as the server's start refuses it
  const kv = await openRawKv(await ownerKvPath("backup", false));
  const show = progressLine("backup:");
  try {
    let total = { entries: 0, bytes: 0 };
    const stream = dumpStream(kv, (p) => {
      total = p;
      show(p.entries, p.bytes);
    });
    if (target) {
      const partial = `${target}.partial`;
      const file = await Deno.open(partial, { write: true, create: true, truncate: true });
      await stream.pipeTo(file.writable);
      await Deno.rename(partial, target);
    } else {
      await stream.pipeTo(Deno.stdout.writable, { preventClose: true });
    }
    show(total.entries, total.bytes, true);
    return 0;
  } finally {
    kv.close();
  }
}

if (import.meta.main) await runCommand(main, (err) => `backup failed: ${messageOf(err)}`);
