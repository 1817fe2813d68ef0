import { iso } from "../../lib/clock.ts";
import { sha256hex } from "../../lib/crypto.ts";
import type { Deps } from "../../lib/deps.ts";
import { type Account, standingOf } from "../accounts/accounts.ts";
import { readAvatar } from "../files/avatars.ts";
import { accountParts, type SectionInfo } from "./mod.ts";
import { trailLinesOf } from "../store/trail.ts";

/**
 * The data export (GET /api/me/export). Owns no keys: each area's part gives its sections
 * and describes them for the header. Sections the interface names are present even when the area
 * holding them has nothing (or is not built yet), as empty lists.
 */
const EXPORT_SECTIONS = [
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

/** The sections this module writes itself; the parts describe theirs. */
const OWN_SECTIONS: Record<string, SectionInfo> = {
  exported: { what: "When this file was made (UTC)", kept: "Not stored" },
  header: { what: "This description of the file", kept: "Not stored" },
  account: {
    what: "Your account: id, address, name, slug, creation, roles and standing, and your " +
      "picture as a link with the SHA-256 of its bytes",
    kept: "Until you erase the account",
  },
  trail: {
    what: "Every line of the service's record trail whose actor or subject is your account. " +
      "Lines hold ids, actions and field names only, never content; they verify as a chain",
    kept: "For good: after erasure the lines stay (ids only) so the chain still verifies",
  },
};

export async function exportAccount(deps: Deps, account: Account) {
  const sections: Record<string, unknown> = {};
  for (const s of EXPORT_SECTIONS) sections[s] = [];
  const described: Record<string, SectionInfo> = { ...OWN_SECTIONS };
  for (const part of accountParts) {
    Object.assign(described, part.sections);
    for (const [k, v] of Object.entries(await part.export(deps, account))) {
      if (v !== undefined && v !== null) sections[k] = v;
    }
  }
  const picture = account.avatar ? await readAvatar(deps.kv, account.id) : null;
  const header = {
    about: "Everything this service holds about your account, section by section. File and " +
      "picture bytes are not copied in: each is a link, with the SHA-256 of its bytes so you " +
      "can check what you download. Records of other people are not included, except the " +
      "names and messages that are part of your own records (an invitation's sender).",
    sections: Object.fromEntries(
      ["exported", "header", "account", "profile", ...Object.keys(sections), "trail"]
        .map((name) => [name, described[name] ?? null]),
    ),
  };
  return {
    exported: iso(deps.clock.now()),
    header,
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
          address: `${deps.config.baseUrl}/api/avatars/${account.id}`,
          sha256: picture ? sha256hex(picture.bytes) : null,
          size: picture ? picture.bytes.length : null,
        }
        : null,
    },
    profile: { ...account.profile, langs: [...account.profile.langs] },
    ...sections,
    trail: await trailLinesOf(deps.kv, account.id),
  };
}
