/**
 * The published catalogue as the pages need it: the same cached build as GET /api/catalogue
 * (kv/catalogue/catalogue_doc.ts `published`) and the same point counts as GET /api/points, plus a
 * by-slug map and the filter values, made once per catalogue version. The catalogue's filters
 * (its query: the catalogue page, its facets and the feeds read the same) live here too.
 */
import { z } from "zod";
import { type Published, published } from "../kv/catalogue/catalogue_doc.ts";
import { type Module, STATES } from "../kv/catalogue/modules.ts";
import { countsSnapshot } from "../kv/catalogue/points.ts";
import type { Deps } from "../lib/deps.ts";
import { labelOf, LICENCE_IDS, licenceOf, NO_LICENCE } from "../lib/learning.ts";

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

/** The catalogue's facets: each narrows to modules holding the value chosen. */
export const FACETS = [
  "licence",
  "level",
  "subject",
  "language",
  "type",
  "area",
  "track",
  "state",
] as const;
export type Facet = typeof FACETS[number];

/** "none": the modules that state no licence. */
export const NO_LICENCE_VALUE = "none";

const value = z.string().trim().max(120).optional().catch(undefined)
  .transform((v) => v === "" ? undefined : v);

export const Filters = z.object({
  state: z.enum(STATES).optional().catch(undefined),
  area: value,
  track: value,
  licence: z.enum([...LICENCE_IDS, NO_LICENCE_VALUE]).optional().catch(undefined),
  level: value,
  subject: value,
  language: value,
  type: value,
  q: z.string().trim().max(200).optional().catch(undefined).transform((v) => v || undefined),
  /** Left out: by relevance with words, else by points. */
  sort: z.enum(["relevance", "points", "updated", "title"]).optional().catch(undefined),
  page: z.coerce.number().int().min(1).max(10_000).catch(1),
});
export type Filter = z.infer<typeof Filters>;

export const parseFilters = (query: Record<string, string>) => Filters.parse(query);
/** No filter chosen: the whole catalogue. */
export const emptyFilter = (): Filter => parseFilters({});

/** The values of a module for a facet (a list: a module may have several levels). */
export function valuesOf(m: Module, facet: Facet): string[] {
  switch (facet) {
    case "licence":
      return [m.licence ?? NO_LICENCE_VALUE];
    case "area":
    case "track":
    case "state":
      return m[facet] ? [m[facet]] : [];
    default:
      return m[facet] ?? [];
  }
}

/** A facet value in words. */
export function valueLabel(facet: Facet, v: string): string {
  if (facet === "licence") return v === NO_LICENCE_VALUE ? NO_LICENCE : licenceOf(v)?.short ?? v;
  if (facet === "level" || facet === "subject" || facet === "language" || facet === "type") {
    return labelOf(facet, v);
  }
  return v;
}

/** True when the module has every facet value chosen, leaving out `except`. */
export function passes(m: Module, f: Filter, except?: Facet): boolean {
  for (const facet of FACETS) {
    if (facet === except) continue;
    const want = f[facet];
    if (want !== undefined && !valuesOf(m, facet).includes(want)) return false;
  }
  return true;
}

/** The published modules the facets keep (no keyword, no order). */
export function filterModules(cat: Catalogue, f: Filter): Module[] {
  return cat.p.modules.filter((m) => passes(m, f));
}

/** The filters as a query (`?area=...&q=...`), "" when none; sort and page left out. */
export function catalogueQuery(f: Filter, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const facet of FACETS) if (f[facet] !== undefined) q.set(facet, f[facet]!);
  if (f.q) q.set("q", f.q);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** A feed's (or a filtered page's) title: "Modules: Biology, CC BY 4.0". */
export function feedTitle(f: Filter): string {
  const parts = FACETS.filter((facet) => f[facet] !== undefined).map((facet) =>
    valueLabel(facet, f[facet]!)
  );
  if (f.q) parts.push(`“${f.q}”`);
  return parts.length ? `Modules: ${parts.join(", ")}` : "New and changed modules";
}
