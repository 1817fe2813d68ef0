import { findAccountByEmail } from "../accounts/accounts.ts";
import { isSlugFree, type PublishInput } from "./catalogue_api.ts";
import type { Proposal } from "./proposals.ts";
import { learningOf } from "../../lib/learning.ts";
import { MAX_MATERIAL_LABEL, MAX_MATERIALS } from "./materials.ts";

/**
 * The publication gate: checks a proposal must pass before the owner may publish it. Each
 * check is computed from the live records (the record chain from its stored verdict), so
 * every listing shows the gate as it stands. Holds no KV keys of its own.
 *
 *   confirmed  the submitter confirmed the address and has an account (the contributor)
 *   name       a name to publish under, 2 to 120 characters
 *   title      3 to 120 characters (the module title rule)
 *   summary    1 to 4000 characters, not blank
 *   records    the record chain verifies, when one was sent
 *   files      every file link is a well-formed https:// address
 *   slug       the slug derived from the title is free in the catalogue (or is the
 *              proposal's own module, when it was published before)
 */

const GATE_CHECKS = [
  "confirmed",
  "name",
  "title",
  "summary",
  "records",
  "files",
  "slug",
] as const;

export interface GateCheck {
  name: typeof GATE_CHECKS[number];
  ok: boolean;
  detail: string;
}

export interface Gate {
  open: boolean;
  checks: GateCheck[];
  failed: string[];
}

/** Module slug from a title: accents folded, lower-case, words joined by "-", at most 60. */
function moduleSlug(title: string): string {
  return title.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60).replace(/-+$/, "");
}

/**
 * The slug the proposal publishes under: its own module's, or one derived from the title
 * (`proposal-<id>` when the title has no Latin letter or digit to make one from).
 */
const slugFor = (p: Proposal) => p.slug ?? (moduleSlug(p.title) || `proposal-${p.id}`);

const httpsLink = (url: string) => {
  if (!URL.canParse(url)) return false;
  const u = new URL(url);
  return u.protocol === "https:" && u.hostname !== "" && !u.username && !u.password;
};

const len = (s: string) => [...s.trim()].length;

export async function gateOf(kv: Deno.Kv, p: Proposal): Promise<Gate> {
  const checks: GateCheck[] = [];
  const add = (name: GateCheck["name"], ok: boolean, good: string, bad: string) =>
    checks.push({ name, ok, detail: ok ? good : bad });

  const account = p.email ? await findAccountByEmail(kv, p.email) : null;
  add(
    "confirmed",
    p.confirmed !== null && p.status !== "received" && account !== null,
    "the submitter confirmed the address",
    p.confirmed === null ? "the submitter has not confirmed the address" : "no submitter account",
  );
  add(
    "name",
    len(p.name) >= 2 && len(p.name) <= 120,
    "a name to publish under",
    "no name to publish under",
  );
  add(
    "title",
    len(p.title) >= 3 && len(p.title) <= 120,
    "title of 3 to 120 characters",
    "the title must have 3 to 120 characters to become a module title",
  );
  add(
    "summary",
    len(p.summary) >= 1 && len(p.summary) <= 4000,
    "summary of 1 to 4000 characters",
    "the summary must have 1 to 4000 characters",
  );
  checks.push({ name: "records", ok: p.records.ok, detail: p.records.detail });
  const bad = p.files.findIndex((f) => !httpsLink(f.url));
  add(
    "files",
    bad === -1,
    p.files.length ? "every file link is https" : "no files",
    `file ${bad + 1}: not a well-formed https link`,
  );
  const slug = slugFor(p);
  const free = p.slug !== null || await isSlugFree(kv, slug);
  add("slug", free, `slug ${slug} is free`, `slug ${slug} is taken`);
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  return { open: failed.length === 0, checks, failed };
}

/** First paragraph of the summary, cut at a word to at most 300 characters. */
function ledeOf(summary: string): string {
  const first = summary.trim().split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim();
  if (first.length <= 300) return first;
  return first.slice(0, 299).replace(/\s+\S*$/, "") + "…";
}

/** What the catalogue gets when the proposal is published. */
export function publishInputOf(p: Proposal, accountId: number): PublishInput {
  return {
    slug: slugFor(p),
    title: p.title.trim(),
    who: p.who ?? "",
    lede: ledeOf(p.summary),
    about: p.summary.trim(),
    area: p.area,
    track: "",
    by: p.name.trim(),
    // The proposal's files become the module's materials: links, listed with their kind.
    facts: [],
    materials: p.files.slice(0, MAX_MATERIALS).map((f) => ({
      label: f.label.trim().slice(0, MAX_MATERIAL_LABEL) || new URL(f.url).host,
      url: f.url,
      type: null,
      size: null,
    })),
    gets: [],
    contributors: [accountId],
    proposal: p.id,
    learning: learningOf(p.learning ?? {}),
  };
}
