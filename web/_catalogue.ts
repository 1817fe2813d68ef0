/**
 * The published catalogue as the pages need it: the same cached build as GET /api/catalogue
 * (kv/catalogue_doc.ts `published`) and the same point counts as GET /api/points, plus a
 * by-slug map and the filter values, made once per catalogue version.
 */
import { type Published, published } from "../kv/catalogue_doc.ts";
import type { Module } from "../kv/modules.ts";
import { countsSnapshot } from "../kv/points.ts";
import type { Deps } from "../lib/deps.ts";

export interface Catalogue {
  p: Published;
  bySlug: Map<string, Module>;
  areas: string[];
  tracks: string[];
  counts: Map<string, number>;
}

const derived = new WeakMap<Published, Omit<Catalogue, "p" | "counts">>();

const sorted = (values: Iterable<string>) =>
  [...new Set(values)].filter(Boolean).sort((a, b) => a.localeCompare(b));

export async function catalogue(deps: Deps): Promise<Catalogue> {
  const [p, snap] = await Promise.all([published(deps), countsSnapshot(deps.kv)]);
  let d = derived.get(p);
  if (!d) {
    d = {
      bySlug: new Map(p.modules.map((m) => [m.slug, m])),
      areas: sorted(p.modules.map((m) => m.area)),
      tracks: sorted(p.modules.map((m) => m.track)),
    };
    derived.set(p, d);
  }
  return { p, ...d, counts: snap.counts };
}
