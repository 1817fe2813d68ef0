import type { Deps } from "../lib/deps.ts";
import { ApiError, fail } from "../lib/errors.ts";
import { findAccountByEmail } from "./accounts.ts";
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

/**
 * Publication and its undoing. The catalogue writes the module in its own atomic, so each
 * side is made safe against the other: the proposal is marked published only if it did not
 * change while the module was written, and the module is taken back when that fails.
 * Holds no KV keys of its own.
 */

const reasonLine = (reason: string) => reason ? `\nReason: ${reason}\n` : "";

export async function publishProposal(
  deps: Deps,
  id: number,
  actor: string,
  reason: string,
): Promise<Proposal> {
  const entry = await proposalOr404(deps.kv, id);
  const p = entry.value;
  if (!PUBLISH_FROM.includes(p.status)) {
    fail(409, `a proposal in ${p.status} cannot move to published`, { status: p.status });
  }
  const gate = await gateOf(deps.kv, p);
  if (!gate.open) {
    fail(409, `the gate is closed: ${gate.failed.join(", ")}`, {
      failed: gate.failed,
      checks: gate.checks,
    });
  }
  const account = await findAccountByEmail(deps.kv, p.email);
  if (!account) fail(409, "the gate is closed: confirmed", { failed: ["confirmed"] });
  const input = publishInputOf(p, account.value.id);
  if (!await claimSlug(deps.kv, input.slug, id)) {
    fail(409, "the gate is closed: slug", {
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
    if (err instanceof ApiError) throw err;
    fail(409, `the catalogue did not take the module: ${err instanceof Error ? err.message : err}`);
  }
  try {
    return await moveStatus(deps, id, {
      to: "published",
      from: PUBLISH_FROM,
      reason,
      actor,
      versionstamp: entry.versionstamp!,
      patch: { slug, published: deps.clock.now() },
      mail: (next) => ({
        subject: `Your proposal #${id} is published`,
        text: `Your proposal "${next.title}" is published in the catalogue:\n\n` +
          `${deps.config.baseUrl}/modules/${encodeURIComponent(slug)}\n${reasonLine(reason)}`,
      }),
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
export async function unpublishProposal(
  deps: Deps,
  id: number,
  actor: string,
  reason: string,
): Promise<Proposal> {
  const entry = await proposalOr404(deps.kv, id);
  const p = entry.value;
  if (p.status !== "published" || !p.slug) {
    fail(409, `a proposal in ${p.status} cannot move back to admitted`, { status: p.status });
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
      mail: (next) => ({
        subject: `Your proposal #${id} is taken back from the catalogue`,
        text: `Your proposal "${next.title}" is no longer published; it is admitted again and ` +
          `may be published later.\n${reasonLine(reason)}\nStatus: ${
            statusUrl(deps.config.baseUrl, id)
          }\n`,
      }),
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
