import type { Deps } from "../lib/deps.ts";

/**
 * What other areas need from the catalogue: search and public profiles (accounts) and
 * publication of proposals (forms). The catalogue issue implements these; until then they
 * answer as an empty catalogue would, and writes refuse.
 */

export interface ModuleHit {
  title: string;
  slug: string;
  /** Who the module is by (the module's `by`). */
  name: string;
}

export interface ProfileModule {
  title: string;
  slug: string;
  /** Date `YYYY-MM-DD` the module was published. */
  published: string;
}

/** Published modules matching every query word (see kv/search_index.ts), newest first. */
export function searchModules(_kv: Deno.Kv, _words: string[], _limit: number) {
  return Promise.resolve<ModuleHit[]>([]);
}

/** Published modules the account contributes to, for its public profile. */
export function modulesOf(_kv: Deno.Kv, _accountId: number) {
  return Promise.resolve<ProfileModule[]>([]);
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
}

/** True when no module (published or not) has this slug. */
export function isSlugFree(_kv: Deno.Kv, _slug: string) {
  return Promise.resolve(true);
}

/** Creates the module (or republishes it) in the catalogue; one trail line. */
export function publishModule(
  _deps: Deps,
  _input: PublishInput,
  _actor: string,
): Promise<{ slug: string }> {
  return Promise.reject(new Error("the catalogue is not built yet"));
}

/** Takes a module back out of the published catalogue (it stays editable); one trail line. */
export function unpublishModule(_deps: Deps, _slug: string, _actor: string): Promise<boolean> {
  return Promise.reject(new Error("the catalogue is not built yet"));
}

/** Sets a module's `by` (erasure with attribution removed passes ""). */
export function setModuleBy(
  _deps: Deps,
  _slug: string,
  _by: string,
  _actor: string,
): Promise<boolean> {
  return Promise.reject(new Error("the catalogue is not built yet"));
}
