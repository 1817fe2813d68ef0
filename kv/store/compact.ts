import { DatabaseSync } from "node:sqlite";

/**
 * Physical erasure for a self-hosted KV file. Deno KV keeps its data in one SQLite file (plus
 * its -wal): a deleted record's bytes stay in free pages, in the free space of pages still in
 * use and in old WAL frames until something overwrites them (auto vacuum is off). VACUUM
 * rebuilds the file from the live records only; a TRUNCATE checkpoint then empties the WAL.
 *
 * It runs only while nothing else has the file open: Deno KV holds a shared lock on its file
 * for as long as it is open, so an exclusive lock that cannot be had means the server (or an
 * owner command) is running, and the compaction refuses instead of waiting or racing it.
 * The lock is taken in EXCLUSIVE locking mode, so it is held from the check to the end.
 * Owns no keys.
 */

interface CompactReport {
  /** Bytes of the file and its -wal before and after. */
  before: number;
  after: number;
  /** Free pages before (after a VACUUM there are none). */
  freePages: number;
}

/** Why a compaction did not run; the message is meant for the owner's terminal. */
export class CompactRefused extends Error {}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  }
}

const filesSize = async (path: string) => (await sizeOf(path)) + (await sizeOf(`${path}-wal`));

async function compactKvFile(path: string | undefined): Promise<CompactReport> {
  if (!path || path === ":memory:" || /^https?:/.test(path)) {
    throw new CompactRefused(
      "KV_PATH does not name a KV file: on Deno Deploy or KV Connect the platform stores the " +
        "data and reclaims deleted records itself; there is nothing to compact here",
    );
  }
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) throw new CompactRefused(`no KV file at ${path}`);
    throw err;
  }
  if (!stat.isFile) throw new CompactRefused(`${path} is not a file`);
  const before = await filesSize(path);

  // No busy timeout (SQLite's default): a held lock is reported at once, not waited for.
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    try {
      db.exec("BEGIN EXCLUSIVE");
      db.exec("COMMIT");
    } catch (err) {
      if (/locked|busy/i.test(String((err as Error).message))) {
        throw new CompactRefused(
          `the KV file ${path} is in use: stop the server (and any owner command) first, then ` +
            `run the compaction again`,
        );
      }
      throw err;
    }
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()
      .map((r) => String((r as { name: unknown }).name));
    if (!tables.includes("kv")) {
      throw new CompactRefused(`${path} is not a Deno KV file (no kv table); nothing changed`);
    }
    const freePages = Number(
      (db.prepare("PRAGMA freelist_count").get() as {
        freelist_count: number;
      }).freelist_count,
    );
    // secure_delete zeroes what this connection frees; VACUUM writes a new file of live rows.
    db.exec("PRAGMA secure_delete = ON");
    db.exec("VACUUM");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return { before, after: 0, freePages };
  } finally {
    db.close();
  }
}

/** Compacts and measures the result once the connection has closed. */
export async function compact(path: string | undefined): Promise<CompactReport> {
  const report = await compactKvFile(path);
  return { ...report, after: await filesSize(path!) };
}
