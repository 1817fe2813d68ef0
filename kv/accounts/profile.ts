import { iso, isoDate, isoOrNull } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { atomic, transact } from "../_atomic.ts";
import { listEntries } from "./journal.ts";
import {
  type Account,
  avatarUrl,
  freeSlug,
  getAccount,
  moveSlug,
  personText,
  type Profile,
  putAccount,
  standingOf,
} from "./accounts.ts";
import { modulesOf, nameInCatalogue } from "../catalogue/catalogue_api.ts";
import { droppedTerms, indexChange, pruneDictionary } from "../search/search_index.ts";
import { trailAppend } from "../store/trail.ts";

/**
 * Profile edits (PATCH /api/me). Writes only keys of kv/accounts/accounts.ts:
 *   ["accounts", id], ["accounts_by_slug", slug], and the person entries of
 *   ["search", "person", term, id] (kv/search/search_index.ts)
 * plus one trail line per changed field, all in one atomic with a check on the account; a
 * rename of a contributor also adds to ["catalogue_version"] (kv/catalogue/catalogue_api.ts).
 */

/** Every ISO 639-1 code: the service's own list of languages a profile may name. */
export const LANGS = (
  "aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy " +
  "da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht " +
  "hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky " +
  "la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny " +
  "oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss " +
  "st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo " +
  "za zh zu"
).split(" ");

export const PROFILE_ROLES = [
  "teacher",
  "student",
  "parent",
  "social-worker",
  "developer",
  "researcher",
  "other",
] as const;

export type ProfilePatch = Partial<Profile> & { name?: string };

/** The fields PATCH /api/me may change, in the order trail lines are written. */
const FIELDS = [
  "name",
  "org",
  "role",
  "about",
  "bio",
  "place",
  "contact",
  "website",
  "langs",
] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Applies a validated patch: absent fields stay, "" clears. Naming the account gives it a
 * slug (renaming moves it; clearing the name frees it and hides the public profile).
 */
export async function updateProfile(
  kv: Deno.Kv,
  accountId: number,
  patch: ProfilePatch,
  now: number,
): Promise<Account | null> {
  let dropped: string[] = [];
  const result = await transact(async () => {
    const entry = await getAccount(kv, accountId);
    const old = entry.value;
    if (!old) return { op: null, result: null };
    const profile: Profile = { ...old.profile, langs: [...old.profile.langs] };
    let name = old.name;
    const changed: string[] = [];
    for (const f of FIELDS) {
      const v = patch[f];
      if (v === undefined) continue;
      if (f === "name") {
        if (v !== name) changed.push(f);
        name = v as string;
      } else {
        if (!same(profile[f], v)) changed.push(f);
        (profile as unknown as Record<string, unknown>)[f] = v;
      }
    }
    if (changed.length === 0) return { op: null, result: old };
    const slug = name ? await freeSlug(kv, name, old.id) : "";
    const next: Account = { ...old, name, slug, profile };
    const op = moveSlug(putAccount(atomic(kv).check(entry), next), old.id, old.slug, slug);
    indexChange(op, "person", old.id, personText(old), personText(next));
    dropped = droppedTerms(personText(old), personText(next));
    if (name !== old.name) await nameInCatalogue(kv, old.id, op);
    const ref = `account:${old.id}`;
    const trail = await trailAppend(
      kv,
      changed.map((f) => ({ actor: ref, action: "profile.update", subject: ref, fields: [f] })),
      now,
    );
    trail.apply(op);
    return { op, result: next };
  });
  await pruneDictionary(kv, "person", dropped);
  return result;
}

/** At most this many public journal entries are shown on a profile, newest first. */
const PROFILE_JOURNAL = 100;

/** An account's public profile (GET /api/people/... and the /people/<slug> page). */
export async function publicProfile(deps: Deps, a: Account) {
  const { org, role, about, bio, place, website, langs } = a.profile;
  const entries = (await listEntries(deps.kv, a.id)).filter((e) => e.public)
    .slice(0, PROFILE_JOURNAL);
  return {
    id: a.id,
    name: a.name,
    slug: a.slug,
    standing: standingOf(a.roles),
    since: isoDate(a.created),
    avatar: avatarUrl(a),
    contact: a.profile.contact,
    profile: { org, role, about, bio, place, website, langs: [...langs] },
    modules: await modulesOf(deps.kv, a.id),
    journal: entries.map((e) => ({
      id: e.id,
      text: e.text,
      created: iso(e.created),
      updated: isoOrNull(e.updated),
    })),
  };
}
