import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { type Account, standingOf } from "./accounts.ts";
import { accountParts } from "./parts.ts";
import { trailLinesOf } from "./trail.ts";

/**
 * The data export (GET /api/me/export). Owns no keys: each area's part gives its sections.
 * Sections SPEC.md names are present even when the area holding them has nothing (or is
 * not built yet), as empty lists.
 */
export const EXPORT_SECTIONS = [
  "journal",
  "applications",
  "proposals",
  "requests",
  "invitations",
  "services",
  "files",
  "modules",
  "points",
] as const;

export async function exportAccount(deps: Deps, account: Account) {
  const sections: Record<string, unknown> = {};
  for (const s of EXPORT_SECTIONS) sections[s] = [];
  for (const part of accountParts) {
    for (const [k, v] of Object.entries(await part.export(deps, account))) {
      if (v !== undefined && v !== null) sections[k] = v;
    }
  }
  return {
    exported: iso(deps.clock.now()),
    account: {
      id: account.id,
      kind: account.kind,
      email: account.email,
      name: account.name,
      slug: account.slug,
      created: iso(account.created),
      roles: [...account.roles],
      standing: standingOf(account.roles),
      avatar: account.avatar
        ? {
          type: account.avatar.type,
          updated: iso(account.avatar.updated),
          url: `/api/avatars/${account.id}`,
        }
        : null,
    },
    profile: { ...account.profile, langs: [...account.profile.langs] },
    ...sections,
    trail: await trailLinesOf(deps.kv, account.id),
  };
}
