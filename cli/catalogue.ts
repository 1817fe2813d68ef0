import { openKv } from "../kv/_atomic.ts";
import { exportCatalogue, importCatalogue, ImportError } from "../kv/catalogue/catalogue_io.ts";
import { systemClock } from "../lib/clock.ts";
import { ConfigError, envRecord, loadConfig } from "../lib/config.ts";
import { CREATE_FLAG, ownerKvPath, splitCreate } from "./_kv.ts";
import { runCommand } from "./_run.ts";

/**
 * The owner's catalogue command, on the same KV as the server (it may be running: a busy
 * KV file is retried, see kv/_atomic.ts).
 *   deno task catalogue import <file.json>   loads modules (existing slugs are updated)
 *   deno task catalogue export               prints every module in the same form
 */

const USAGE =
  `usage: deno task catalogue import <file.json> | export  (${CREATE_FLAG}: into a new, empty KV)`;

async function main(argv: string[]): Promise<number> {
  const { create, rest: args } = splitCreate(argv);
  const [cmd, file, ...extra] = args;
  if (!(cmd === "import" && file && extra.length === 0) && !(cmd === "export" && !file)) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig(envRecord());
  let data: unknown = null;
  if (cmd === "import") {
    try {
      data = JSON.parse(await Deno.readTextFile(file));
    } catch (err) {
      console.error(`cannot read ${file}: ${err instanceof Error ? err.message : err}`);
      return 1;
    }
  }
  const kv = await openKv(await ownerKvPath("catalogue", create && cmd === "import"));
  try {
    if (cmd === "export") {
      console.log(JSON.stringify(await exportCatalogue(kv), null, 2));
      return 0;
    }
    const r = await importCatalogue({ kv, clock: systemClock, config }, data);
    console.log(
      `imported ${r.created + r.updated + r.unchanged} modules: ${r.created} created, ` +
        `${r.updated} updated, ${r.unchanged} unchanged`,
    );
    return 0;
  } finally {
    kv.close();
  }
}

/**
 * What a command that loads modules says of a failure: a bad configuration or a refused import
 * in plain words (`<verb> refused: ...`), anything else as thrown.
 */
export const explainImport = (verb: string) => (err: unknown) =>
  err instanceof ConfigError
    ? err.message
    : err instanceof ImportError
    ? `${verb} refused: ${err.message}`
    : err;

if (import.meta.main) await runCommand(main, explainImport("import"));
