import { RestoreError, restoreStream } from "../kv/store/backup.ts";
import { envRecord, loadConfig } from "../lib/config.ts";
import { CREATE_FLAG, openRawKv, ownerKvPath, progressLine, splitCreate } from "./_kv.ts";
import { messageOf, runCommand } from "./_run.ts";

/**
 * `deno task restore <file | ->`: loads a dump made by `deno task backup` into the KV of
 * KV_PATH, which must be empty (a KV holding anything is refused and left alone). Run it
 * before starting the server on that KV.
 */

const USAGE =
  `usage: deno task restore <file | -> [${CREATE_FLAG}]  (${CREATE_FLAG}: into a new KV file)`;

async function main(argv: string[]): Promise<number> {
  const { create, rest: args } = splitCreate(argv);
  if (args.length !== 1 || args[0].startsWith("--")) {
    console.error(USAGE);
    return 2;
  }
  loadConfig(envRecord()); // a bad setting is refused as the server's start refuses it
  let input: ReadableStream<Uint8Array>;
  if (args[0] === "-") input = Deno.stdin.readable;
  else {
    try {
      input = (await Deno.open(args[0])).readable;
    } catch (err) {
      console.error(`cannot read ${args[0]}: ${err instanceof Error ? err.message : err}`);
      return 1;
    }
  }
  const kv = await openRawKv(await ownerKvPath("restore", create));
  const show = progressLine("restore:");
  try {
    const done = await restoreStream(kv, input, (p) => show(p.entries, p.bytes));
    show(done.entries, done.bytes, true);
    return 0;
  } catch (err) {
    if (err instanceof RestoreError) {
      console.error(`restore refused: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    kv.close();
    await input.cancel().catch(() => {});
  }
}

if (import.meta.main) await runCommand(main, (err) => `restore failed: ${messageOf(err)}`);
