import { isoDate } from "../../lib/clock.ts";
import { type Atomic, atomic, commit, transact } from "../_atomic.ts";
import { findAccountByEmail, getAccounts } from "../accounts/accounts.ts";
import { invalid, notFound } from "../../lib/errors.ts";
import { trailAppend, type TrailEntry } from "../store/trail.ts";
import { getManyValues } from "../_batch.ts";
import { type Material, type MaterialInput, resolveMaterials } from "./materials.ts";
import {
  type Learning,
  LEARNING_FIELDS,
  learningOf,
  learningProblem,
  licenceOf,
} from "../../lib/learning.ts";

/**
 * Modules of the catalogue, addressed by slug. Key layout:
 *   ["modules", slug]                         -> Module
 *   ["modules_by_account", account_id, slug]  -> true   (contributor index)
 *   ["catalogue_version"]                     -> Deno.KvU64, summed in every module write (and
 *                                               in a contributor's rename, kv/catalogue/catalogue_api.ts)
 *   ["catalogue_tombstones", slug]            -> Tombstone: a module taken back out of the
 *                                               catalogue (OAI-PMH's deleted record); removed
 *                                               when it is published again
 * Every write goes through `writeModule`, which puts the record, the contributor index and
 * the catalogue version in the caller's atomic, so none of them can
 * disagree with the record. The version is summed (never checked), so writes to different
 * modules never conflict on it; readers compare it to rebuild cached catalogue views.
 */

export const STATES = ["idea", "development", "finished"] as const;
type ModuleState = typeof STATES[number];

export const LIMITS = {
  title: [3, 120],
  who: 160,
  lede: 300,
  about: 4000,
  note: 2000,
  meta: 160,
  track: 120,
  area: 120,
  by: 120,
  facts: 12,
  factLabel: 60,
  factValue: 200,
  gets: 8,
  getsLine: 300,
} as const;

/** Slugs: lower-case letters, digits and inner hyphens, at most 80 characters. */
export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$/;

/** A module: its texts, and its educational metadata (lib/learning.ts; migration 7 gave the
 * modules from before it "nothing stated", licence null included). */
export interface Module extends Learning {
  slug: string;
  title: string;
  who: string;
  lede: string;
  about: string;
  /** "" when empty (shown as null). */
  note: string;
  meta: string;
  state: ModuleState;
  track: string;
  area: string;
  by: string;
  facts: [string, string][];
  gets: string[];
  /** Account ids, in the order they joined; names are read from the accounts. */
  contributors: number[];
  published: boolean;
  /** When the module was last published (ms), null if never. */
  published_at: number | null;
  /** The proposal it was published from, when there is one. */
  proposal: number | null;
  /** Files and links attached (kv/catalogue/materials.ts); absent on modules from before them. */
  materials?: Material[];
  created: number;
  updated: number;
}

/** The fields a contributor may edit (PATCH /api/me/modules/<slug>). */
export const EDITABLE = [
  "title",
  "who",
  "lede",
  "about",
  "note",
  "state",
  "meta",
  "facts",
  "gets",
  ...LEARNING_FIELDS,
  "materials",
] as const;
type Editable = typeof EDITABLE[number];
/** A change as sent: materials name their files by path (kv/catalogue/materials.ts resolves them). */
export type ModulePatch = Partial<Omit<Pick<Module, Editable>, "materials">> & {
  materials?: MaterialInput[];
};

const moduleKey = (slug: string) => ["modules", slug] as const;
export const byAccountKey = (id: number, slug: string) => ["modules_by_account", id, slug] as const;
export const VERSION_KEY = ["catalogue_version"] as const;
const tombstoneKey = (slug: string) => ["catalogue_tombstones", slug] as const;

/** What stays of a module taken back: when, and the sets it was in (api/oai.ts). */
interface Tombstone {
  slug: string;
  at: number;
  area: string;
  track: string;
}

/** When a module last changed for its readers: an edit, or its (re)publication. */
export const changedAt = (m: Module) => Math.max(m.updated, m.published_at ?? 0);

/** Every module taken back and not published again. */
export async function tombstones(kv: Deno.Kv): Promise<Tombstone[]> {
  const out: Tombstone[] = [];
  for await (const e of kv.list<Tombstone>({ prefix: ["catalogue_tombstones"] })) out.push(e.value);
  return out;
}

/** Facts: trimmed, pairs with an empty side dropped. */
export function cleanFacts(facts: readonly (readonly [string, string])[]): [string, string][] {
  return facts.map(([l, v]) => [l.trim(), v.trim()] as [string, string]).filter(([l, v]) =>
    l !== "" && v !== ""
  );
}

/** Gets: trimmed lines, empty ones dropped. */
export function cleanGets(gets: readonly string[]): string[] {
  return gets.map((g) => g.trim()).filter((g) => g !== "");
}

/** Every module, published or not, in slug order (migrations). */
export function eachModule(kv: Deno.Kv): AsyncIterableIterator<Deno.KvEntry<Module>> {
  return kv.list<Module>({ prefix: ["modules"] });
}

export async function getModule(kv: Deno.Kv, slug: string) {
  return await kv.get<Module>(moduleKey(slug));
}

/** Adds to `op` the record change and everything kept in step with it. */
function writeModule(
  op: Atomic,
  before: Module | null,
  after: Module | null,
  now: number,
): Atomic {
  const slug = (after ?? before)!.slug;
  const was = before?.published ?? false;
  const is = after?.published ?? false;
  if (was && !is) {
    op.set(tombstoneKey(slug), { slug, at: now, area: before!.area, track: before!.track });
  } else if (is && !was) op.delete(tombstoneKey(slug));
  if (after) op.set(moduleKey(slug), after);
  else op.delete(moduleKey(slug));
  const had = new Set(before?.contributors ?? []);
  const has = new Set(after?.contributors ?? []);
  for (const id of had) if (!has.has(id)) op.delete(byAccountKey(id, slug));
  for (const id of has) if (!had.has(id)) op.set(byAccountKey(id, slug), true);
  return catalogueChangedIn(op);
}

/** Adds a change of the published catalogue to `op` (a contributor's rename, kv/catalogue/catalogue_api.ts). */
export function catalogueChangedIn(op: Atomic): Atomic {
  return op.sum(VERSION_KEY, 1n);
}

/** Slugs of the modules an account contributes to. */
export async function slugsOf(kv: Deno.Kv, accountId: number): Promise<string[]> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: ["modules_by_account", accountId] })) {
    out.push(e.key[2] as string);
  }
  return out;
}

/** Loads modules by slug (10 per read), skipping any that are gone. */
export async function loadModules(kv: Deno.Kv, slugs: string[]): Promise<Module[]> {
  return await getManyValues<Module>(kv, slugs.map(moduleKey));
}

export async function allModules(kv: Deno.Kv): Promise<Module[]> {
  const out: Module[] = [];
  for await (const e of kv.list<Module>({ prefix: ["modules"] }, { batchSize: 500 })) {
    out.push(e.value);
  }
  return out;
}

/** Names of accounts by id ("" for an account that is gone or unnamed). */
export async function namesOf(kv: Deno.Kv, ids: Iterable<number>): Promise<Map<number, string>> {
  const list = [...new Set(ids)];
  const names = new Map<number, string>();
  for (const a of await getAccounts(kv, list)) names.set(a.id, a.name);
  return names;
}

export const contributorsView = (m: Module, names: Map<number, string>) =>
  m.contributors.map((id) => ({ id, name: names.get(id) ?? "" }));

/** The module resource of docs/api.md "Resources, times and text". */
export function moduleView(m: Module, names: Map<number, string>, points: number) {
  return {
    slug: m.slug,
    title: m.title,
    who: m.who,
    lede: m.lede,
    about: m.about,
    note: m.note === "" ? null : m.note,
    meta: m.meta,
    state: m.state,
    track: m.track,
    area: m.area,
    by: m.by,
    url: `/modules/${m.slug}`,
    updated: isoDate(m.updated),
    facts: m.facts.map(([l, v]) => [l, v] as [string, string]),
    gets: [...m.gets],
    contributors: contributorsView(m, names),
    points,
    published: m.published,
    ...learningOf(m),
    licence_url: licenceOf(m.licence)?.url ?? null,
    materials: (m.materials ?? []).map((x) => ({ ...x })),
  };
}

/** Applies a patch; answers the changed field names (none: nothing to write). */
function applyPatch(
  m: Module,
  patch: Partial<Pick<Module, Editable>>,
): { next: Module; changed: Editable[] } {
  const next: Module = { ...m };
  const changed: Editable[] = [];
  for (const f of EDITABLE) {
    const v = patch[f];
    if (v === undefined) continue;
    if (JSON.stringify(v) === JSON.stringify(m[f] ?? (f === "materials" ? [] : undefined))) {
      continue;
    }
    // deno-lint-ignore no-explicit-any
    (next as any)[f] = v;
    changed.push(f);
  }
  return { next, changed };
}

type PatchResult =
  | { ok: true; module: Module; changed: Editable[] }
  | { ok: false; reason: "missing" };

/**
 * Edits a module: one trail line per changed field, `updated` stamped when anything changed.
 * `by`: the editing account (its own public files may be attached; the team's, any contributor's).
 */
export async function patchModule(
  kv: Deno.Kv,
  slug: string,
  patch: ModulePatch,
  actor: string,
  now: number,
  by: { account: number | null; team: boolean } = { account: null, team: true },
): Promise<PatchResult> {
  return await transact<PatchResult>(async () => {
    const entry = await getModule(kv, slug);
    if (!entry.value) return { op: null, result: { ok: false, reason: "missing" } };
    const { materials, ...rest } = patch;
    const resolved = materials === undefined ? {} : {
      materials: await resolveMaterials(kv, materials, {
        ...by,
        contributors: entry.value.contributors,
      }),
    };
    const { next, changed } = applyPatch(entry.value, { ...rest, ...resolved });
    const problem = learningProblem(next);
    if (problem) invalid(problem.message, problem.field);
    if (changed.length === 0) {
      return { op: null, result: { ok: true, module: entry.value, changed } };
    }
    next.updated = now;
    const trail = await trailAppend(
      kv,
      changed.map((f) => ({
        actor,
        action: "module.update",
        subject: `module:${slug}`,
        fields: [f],
      })),
      now,
    );
    const op = trail.apply(writeModule(atomic(kv).check(entry), entry.value, next, now));
    return { op, result: { ok: true, module: next, changed } };
  });
}

type ContributorResult =
  | { ok: true; module: Module }
  | { ok: false; reason: "missing" | "last" | "absent" };

/**
 * Adds a contributor by address: only a named account with contributor standing. "No account"
 * and "not a contributor" get one answer, so the form cannot be used to probe addresses.
 */
export async function addContributorByEmail(
  kv: Deno.Kv,
  slug: string,
  email: string,
  actor: string,
  now: number,
): Promise<Module> {
  const found = await findAccountByEmail(kv, email);
  if (!found || !found.value.name || found.value.roles.length === 0) {
    invalid("email: no named account with contributor standing has this address", "email");
  }
  const r = await changeContributor(kv, slug, found.value.id, "add", actor, now);
  if (!r.ok) notFound("no such module");
  return r.module;
}

/** Adds or removes one contributor; a module keeps at least one (except on erasure). */
export async function changeContributor(
  kv: Deno.Kv,
  slug: string,
  accountId: number,
  change: "add" | "remove" | "erase",
  actor: string,
  now: number,
): Promise<ContributorResult> {
  return await transact<ContributorResult>(async () => {
    const entry = await getModule(kv, slug);
    const m = entry.value;
    if (!m) return { op: null, result: { ok: false, reason: "missing" } };
    const has = m.contributors.includes(accountId);
    if (change === "add" && has) return { op: null, result: { ok: true, module: m } };
    if (change !== "add" && !has) return { op: null, result: { ok: false, reason: "absent" } };
    if (change === "remove" && m.contributors.length <= 1) {
      return { op: null, result: { ok: false, reason: "last" } };
    }
    const next: Module = {
      ...m,
      contributors: change === "add"
        ? [...m.contributors, accountId]
        : m.contributors.filter((id) => id !== accountId),
      updated: now,
    };
    const trail = await trailAppend(kv, [{
      actor,
      action: change === "add" ? "module.contributor.add" : "module.contributor.remove",
      subject: `module:${slug}`,
      fields: ["contributors"],
    }], now);
    const op = trail.apply(writeModule(atomic(kv).check(entry), m, next, now));
    return { op, result: { ok: true, module: next } };
  });
}

/** Every field of a module that the owner's import or a publication sets. */
export type ModuleInput =
  & Omit<
    Module,
    | "contributors"
    | "published"
    | "published_at"
    | "proposal"
    | "created"
    | "updated"
    | keyof Learning
  >
  & Partial<Learning>;

/**
 * Creates a module or overwrites an existing one (import and publication): content,
 * contributors and the published flag. Answers whether it was created.
 */
export async function putModule(
  kv: Deno.Kv,
  input: ModuleInput,
  contributors: number[],
  published: boolean,
  opts: { actor: string; now: number; proposal?: number; keepContent?: boolean },
): Promise<PutResult> {
  const { actor, now } = opts;
  return await transact<PutResult>(async () => {
    const entry = await getModule(kv, input.slug);
    const old = entry.value;
    const base: Module = old && opts.keepContent ? old : {
      ...input,
      ...learningOf(input),
      contributors: [],
      published: false,
      published_at: null,
      proposal: null,
      created: old?.created ?? now,
      updated: now,
    };
    const next: Module = {
      ...base,
      contributors: [...new Set([...(opts.keepContent ? base.contributors : []), ...contributors])],
      published,
      published_at: published ? (old?.published && old.published_at) || now : old?.published_at ??
        null,
      proposal: opts.proposal ?? old?.proposal ?? null,
      updated: now,
    };
    const fields = old ? changedFields(old, next) : [];
    if (old && fields.length === 0 && old.published === published) {
      return { op: null, result: { created: false, changed: false, module: old } };
    }
    const lines: TrailEntry[] = fields.length > 0 || !old
      ? [{
        actor,
        action: old ? "module.update" : "module.create",
        subject: `module:${input.slug}`,
        fields: old ? fields : undefined,
      }]
      : [];
    if (published !== (old?.published ?? false)) {
      lines.push({
        actor,
        action: published ? "module.publish" : "module.unpublish",
        subject: `module:${input.slug}`,
      });
    }
    const trail = await trailAppend(kv, lines, now);
    const op = trail.apply(writeModule(atomic(kv).check(entry), old, next, now));
    return { op, result: { created: !old, changed: true, module: next } };
  });
}

interface PutResult {
  created: boolean;
  /** False when the module existed with this content: nothing was written. */
  changed: boolean;
  module: Module;
}

function changedFields(a: Module, b: Module): string[] {
  const keys = [
    ...EDITABLE,
    "track",
    "area",
    "by",
    "contributors",
  ] as const;
  return keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/** Sets one plain field of a module (published flag or `by`); false when there is none. */
export async function setModuleField(
  kv: Deno.Kv,
  slug: string,
  change: { published: boolean } | { by: string },
  actor: string,
  now: number,
): Promise<boolean> {
  return await transact(async () => {
    const entry = await getModule(kv, slug);
    const m = entry.value;
    if (!m) return { op: null, result: false };
    let next: Module;
    let line: TrailEntry;
    if ("published" in change) {
      if (m.published === change.published) return { op: null, result: true };
      next = {
        ...m,
        published: change.published,
        published_at: change.published ? now : m.published_at,
      };
      line = {
        actor,
        action: change.published ? "module.publish" : "module.unpublish",
        subject: `module:${slug}`,
      };
    } else {
      const by = change.by.slice(0, LIMITS.by);
      if (m.by === by) return { op: null, result: true };
      next = { ...m, by, updated: now };
      line = { actor, action: "module.update", subject: `module:${slug}`, fields: ["by"] };
    }
    const trail = await trailAppend(kv, [line], now);
    const op = trail.apply(writeModule(atomic(kv).check(entry), m, next, now));
    return { op, result: true };
  });
}

/** Drops a stale contributor index key (the module no longer names the account). */
export async function dropContributorIndex(kv: Deno.Kv, account: number, slug: string) {
  await commit(atomic(kv).delete(["modules_by_account", account, slug]));
}

/**
 * Migration step (kv/store/migrations.ts): every module gets the metadata fields, nothing stated
 * (licence null: "licence not stated", never a licence it was not given).
 */
export async function giveLearning(kv: Deno.Kv): Promise<void> {
  for await (const e of eachModule(kv)) {
    await transact(async () => {
      const entry = await getModule(kv, e.key[1] as string);
      const m = entry.value as Module | null;
      if (!m || m.licence !== undefined) return { op: null, result: 0 };
      const next: Module = { ...m, ...learningOf(m) };
      return { op: atomic(kv).check(entry).set(entry.key, next), result: 0 };
    });
  }
}
