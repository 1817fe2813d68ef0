import { DAY, iso, isoOrNull } from "../../lib/clock.ts";
import { constantTimeEqual, randomToken, sha256hex } from "../../lib/crypto.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, notFound } from "../../lib/errors.ts";
import type { Chain, ChainRecord } from "../../lib/record_chain.ts";
import { type Atomic, atomic, commit, transact } from "../_atomic.ts";
import type { Account } from "../accounts/accounts.ts";
import { claimId } from "../store/ids.ts";
import {
  flush,
  mailInbox,
  mailTo,
  type QueuedInboxMails,
  queuedInboxMails,
} from "../forms/inbox.ts";
import { addressHash } from "../accounts/links.ts";
import { trailAppend } from "../store/trail.ts";
import { proposalTeamNotice } from "../../mail/proposals.ts";
import { getManyValues } from "../_batch.ts";
import { type Learning, learningOf, licenceOf } from "../../lib/learning.ts";

/**
 * Proposals of work sent through the public contribution form. Key layout:
 *   ["proposals", id]                             -> Proposal
 *   ["proposal_data", id]                         -> {trail, records, chain} as sent
 *   ["proposals_by_address", address_hash, id]    -> true   (confirmation, export, erasure)
 *   ["proposals_by_status", status, id]           -> true   (expiry of `received`, listings)
 *   ["proposal_slugs", slug]                      -> proposal id that claimed the module slug
 *   ["proposal_links", id]                        -> LinkChecks: the last check of its file links
 * All are deleted in one atomic (the link checks are written apart, when a reviewer asks,
 * kv/catalogue/proposal_links.ts); a status change moves the status index in
 * the atomic that changes the status. The record chain is verified once, when it is sent
 * (records never change afterwards), and the verdict is kept in the proposal.
 * Size: the long texts (trail, records) live apart from the proposal, and decisions are
 * capped (first plus the last 15, reasons up to 1000 characters), so both values stay under
 * the 64 KiB KV limit even at every field's maximum.
 * A slug claim is taken (check: absent) before the catalogue writes a module for the
 * proposal, so two publications racing for one slug cannot both reach the catalogue; it
 * goes with the proposal.
 */

export const STATUSES = [
  "received",
  "confirmed",
  "reviewing",
  "admitted",
  "rejected",
  "published",
  "withdrawn",
] as const;
export type ProposalStatus = typeof STATUSES[number];

export const AREAS = ["social", "nature-based", "technical", "other"] as const;
export type Area = typeof AREAS[number];

/** States the submitter may withdraw from. */
export const OPEN: readonly ProposalStatus[] = ["received", "confirmed", "reviewing", "admitted"];
/** States the team may admit from, and reject from. */
export const ADMIT_FROM: readonly ProposalStatus[] = ["reviewing"];
export const REJECT_FROM: readonly ProposalStatus[] = ["confirmed", "reviewing"];
export const PUBLISH_FROM: readonly ProposalStatus[] = ["admitted", "reviewing"];

/** A received proposal whose link is not opened within this time is deleted. */
const CONFIRM_WINDOW = 7 * DAY;

interface FileLink {
  label: string;
  url: string;
}

export interface Decision {
  status: ProposalStatus;
  from: ProposalStatus | null;
  reason: string;
  /** Trail actor: "account:<id>", "service", "public", "system". */
  actor: string;
  at: number;
}

export interface Proposal {
  id: number;
  status: ProposalStatus;
  name: string;
  /** The submitter's address; "" once the account is erased and the work kept its name. */
  email: string;
  title: string;
  area: Area;
  summary: string;
  files: FileLink[];
  attribution: "keep" | "remove";
  /** Who the module is for, in words; "" on proposals from before it was asked. */
  who: string;
  /** Licence and educational metadata (lib/learning.ts); nothing stated on older proposals. */
  learning: Learning;
  created: number;
  updated: number;
  /** When the address was confirmed; null while received. */
  confirmed: number | null;
  /** The submitter's account, known once confirmed. */
  account: number | null;
  decisions: Decision[];
  /** Verdict of the record chain, computed when it was sent. */
  records: { sent: boolean; ok: boolean; detail: string; count: number };
  /** Module slug once published (kept when taken back, so republication reuses it). */
  slug: string | null;
  published: number | null;
  /** SHA-256 of the secret that the mailed status link carries. */
  key_hash: string;
}

export interface ProposalData {
  trail: string;
  records: ChainRecord[];
  chain: Chain | null;
}

export type ProposalInput = Pick<
  Proposal,
  "name" | "email" | "title" | "area" | "summary" | "files" | "attribution" | "who" | "learning"
>;

const pKey = (id: number) => ["proposals", id] as const;
const dataKey = (id: number) => ["proposal_data", id] as const;
const statusKey = (s: ProposalStatus, id: number) => ["proposals_by_status", s, id] as const;

/** Decisions kept per proposal: the first and the latest ones. */
export const MAX_DECISIONS = 16;
export const MAX_REASON = 1000;

const capped = (list: Decision[]) =>
  list.length <= MAX_DECISIONS ? list : [list[0], ...list.slice(-(MAX_DECISIONS - 1))];

export const statusUrl = (baseUrl: string, id: number, key?: string) =>
  `${baseUrl}/contribute/status?id=${id}` + (key ? `&key=${encodeURIComponent(key)}` : "");

export async function getProposal(kv: Deno.Kv, id: number) {
  return await kv.get<Proposal>(pKey(id));
}

/** The proposal's entry, or 404: unknown ids answer as other people's proposals do. */
export async function proposalOr404(kv: Deno.Kv, id: number): Promise<Deno.KvEntry<Proposal>> {
  const entry = await getProposal(kv, id);
  if (!entry.value) notFound("no such proposal");
  return entry as Deno.KvEntry<Proposal>;
}

export async function getData(kv: Deno.Kv, id: number): Promise<ProposalData> {
  return (await kv.get<ProposalData>(dataKey(id))).value ?? { trail: "", records: [], chain: null };
}

/** True when the status link's secret belongs to this proposal. */
export function keyMatches(p: Proposal, key: string | undefined): boolean {
  if (!key || key.length > 100) return false;
  return constantTimeEqual(sha256hex(key), p.key_hash);
}

function teamNotice(
  deps: Deps,
  op: Atomic,
  mails: QueuedInboxMails,
  p: Proposal,
  now: number,
) {
  mailInbox(op, mails, deps.config.teamInbox, proposalTeamNotice(p, deps.config.baseUrl), now);
}

export interface Created {
  proposal: Proposal;
  /** The status link's secret, mailed to the submitter and never stored. */
  key: string;
}

/**
 * Stores a new proposal: `confirmed` at once when `submitter` (the caller's account) has the
 * proposal's address, else `received`. The caller mails the confirmation link.
 */
export async function createProposal(
  deps: Deps,
  input: ProposalInput,
  data: ProposalData & { verdict: Proposal["records"] },
  submitter: Account | null,
  actor: string,
): Promise<Created> {
  const { kv } = deps;
  const now = deps.clock.now();
  const key = randomToken(24);
  const keyHash = sha256hex(key);
  const addr = await addressHash(input.email);
  const { proposal, mails } = await transact(async () => {
    const claim = await claimId(kv, "proposal", pKey);
    const confirmed = submitter !== null;
    const status: ProposalStatus = confirmed ? "confirmed" : "received";
    const proposal: Proposal = {
      ...input,
      id: claim.id,
      status,
      created: now,
      updated: now,
      confirmed: confirmed ? now : null,
      account: submitter?.id ?? null,
      decisions: [{ status, from: null, reason: "", actor, at: now }],
      records: data.verdict,
      slug: null,
      published: null,
      key_hash: keyHash,
    };
    const op = claim.apply(atomic(kv))
      .set(pKey(proposal.id), proposal)
      .set(["proposals_by_address", addr, proposal.id], true)
      .set(statusKey(status, proposal.id), true);
    op.set(dataKey(proposal.id), { trail: data.trail, records: data.records, chain: data.chain });
    (await trailAppend(kv, [{
      actor,
      action: "proposal.create",
      subject: `proposal:${proposal.id}`,
      fields: ["status"],
    }], now)).apply(op);
    const mails = queuedInboxMails();
    if (confirmed) teamNotice(deps, op, mails, proposal, now);
    return { op, result: { proposal, mails } };
  });
  await flush(deps, mails);
  return { proposal, key };
}

async function proposalIdsOf(kv: Deno.Kv, email: string): Promise<number[]> {
  const addr = await addressHash(email);
  const ids: number[] = [];
  for await (const e of kv.list({ prefix: ["proposals_by_address", addr] })) {
    ids.push(e.key[2] as number);
  }
  return ids;
}

export async function proposalsOf(kv: Deno.Kv, email: string): Promise<Proposal[]> {
  const ids = await proposalIdsOf(kv, email);
  const got = await getManyValues<Proposal>(kv, ids.map(pKey));
  return got.filter((p) => p.email === email);
}

/** Every proposal, newest first, optionally of one status. */
export async function listProposals(
  kv: Deno.Kv,
  status?: ProposalStatus,
): Promise<Proposal[]> {
  const out: Proposal[] = [];
  if (!status) {
    for await (const e of kv.list<Proposal>({ prefix: ["proposals"] }, { reverse: true })) {
      out.push(e.value);
    }
    return out;
  }
  const ids: number[] = [];
  for await (const e of kv.list({ prefix: ["proposals_by_status", status] }, { reverse: true })) {
    ids.push(e.key[2] as number);
  }
  return await getManyValues<Proposal>(kv, ids.map(pKey));
}

/**
 * Confirms every proposal of the account's address still in `received` and inside its
 * seven days (a mailed link of any purpose was opened); answers how many.
 */
export async function confirmReceived(deps: Deps, account: Account): Promise<number> {
  const { kv } = deps;
  let n = 0;
  for (const id of await proposalIdsOf(kv, account.email)) {
    const done = await transact(async () => {
      const now = deps.clock.now();
      const entry = await getProposal(kv, id);
      const p = entry.value;
      if (!p || p.email !== account.email || p.status !== "received") {
        return { op: null, result: null };
      }
      if (p.created + CONFIRM_WINDOW <= now) return { op: null, result: null };
      const next: Proposal = {
        ...p,
        status: "confirmed",
        confirmed: now,
        account: account.id,
        updated: now,
        decisions: capped([...p.decisions, {
          status: "confirmed",
          from: "received",
          reason: "",
          actor: `account:${account.id}`,
          at: now,
        }]),
      };
      const op = atomic(kv).check(entry).set(entry.key, next)
        .delete(statusKey("received", id)).set(statusKey("confirmed", id), true);
      (await trailAppend(kv, [{
        actor: `account:${account.id}`,
        action: "proposal.confirm",
        subject: `proposal:${id}`,
        fields: ["status"],
      }], now)).apply(op);
      const mails = queuedInboxMails();
      teamNotice(deps, op, mails, next, now);
      return { op, result: mails };
    });
    if (done) {
      n++;
      await flush(deps, done);
    }
  }
  return n;
}

const ACTION: Record<ProposalStatus, string> = {
  received: "proposal.receive",
  confirmed: "proposal.confirm",
  reviewing: "proposal.review",
  admitted: "proposal.admit",
  rejected: "proposal.reject",
  published: "proposal.publish",
  withdrawn: "proposal.withdraw",
};

interface Move {
  to: ProposalStatus;
  /** States the move is allowed from; any other answers 409. */
  from: readonly ProposalStatus[];
  reason: string;
  actor: string;
  /** Mail to the submitter, composed from the updated proposal. */
  mail?: (p: Proposal) => { subject: string; text: string } | null;
  /** Extra changes to the proposal (slug, published). */
  patch?: Partial<Proposal>;
  /** When set, the proposal must still have this versionstamp (publication's second step). */
  versionstamp?: string;
}

/** One status change: checks the current state, writes status, decision, trail and mail. */
export async function moveStatus(deps: Deps, id: number, m: Move): Promise<Proposal> {
  const { kv } = deps;
  const { next, mails } = await transact(async () => {
    const now = deps.clock.now();
    const entry = await proposalOr404(kv, id);
    const p = entry.value;
    if (m.versionstamp && entry.versionstamp !== m.versionstamp) {
      conflict("the proposal changed meanwhile; try again");
    }
    if (!m.from.includes(p.status)) {
      conflict(`a proposal in ${p.status} cannot move to ${m.to}`, { status: p.status });
    }
    const next: Proposal = {
      ...p,
      ...m.patch,
      status: m.to,
      updated: now,
      decisions: capped([...p.decisions, {
        status: m.to,
        from: p.status,
        reason: m.reason,
        actor: m.actor,
        at: now,
      }]),
    };
    const op = atomic(kv).check(entry).set(entry.key, next);
    if (p.status !== m.to) op.delete(statusKey(p.status, id)).set(statusKey(m.to, id), true);
    const unpublish = p.status === "published" && m.to !== "published";
    (await trailAppend(kv, [{
      actor: m.actor,
      action: unpublish ? "proposal.unpublish" : ACTION[m.to],
      subject: `proposal:${id}`,
      fields: m.reason ? ["status", "reason"] : ["status"],
    }], now)).apply(op);
    const mails = queuedInboxMails();
    const mail = m.mail?.(next);
    if (mail && next.email) mailTo(op, mails, { ...mail, to: next.email }, now);
    return { op, result: { next, mails } };
  });
  await flush(deps, mails);
  return next;
}

export async function setAttribution(
  deps: Deps,
  id: number,
  attribution: "keep" | "remove",
  actor: string,
): Promise<Proposal> {
  const { kv } = deps;
  return await transact(async () => {
    const now = deps.clock.now();
    const entry = await proposalOr404(kv, id);
    const next = { ...entry.value, attribution, updated: now };
    const op = atomic(kv).check(entry).set(entry.key, next);
    (await trailAppend(kv, [{
      actor,
      action: "proposal.attribution",
      subject: `proposal:${id}`,
      fields: ["attribution"],
    }], now)).apply(op);
    return { op, result: next };
  });
}

/** What a check of one file link found (kv/catalogue/proposal_links.ts). */
export interface LinkCheck {
  url: string;
  /** ok, warn and off as a watched service's check; refused: not checked (not public https). */
  state: "ok" | "warn" | "off" | "refused";
  status: string;
  at: number;
}

interface LinkChecks {
  at: number;
  links: LinkCheck[];
}

const linksKey = (id: number) => ["proposal_links", id] as const;

export async function getLinkChecks(kv: Deno.Kv, id: number): Promise<LinkChecks | null> {
  return (await kv.get<LinkChecks>(linksKey(id))).value;
}

/** Stores the last check of a proposal's links, if the proposal is still there. */
export async function saveLinkChecks(
  kv: Deno.Kv,
  id: number,
  links: LinkCheck[],
  at: number,
): Promise<void> {
  await transact(async () => {
    const entry = await getProposal(kv, id);
    if (!entry.value) return { op: null, result: null };
    return { op: atomic(kv).check(entry).set(linksKey(id), { at, links }), result: null };
  });
}

/** Adds the deletion of a proposal and all its keys to `op` (`addr`: its address hash). */
function dropKeys(op: Atomic, p: Proposal, addr: string | null): void {
  op.delete(pKey(p.id)).delete(dataKey(p.id)).delete(statusKey(p.status, p.id))
    .delete(linksKey(p.id));
  if (addr) op.delete(["proposals_by_address", addr, p.id]);
  if (p.slug) op.delete(slugClaimKey(p.slug));
}

const slugClaimKey = (slug: string) => ["proposal_slugs", slug] as const;

/** Claims a module slug for a proposal; false when another proposal holds it. */
export async function claimSlug(kv: Deno.Kv, slug: string, id: number): Promise<boolean> {
  return await transact(async () => {
    const e = await kv.get<number>(slugClaimKey(slug));
    if (e.value !== null) return { op: null, result: e.value === id };
    return { op: atomic(kv).check(e).set(e.key, id), result: true };
  });
}

/** Gives a claim back (the catalogue did not take the module). */
export async function releaseSlug(kv: Deno.Kv, slug: string, id: number): Promise<void> {
  const e = await kv.get<number>(slugClaimKey(slug));
  if (e.value === id) await commit(atomic(kv).check(e).delete(e.key));
}

const hashOf = async (email: string) => email ? await addressHash(email) : null;

/** Deletes an unpublished proposal; 409 for a published one. */
export async function deleteProposal(deps: Deps, id: number, actor: string): Promise<void> {
  const { kv } = deps;
  await transact(async () => {
    const now = deps.clock.now();
    const entry = await proposalOr404(kv, id);
    const p = entry.value;
    if (p.status === "published") {
      conflict("a published proposal cannot be deleted: the owner takes it back first", {
        status: p.status,
      });
    }
    const op = atomic(kv).check(entry);
    dropKeys(op, p, await hashOf(p.email));
    (await trailAppend(kv, [{ actor, action: "proposal.delete", subject: `proposal:${id}` }], now))
      .apply(op);
    return { op, result: null };
  });
}

/** Job: deletes received proposals whose confirmation link was not opened in seven days. */
export async function expireReceived(deps: Deps): Promise<number> {
  const { kv } = deps;
  const now = deps.clock.now();
  let n = 0;
  const ids: number[] = [];
  for await (const e of kv.list({ prefix: ["proposals_by_status", "received"] })) {
    ids.push(e.key[2] as number);
  }
  for (const id of ids) {
    const gone = await transact(async () => {
      const entry = await getProposal(kv, id);
      const p = entry.value;
      if (!p) {
        return { op: atomic(kv).delete(statusKey("received", id)), result: false };
      }
      if (p.status !== "received" || p.created + CONFIRM_WINDOW > now) {
        return { op: null, result: false };
      }
      const op = atomic(kv).check(entry);
      dropKeys(op, p, await hashOf(p.email));
      (await trailAppend(kv, [{
        actor: "system",
        action: "proposal.expire",
        subject: `proposal:${id}`,
      }], now)).apply(op);
      return { op, result: true };
    });
    if (gone) n++;
  }
  return n;
}

/**
 * Erasure of a published proposal whose work keeps the name: the address and the account
 * link go, the rest stays with the published module.
 */
export async function detachSubmitter(deps: Deps, id: number, email: string): Promise<void> {
  const { kv } = deps;
  await transact(async () => {
    const entry = await getProposal(kv, id);
    const p = entry.value;
    if (!p) return { op: null, result: null };
    const next: Proposal = { ...p, email: "", account: null, updated: deps.clock.now() };
    const op = atomic(kv).check(entry).set(entry.key, next)
      .delete(["proposals_by_address", await addressHash(email), id]);
    return { op, result: null };
  });
}

/** Erasure: removes a proposal outright. */
export async function eraseProposal(
  deps: Deps,
  id: number,
  email: string,
  actor: string,
): Promise<boolean> {
  const { kv } = deps;
  return await transact(async () => {
    const entry = await getProposal(kv, id);
    const p = entry.value;
    if (!p) return { op: null, result: false };
    const op = atomic(kv).check(entry);
    dropKeys(op, p, await hashOf(email));
    (await trailAppend(
      kv,
      [{ actor, action: "proposal.erase", subject: `proposal:${id}` }],
      deps
        .clock.now(),
    )).apply(op);
    return { op, result: true };
  });
}

/** The proposal as its submitter and the team see it (records and gate are added apart). */
export function proposalView(baseUrl: string, p: Proposal, team = false) {
  const last = p.decisions.findLast((d) => d.reason !== "");
  return {
    id: p.id,
    status: p.status,
    name: p.name,
    email: p.email || null,
    title: p.title,
    area: p.area,
    summary: p.summary,
    files: p.files.map((f) => ({ ...f })),
    attribution: p.attribution,
    who: p.who ?? "",
    ...learningOf(p.learning ?? {}),
    licence_url: licenceOf(p.learning?.licence ?? null)?.url ?? null,
    created: iso(p.created),
    updated: iso(p.updated),
    confirmed: isoOrNull(p.confirmed),
    submitter: { name: p.name, email: p.email || null, account: p.account },
    decisions: p.decisions.map((d) => ({
      status: d.status,
      from: d.from,
      reason: d.reason || null,
      at: iso(d.at),
      ...(team ? { by: d.actor } : {}),
    })),
    reason: last?.reason ?? null,
    records_sent: p.records.sent,
    slug: p.slug,
    module_url: p.slug && p.status === "published" ? `/modules/${p.slug}` : null,
    published: isoOrNull(p.published),
    status_url: statusUrl(baseUrl, p.id),
  };
}

/**
 * What the status page shows. Without the mailed secret: the state and its dates only,
 * never the address, the name or any text. With it: also title, area, name and reasons.
 */
export function publicStatusView(p: Proposal, withKey: boolean) {
  return {
    id: p.id,
    status: p.status,
    created: iso(p.created),
    updated: iso(p.updated),
    history: p.decisions.map((d) => ({
      status: d.status,
      at: iso(d.at),
      ...(withKey ? { reason: d.reason || null } : {}),
    })),
    ...(withKey
      ? {
        title: p.title,
        area: p.area,
        name: p.name,
        module_url: p.slug && p.status === "published" ? `/modules/${p.slug}` : null,
      }
      : {}),
  };
}
