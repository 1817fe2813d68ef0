import { iso, MINUTE } from "../../lib/clock.ts";
import { errorKind, log } from "../../lib/log.ts";
import type { Deps } from "../../lib/deps.ts";

/** What the catalogue document needs; the owner's command has no mailer or network. */
export type DocDeps = Pick<Deps, "kv" | "clock" | "config">;
import {
  allModules,
  contributorsView,
  type Module,
  moduleView,
  namesOf,
  VERSION_KEY,
} from "./modules.ts";

/**
 * The published catalogue: every published module, as one JSON document. It is not stored:
 * it is rebuilt from the module records (["modules", slug], kv/catalogue/modules.ts) whenever
 * ["catalogue_version"] moved, which every module write sums in its own atomic. Each
 * process keeps the last build in memory, so a read costs one KV get while nothing changed,
 * and a change made by any process (the owner's command included) shows on the next read.
 * Contributor names are read from the accounts at build time; a rename alone (no module
 * change) shows after at most NAMES_TTL. After each module change the document is also
 * written to CATALOGUE_FILE (temporary file and rename), when configured.
 */

const NAMES_TTL = MINUTE;

export interface Published {
  version: bigint;
  built: number;
  /** Published modules, by slug. */
  modules: Module[];
  names: Map<number, string>;
  /** The document's JSON text, made on first use. */
  json?: string;
  slugs: Set<string>;
  /** GET /api/modules/meta as JSON text, for one points version. */
  meta?: { points: bigint; json: string };
  /** The `counts` of GET /api/points as JSON text, for one points version. */
  counts?: { points: bigint; json: string };
}

const cache = new WeakMap<Deno.Kv, Published>();
const building = new WeakMap<Deno.Kv, Promise<Published>>();

/** The published modules as of now, from the cache when the version has not moved. */
export async function published(deps: DocDeps): Promise<Published> {
  const { kv, clock } = deps;
  const v = await kv.get<Deno.KvU64>(VERSION_KEY);
  const version = v.value?.value ?? 0n;
  const hit = cache.get(kv);
  const now = clock.now();
  if (hit && hit.version === version && now - hit.built < NAMES_TTL && now >= hit.built) {
    return hit;
  }
  const pending = building.get(kv);
  if (pending) {
    const p = await pending;
    if (p.version === version) return p;
  }
  const job = (async () => {
    const modules = (await allModules(kv)).filter((m) => m.published);
    const names = await namesOf(kv, modules.flatMap((m) => m.contributors));
    const slugs = new Set(modules.map((m) => m.slug));
    const p: Published = { version, built: now, modules, names, slugs };
    const current = cache.get(kv);
    if (!current || current.version <= version) cache.set(kv, p);
    return p;
  })();
  building.set(kv, job);
  try {
    return await job;
  } finally {
    if (building.get(kv) === job) building.delete(kv);
  }
}

/** The catalogue document's view of a module: the module resource without points. */
function catalogueEntry(m: Module, names: Map<number, string>) {
  const { points: _p, published: _pub, ...rest } = moduleView(m, names, 0);
  return rest;
}

/** `{generated, count, modules}` as JSON text. */
export async function catalogueJson(deps: DocDeps): Promise<string> {
  const p = await published(deps);
  p.json ??= JSON.stringify({
    generated: iso(p.built),
    count: p.modules.length,
    modules: p.modules.map((m) => catalogueEntry(m, p.names)),
  });
  return p.json;
}

/** `{<slug>: {contributors, points}}` for every published module. */
export function metaOf(p: Published, counts: Map<string, number>) {
  const items: Record<string, { contributors: { id: number; name: string }[]; points: number }> =
    {};
  for (const m of p.modules) {
    items[m.slug] = { contributors: contributorsView(m, p.names), points: counts.get(m.slug) ?? 0 };
  }
  return items;
}

let writing: Promise<void> = Promise.resolve();

/**
 * Called after every committed module change: writes CATALOGUE_FILE when configured.
 * Writes run one after another and each builds from the latest state, so the file ends up
 * matching the last change even when changes race.
 */
export function catalogueChanged(deps: DocDeps): Promise<void> {
  const path = deps.config.catalogueFile;
  if (!path) return Promise.resolve();
  const run = writing.then(() => writeCatalogueFile(deps, path));
  writing = run.catch(() => {});
  return run.catch((err) => {
    // The change itself is committed; the file catches up on the next change.
    log("error", "catalogue file not written", { error: errorKind(err) });
  });
}

async function writeCatalogueFile(deps: DocDeps, path: string): Promise<void> {
  const text = await catalogueJson(deps);
  const dir = path.replace(/[\\/][^\\/]*$/, "");
  if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(tmp, text + "\n");
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}
