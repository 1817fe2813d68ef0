/**
 * Schema migrations: ordered, idempotent steps run at start; a new, empty KV records them all
 * as applied without running them (`recordedAsNew`). Key layout:
 *   ["migrations", index] -> {name, at}   one per applied step (index from 1)
 * The number of applied steps is `migrations` in GET /api/healthz. A step is recorded with
 * `check(versionstamp: null)`, so two processes starting together apply it once.
 */

import { atomic, commit, transact } from "../_atomic.ts";
import type { Account } from "../accounts/accounts.ts";
import { getManyEntries } from "../_batch.ts";

/** What a step may need beside the KV. */
export interface MigrationContext {
  /** SECRETS_KEY, for the step that seals old channels; null when the server has none. */
  secretsKey: string | null;
}

export interface Migration {
  name: string;
  /**
   * Must be safe to run again (a crash may stop it before it is recorded). "again": not done
   * yet, not recorded; the next start runs it again.
   */
  run(kv: Deno.Kv, ctx: MigrationContext): Promise<void | "again">;
}

export const MIGRATIONS: Migration[] = [
  // The initial layout needs no data change; the step marks schema level 1.
  { name: "initial layout", run: () => Promise.resolve() },
  { name: "accounts name their latest application", run: nameLatestApplications },
  { name: "search index: a dictionary of terms, 300 words a text", run: searchDictionary },
  // Steps 4 and 5 run the same step: a store that applied the first form of step 4 (a UUID
  // alone) gets the rest from step 5; step numbers are positions and stay.
  { name: "heartbeats get a Healthchecks UUID", run: heartbeatCodes },
  { name: "heartbeats: a UUID and a slug as Healthchecks checks", run: heartbeatCodes },
  { name: "heartbeats: the UUID's hook entry is its one index", run: dropUuidIndex },
  { name: "modules: a licence (not stated) and educational metadata", run: giveLearning },
  { name: "incident notes become the first update of an incident", run: notesToIncidents },
  { name: "deliveries: channel posts and followers' mail join the one outbox", run: oneOutbox },
  { name: "channels from before kinds: their clear secrets sealed", run: sealOldChannels },
  { name: "points: the version of before the shards folded into shard 0", run: foldPointsVersion },
  { name: "search: the index of modules no one reads dropped", run: dropModuleIndex },
  { name: "the status page becomes the account's first of several", run: firstStatusPages },
];

/** The single status page of each account becomes its page 1 (kv/status/settings.ts). */
async function firstStatusPages(kv: Deno.Kv): Promise<void> {
  const { movePagesToFirst } = await import("../status/settings.ts");
  await movePagesToFirst(kv);
}

/** Deletes the modules' part of the word index (kv/search/search_index.ts `dropModuleIndex`). */
async function dropModuleIndex(kv: Deno.Kv): Promise<void> {
  const { dropModuleIndex } = await import("../search/search_index.ts");
  await dropModuleIndex(kv);
}

/**
 * Seals the channels from before kinds (kv/alerts/channels.ts `sealClearChannels`). Without a
 * SECRETS_KEY it cannot: they stay readable as they are, and the next start tries again.
 */
async function sealOldChannels(kv: Deno.Kv, ctx: MigrationContext): Promise<void | "again"> {
  const { sealClearChannels } = await import("../alerts/channels.ts");
  return await sealClearChannels(kv, ctx.secretsKey) > 0 ? "again" : undefined;
}

/** Folds `["points_version"]` into the shards (kv/catalogue/points.ts `foldOldVersion`). */
async function foldPointsVersion(kv: Deno.Kv): Promise<void> {
  const { foldOldVersion } = await import("../catalogue/points.ts");
  await foldOldVersion(kv);
}

/** Moves the pending posts and followers' mail into the outbox (kv/alerts/outbox.ts). */
async function oneOutbox(kv: Deno.Kv): Promise<void> {
  const { moveOldQueues } = await import("../alerts/outbox.ts");
  await moveOldQueues(kv);
}

/** Moves today's incident notes into incidents (kv/status/incidents.ts `moveNotes`). */
async function notesToIncidents(kv: Deno.Kv): Promise<void> {
  const { moveNotes } = await import("../status/incidents.ts");
  await moveNotes(kv, Date.now());
}

/** Gives every module the metadata fields, nothing stated (kv/catalogue/modules.ts `giveLearning`). */
async function giveLearning(kv: Deno.Kv): Promise<void> {
  const { giveLearning } = await import("../catalogue/modules.ts");
  await giveLearning(kv);
}

/** Gives every heartbeat a UUID, a slug and the UUID's hook entry (kv/service/commands.ts `giveCodes`). */
async function heartbeatCodes(kv: Deno.Kv): Promise<void> {
  const { giveCodes } = await import("../service/commands.ts");
  await giveCodes(kv);
}

/** Drops the earlier ["services_by_uuid"] index (kv/service/commands.ts `dropUuidIndex`). */
async function dropUuidIndex(kv: Deno.Kv): Promise<void> {
  const { dropUuidIndex } = await import("../service/commands.ts");
  await dropUuidIndex(kv);
}

/** Fills the search index's dictionary of terms from the records (kv/search/search_index.ts). */
async function searchDictionary(kv: Deno.Kv): Promise<void> {
  const { rebuildDictionary } = await import("../search/search_index.ts");
  const { eachAccount, personText } = await import("../accounts/accounts.ts");
  const { eachEntry, indexed } = await import("../accounts/journal.ts");
  await rebuildDictionary(kv, "person", eachAccount(kv), personText, (a) => a.id);
  await rebuildDictionary(kv, "journal", eachEntry(kv), indexed, (e) => e.id);
}

/** Sets `application` on every account that lacks it, from the account's application index. */
async function nameLatestApplications(kv: Deno.Kv): Promise<void> {
  // Imported here: a start-up with every step applied evaluates none of the steps' modules.
  const { latestByIndex } = await import("../accounts/applications.ts");
  const { eachAccount, putAccount } = await import("../accounts/accounts.ts");
  for await (const e of eachAccount(kv)) {
    if (e.value.application !== undefined) continue;
    await transact(async () => {
      const entry = await kv.get<Account>(e.key);
      if (!entry.value || entry.value.application !== undefined) return { op: null, result: 0 };
      const latest = await latestByIndex(kv, entry.value.id);
      const next = { ...entry.value, application: latest?.id ?? null };
      return { op: putAccount(atomic(kv).check(entry), next), result: 0 };
    });
  }
}

export async function runMigrations(
  kv: Deno.Kv,
  now: number,
  ctx: MigrationContext = { secretsKey: null },
): Promise<number> {
  const keys = MIGRATIONS.map((_, i) => ["migrations", i + 1]);
  if (await recordedAsNew(kv, keys, now)) return MIGRATIONS.length;
  const applied = await getManyEntries(kv, keys);
  for (let i = 0; i < MIGRATIONS.length; i++) {
    if (applied[i].value !== null) continue;
    const key = keys[i];
    const done = await kv.get(key);
    if (done.value !== null) continue;
    if (await MIGRATIONS[i].run(kv, ctx) === "again") continue;
    await commit(atomic(kv).check(done).set(key, { name: MIGRATIONS[i].name, at: now }));
  }
  return MIGRATIONS.length;
}

/**
 * A new KV (no entry at all) holds nothing a step would change: every step is recorded as
 * applied in one atomic, and none runs or loads its modules. False when the KV holds anything,
 * or when another process recorded a step first (then the steps run as on any KV). Whatever
 * another process writes between the look and the atomic (an owner command on the new file) is
 * written by this version, in the form the steps lead to.
 */
async function recordedAsNew(kv: Deno.Kv, keys: Deno.KvKey[], now: number): Promise<boolean> {
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) return false;
  const op = atomic(kv);
  keys.forEach((key, i) => {
    op.check({ key, versionstamp: null }).set(key, { name: MIGRATIONS[i].name, at: now });
  });
  return (await commit(op)).ok;
}

export async function countMigrations(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: ["migrations"] })) n++;
  return n;
}
