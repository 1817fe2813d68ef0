import { retryLocked } from "../kv/_atomic.ts";

/**
 * The KV of KV_PATH as Deno opens it, without the server's lock-waiting reads (a restore writes
 * keys as they were, not through the commit path). A file's folder is created if missing.
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
