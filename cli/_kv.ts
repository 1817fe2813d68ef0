import { retryLocked } from "../kv/_atomic.ts";
import { DEFAULT_KV_PATH, envRecord, kvFileRefusal, kvPathRefusal } from "../lib/config.ts";

/** The flag that lets an owner command make a new, empty KV database. */
export const CREATE_FLAG = "--create";

/** The arguments without `--create`, and whether it was among them. */
export function splitCreate(args: string[]): { create: boolean; rest: string[] } {
  const rest = args.filter((a) => a !== CREATE_FLAG);
  return { create: rest.length !== args.length, rest };
}

/**
 * The KV location of every owner command (KV_PATH, default ./data/kv.sqlite3), refused as the
 * server refuses it, before anything is opened or created: a folder that does not exist, a file
 * that is not a KV database, and also no database at all unless `create` (`--create`) says to
 * make a new, empty one (a command on a mistyped path, or run from another folder, would
 * otherwise write into a database nobody serves). A refusal is one line on standard error and
 * exit 2.
 */
export async function ownerKvPath(command: string, create: boolean): Promise<string> {
  const env = envRecord();
  const path = env.KV_PATH || DEFAULT_KV_PATH;
  const refusal = await kvPathRefusal(env) ??
    await kvFileRefusal(
      path,
      create
        ? null
        : `check KV_PATH and the folder you run this in; ${CREATE_FLAG} makes a new one`,
    );
  if (refusal) {
    console.error(`${command}: ${refusal}`);
    Deno.exit(2);
  }
  return path;
}

/**
 * The KV of KV_PATH as Deno opens it, without the server's lock-waiting reads (a restore writes
 * keys as they were, not through the commit path). `path` has passed `ownerKvPath`: only the
 * default path's folder may still need making.
 */
export async function openRawKv(path: string | undefined): Promise<Deno.Kv> {
  if (path && !/^https?:/.test(path) && path !== ":memory:") {
    const dir = path.replace(/[\\/][^\\/]*$/, "");
    if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
  }
  return await retryLocked(() => Deno.openKv(path));
}

/** A progress line on standard error, rewritten in place at most twice a second. */
export function progressLine(verb: string) {
  const enc = new TextEncoder();
  let last = 0;
  const show = (entries: number, bytes: number, done = false) => {
    const now = performance.now();
    if (!done && now - last < 500) return;
    last = now;
    const mib = (bytes / 1024 / 1024).toFixed(1);
    Deno.stderr.writeSync(
      enc.encode(`\r${verb} ${entries} entries, ${mib} MiB${done ? "\n" : ""}`),
    );
  };
  return show;
}
