import type { Deps } from "../../lib/deps.ts";
import { isoDate } from "../../lib/clock.ts";
import { catalogueChanged } from "./catalogue_doc.ts";
import {
  catalogueChangedIn,
  cleanFacts,
  cleanGets,
  getModule,
  LIMITS,
  loadModules,
  type Module,
  putModule,
  setModuleField,
  slugsOf,
} from "./modules.ts";
import { type Atomic } from "../_atomic.ts";
import { type Learning, learningOf } from "../../lib/learning.ts";
import type { Material } from "./materials.ts";

/**
 * What other areas need from the catalogue: public profiles (accounts) and
 * publication of proposals (forms). Writes here commit the module, its indexes and one
 * trail line in one atomic, then rewrite the catalogue file (kv/catalogue/catalogue_doc.ts).
 */

interface ProfileModule {
  title: string;
  slug: string;
  /** Date `YYYY-MM-DD` the module was published. */
  published: string;
}

const newestFirst = (a: Module, b: Module) =>
  (b.published_at ?? 0) - (a.published_at ?? 0) || a.slug.localeCompare(b.slug);

/**
 * A contributor's name is part of the published catalogue (contributors: [{id, name}]). A
 * rename adds to the catalogue's version in the rename's own atomic when the account has
 * modules, so the document and GET /api/modules/meta rebuild at once; true when it did.
 */
export async function nameInCatalogue(
  kv: Deno.Kv,
  accountId: number,
  op: Atomic,
): Promise<boolean> {
  if ((await slugsOf(kv, accountId)).length === 0) return false;
  catalogueChangedIn(op);
  return true;
}

/** Published modules the account contributes to, for its public profile, newest first. */
export async function modulesOf(kv: Deno.Kv, accountId: number): Promise<ProfileModule[]> {
  const mods = await loadModules(kv, await slugsOf(kv, accountId));
  return mods.filter((m) => m.published && m.contributors.includes(accountId)).sort(newestFirst)
    .map((m) => ({
      title: m.title,
      slug: m.slug,
      published: isoDate(m.published_at ?? m.created),
    }));
}

export interface PublishInput {
  slug: string;
  title: string;
  who: string;
  lede: string;
  about: string;
  area: string;
  track: string;
  /** The name the work is published under. */
  by: string;
  facts: [string, string][];
  gets: string[];
  /** Account ids of the contributors (the submitter first). */
  contributors: number[];
  /** The proposal this module was published from. */
  proposal: number;
  /** Its licence and educational metadata, as the proposal stated them. */
  learning?: Partial<Learning>;
  /** The proposal's files, as links. */
  materials?: Material[];
}

/** True when no module (published or not) has this slug. */
export async function isSlugFree(kv: Deno.Kv, slug: string): Promise<boolean> {
  return (await getModule(kv, slug)).value === null;
}

const cut = (s: string, n: number) => s.trim().slice(0, n);

/**
 * Creates the module in the catalogue, published; one trail line (two on creation:
 * create and publish). When the slug exists (a proposal published again after being taken
 * back) the module keeps its content and contributors, the input's contributors are added,
 * and it is published again. Texts longer than the module limits are cut to them.
 */
export async function publishModule(
  deps: Deps,
  input: PublishInput,
  actor: string,
): Promise<{ slug: string }> {
  const title = cut(input.title, LIMITS.title[1]);
  await putModule(
    deps.kv,
    {
      slug: input.slug,
      title: title.length >= LIMITS.title[0] ? title : input.slug,
      who: cut(input.who, LIMITS.who),
      lede: cut(input.lede, LIMITS.lede),
      about: cut(input.about, LIMITS.about),
      note: "",
      meta: "",
      state: "development",
      track: cut(input.track, LIMITS.track),
      area: cut(input.area, LIMITS.area),
      by: cut(input.by, LIMITS.by),
      facts: cleanFacts(input.facts).slice(0, LIMITS.facts)
        .map(([l, v]) => [l.slice(0, LIMITS.factLabel), v.slice(0, LIMITS.factValue)]),
      gets: cleanGets(input.gets).slice(0, LIMITS.gets).map((g) => g.slice(0, LIMITS.getsLine)),
      ...learningOf(input.learning ?? {}),
      materials: input.materials ?? [],
    },
    input.contributors,
    true,
    {
      actor,
      now: deps.clock.now(),
      proposal: input.proposal,
      keepContent: true,
    },
  );
  await catalogueChanged(deps);
  return { slug: input.slug };
}

/**
 * Takes a module back out of the published catalogue (it stays editable by its
 * contributors, and its points stay); one trail line. False when there is no such module.
 */
export async function unpublishModule(deps: Deps, slug: string, actor: string): Promise<boolean> {
  const ok = await setModuleField(deps.kv, slug, { published: false }, actor, deps.clock.now());
  if (ok) await catalogueChanged(deps);
  return ok;
}

/**
 * Puts a module taken back by unpublishModule into the catalogue again, content unchanged:
 * a take-back whose proposal did not move undoes its half. False when there is no such module.
 */
export async function republishModule(deps: Deps, slug: string, actor: string): Promise<boolean> {
  const ok = await setModuleField(deps.kv, slug, { published: true }, actor, deps.clock.now());
  if (ok) await catalogueChanged(deps);
  return ok;
}

/** Sets a module's `by` (erasure with attribution removed passes ""). False: no module. */
export async function setModuleBy(
  deps: Deps,
  slug: string,
  by: string,
  actor: string,
): Promise<boolean> {
  const ok = await setModuleField(deps.kv, slug, { by }, actor, deps.clock.now());
  if (ok) await catalogueChanged(deps);
  return ok;
}
