import { catalogueChanged } from "../catalogue/catalogue_doc.ts";
import {
  changeContributor,
  dropContributorIndex,
  loadModules,
  moduleView,
  namesOf,
  slugsOf,
} from "../catalogue/modules.ts";
import type { AccountPart } from "./_part.ts";
import { allCounts, pointsOf, withdrawAll } from "../catalogue/points.ts";

/**
 * What the catalogue area holds of an account: its places among module contributors and
 * its points. Erasure takes the account off every module (the last contributor included:
 * the module stays, for the team to look after) and withdraws its points with their counts.
 */
export const cataloguePart: AccountPart = {
  name: "catalogue",
  sections: {
    modules: {
      what: "Catalogue modules you are a contributor of, as the catalogue shows them",
      kept: "The modules stay after erasure, for the team to look after; your name leaves " +
        "their contributors",
    },
    points: {
      what: "The modules you gave a point to",
      kept: "Until you withdraw them or erase the account",
    },
  },
  async export({ kv }, account) {
    const mods = (await loadModules(kv, await slugsOf(kv, account.id)))
      .filter((m) => m.contributors.includes(account.id));
    const names = await namesOf(kv, mods.flatMap((m) => m.contributors));
    const counts = await allCounts(kv);
    return {
      modules: mods.map((m) => moduleView(m, names, counts.get(m.slug) ?? 0)),
      points: await pointsOf(kv, account.id),
    };
  },
  async erase(deps, account) {
    const now = deps.clock.now();
    const slugs = await slugsOf(deps.kv, account.id);
    for (const slug of slugs) {
      const r = await changeContributor(deps.kv, slug, account.id, "erase", "system", now);
      if (!r.ok) {
        // The index said so but the record does not: drop the stale index key.
        await dropContributorIndex(deps.kv, account.id, slug);
      }
    }
    await withdrawAll(deps.kv, account.id);
    if (slugs.length > 0) await catalogueChanged(deps);
    return {};
  },
  async counts({ kv }, account) {
    return { modules: (await slugsOf(kv, account.id)).length };
  },
};
