import type { Deps } from "../../lib/deps.ts";
import type { Account } from "../accounts/accounts.ts";
import type { Link } from "../accounts/links.ts";

/**
 * What a part (kv/parts/*.ts) provides; kv/parts/mod.ts lists the parts. The types live here so
 * that the parts and the list do not import each other.
 */

/** Per published proposal: keep the submitter's name on the module, or remove it. */
export interface ErasureDecisions {
  keep: Set<number>;
  remove: Set<number>;
}

export interface ErasureCounts {
  kept: number;
  unpublished: number;
  deleted: number;
}

/** What an export section holds and how long the service keeps it (the export's header). */
export interface SectionInfo {
  what: string;
  kept: string;
}

export interface AccountPart {
  name: string;
  /**
   * Every section `export` may give, described for the export's header. A section without a
   * description fails tests/data_rights_test.ts, so the header never falls behind the data.
   */
  sections: Record<string, SectionInfo>;
  /** Sections of GET /api/me/export, by section name. */
  export(deps: Deps, account: Account): Promise<Record<string, unknown>>;
  /** Deletes what the part holds of the account; runs before the account record goes. */
  erase(
    deps: Deps,
    account: Account,
    decisions: ErasureDecisions,
  ): Promise<Partial<ErasureCounts>>;
  /** Counts shown for the account in GET /api/actors. */
  counts?(deps: Deps, account: Account): Promise<Record<string, number>>;
  /** Runs after a mailed link signed `account` in; `confirmed` adds to the verify answer. */
  afterVerify?(deps: Deps, account: Account, link: Link): Promise<{ confirmed?: number }>;
}
