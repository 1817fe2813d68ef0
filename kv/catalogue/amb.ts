import { iso } from "../../lib/clock.ts";
import {
  isoDuration,
  learningOf,
  licenceOf,
  type ListField,
  readableRange,
  termOf,
} from "../../lib/learning.ts";
import { changedAt, type Module } from "./modules.ts";

/**
 * A published module as a learning resource for harvesters: JSON-LD in the AMB profile
 * (dini-ag-kim/amb, its context https://w3id.org/kim/amb/context.jsonld, whose `@vocab` is
 * schema.org), on the module page, in OAI-PMH's `amb` format and beside the Atom feed.
 * Holds no KV keys.
 */

const AMB_CONTEXT = "https://w3id.org/kim/amb/context.jsonld";
/** Who publishes every module: the catalogue itself. */
export const PUBLISHER_NAME = "Community catalogue";

interface Creator {
  name: string;
  /** The public profile's address, when the person has one. */
  url?: string;
}

/** A file or link that is part of the module (its materials). */
export interface Part {
  name: string;
  url: string;
  /** Media type and size in bytes, for a stored file. */
  type?: string;
  size?: number;
}

const concepts = (field: ListField, ids: string[]) =>
  ids.flatMap((id) => {
    const t = termOf(field, id);
    if (!t) return [];
    return [{
      id: t.uri,
      type: "Concept",
      prefLabel: { en: t.label, ...(t.de ? { de: t.de } : {}) },
    }];
  });

/** The AMB record of a module at `url` (its page), by `creators`, published from `baseUrl`. */
export function ambRecord(
  m: Module,
  o: { url: string; baseUrl: string; creators: Creator[]; parts?: Part[] },
) {
  const l = learningOf(m);
  const licence = licenceOf(l.licence);
  const creators = o.creators.length ? o.creators : m.by ? [{ name: m.by }] : [];
  const ages = readableRange(l.age_min, l.age_max);
  const files = (o.parts ?? []).filter((p) => p.type);
  return {
    "@context": [AMB_CONTEXT, { "@language": "en" }],
    id: o.url,
    type: ["LearningResource"],
    name: m.title,
    description: m.lede || undefined,
    creator: creators.length
      ? creators.map((c) => ({ type: "Person", name: c.name, ...(c.url ? { id: c.url } : {}) }))
      : undefined,
    publisher: [{ type: "Organization", name: PUBLISHER_NAME, id: `${o.baseUrl}/` }],
    // AMB takes open licences only: all rights reserved is stated as no licence (with
    // conditionsOfAccess unchanged: the page is free to read).
    license: licence?.url ? { id: licence.url } : undefined,
    inLanguage: l.language.length ? [...l.language] : undefined,
    dateCreated: iso(m.created),
    datePublished: m.published_at ? iso(m.published_at) : undefined,
    dateModified: iso(changedAt(m)),
    about: l.subject.length ? concepts("subject", l.subject) : undefined,
    learningResourceType: l.type.length ? concepts("type", l.type) : undefined,
    educationalLevel: l.level.length ? concepts("level", l.level) : undefined,
    audience: l.audience.length ? concepts("audience", l.audience) : undefined,
    keywords: [m.area, m.track].filter(Boolean).length
      ? [m.area, m.track].filter(Boolean)
      : undefined,
    isAccessibleForFree: true,
    // schema.org terms beside AMB's (its context's vocabulary is schema.org).
    timeRequired: l.duration !== null ? isoDuration(l.duration) : undefined,
    typicalAgeRange: ages === null
      ? undefined
      : l.age_min !== null && l.age_max !== null
      ? `${l.age_min}-${l.age_max}`
      : l.age_min !== null
      ? `${l.age_min}-`
      : `-${l.age_max}`,
    accessibilityFeature: l.accessibility.length ? [...l.accessibility] : undefined,
    creativeWorkStatus: m.state,
    hasPart: o.parts?.length
      ? o.parts.map((p) => ({ id: p.url, name: p.name, type: ["LearningResource"] }))
      : undefined,
    encoding: files.length
      ? files.map((p) => ({
        type: "MediaObject",
        contentUrl: p.url,
        encodingFormat: p.type,
        ...(p.size !== undefined ? { contentSize: String(p.size) } : {}),
      }))
      : undefined,
  };
}
