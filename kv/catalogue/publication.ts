import type { Deps } from "../../lib/deps.ts";
import { conflict, DomainError } from "../../lib/errors.ts";
import { findAccountByEmail } from "../accounts/accounts.ts";
import { publishModule, republishModule, unpublishModule } from "./catalogue_api.ts";
import { gateOf, publishInputOf } from "./gate.ts";
import {
  claimSlug,
  getProposal,
  moveStatus,
  type Proposal,
  proposalOr404,
  PUBLISH_FROM,
  releaseSlug,
  statusUrl,
} from "./proposals.ts";
import { proposalPublishedMail, proposalTakenBackMail } from "../../mail/proposals.ts";

/**
 * Publication and its undoing. The catalogue writes the module in its own atomic, so each
 * side is made safe against the other: the proposal is marked published only if it did not
 * change while the module was written, and the module is taken back when that fails.
 * Holds no KV keys of its own.
 */

/** Which proposal, who acts ("account:<id>"), and the reason given. */
export interface Step {
  id: number;
  actor: string;
  reason: string;
}

export async function publishProposal(deps: Deps, step: Step): Promise<Proposal> {
  const { id, actor, reason } = step;
  const entry = await proposalOr404(deps.kv, id);
  const p = entry.value;
  if (!PUBLISH_FROM.includes(p.status)) {
    conflict(`a proposal in ${p.status} cannot move to published`, { status: p.status });
  }
  const gate = await gateOf(deps.kv, p);
  if (!gate.open) {
    conflict(`the gate is closed: ${gate.failed.join(", ")}`, {
      failed: gate.failed,
      checks: gate.checks,
    });
  }
  const account = await findAccountByEmail(deps.kv, p.email);
  if (!account) conflict("the gate is closed: confirmed", { failed: ["confirmed"] });
  const input = publishInputOf(p, account.value.id);
  if (!await claimSlug(deps.kv, input.slug, id)) {
    conflict("the gate is closed: slug", {
      failed: ["slug"],
      checks: gate.checks.map((c) =>
        c.name === "slug" ? { ...c, ok: false, detail: `slug ${input.slug} is taken` } : c
      ),
    });
  }
  let slug: string;
  try {
    slug = (await publishModule(deps, input, actor)).slug;
  } catch (err) {
    if (p.slug === null) await releaseSlug(deps.kv, input.slug, id);
    if (err instanceof DomainError) throw err;
    conflict(`the catalogue did not take the module: ${err instanceof Error ? err.message : err}`);
  }
  try {
    return await moveStatus(deps, id, {
      to: "published",
      from: PUBLISH_FROM,
      reason,
      actor,
      versionstamp: entry.versionstamp!,
      patch: { slug, published: deps.clock.now() },
      mail: (next) =>
        proposalPublishedMail(
          next,
          reason,
          `${deps.config.baseUrl}/modules/${encodeURIComponent(slug)}`,
        ),
    });
  } catch (err) {
    // The proposal moved meanwhile. When a concurrent publication of it won, the module is
    // that one's and stays; otherwise (withdrawn, deleted, decided) the module goes back,
    // also one published before and taken back (it was unpublished when this call began).
    const now = (await getProposal(deps.kv, id)).value;
    if (now?.status !== "published" || now.slug !== slug) {
      await unpublishModule(deps, slug, actor).catch(() => false);
      if (p.slug === null) await releaseSlug(deps.kv, slug, id);
    }
    throw err;
  }
}

/** The owner moves a published proposal back to admitted: the module leaves the catalogue. */
export async function unpublishProposal(deps: Deps, step: Step): Promise<Proposal> {
  const { id, actor, reason } = step;
  const entry = await proposalOr404(deps.kv, id);
  const p = entry.value;
  if (p.status !== "published" || !p.slug) {
    conflict(`a proposal in ${p.status} cannot move back to admitted`, { status: p.status });
  }
  const slug = p.slug;
  await unpublishModule(deps, slug, actor);
  try {
    return await moveStatus(deps, id, {
      to: "admitted",
      from: ["published"],
      reason,
      actor,
      versionstamp: entry.versionstamp!,
      mail: (next) => proposalTakenBackMail(next, reason, statusUrl(deps.config.baseUrl, id)),
    });
  } catch (err) {
    // The proposal changed meanwhile (its attribution, say) and is still published: the
    // module goes back into the catalogue, so the two agree; the caller may try again.
    const now = (await getProposal(deps.kv, id)).value;
    if (now?.status === "published" && now.slug === slug) {
      await republishModule(deps, slug, actor).catch(() => false);
    }
    throw err;
  }
}
