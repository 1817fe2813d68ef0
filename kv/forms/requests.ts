import { DAY, HOUR, iso } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { invalid } from "../../lib/errors.ts";
import { isSlugFree } from "../catalogue/catalogue_api.ts";
import { atomic, commit, transact } from "../_atomic.ts";
import { claimId } from "../store/ids.ts";
import { flush, mailInbox, mailTo, queuedInboxMails } from "./inbox.ts";
import { addressHash } from "../accounts/links.ts";
import { countSubjectUse, type Rule } from "../store/rate_limit.ts";
import { trailAppend } from "../store/trail.ts";
import { requestReceiptMail, requestTeamMail } from "../../mail/requests.ts";
import { getManyValues } from "../_batch.ts";

/**
 * Requests and reports sent through the public request form. Key layout:
 *   ["requests", id]                              -> ContactRequest
 *   ["requests_by_address", address_hash, id]     -> true   (export and erasure)
 * Both are written and deleted in one atomic. A request is kept 180 days from its
 * creation (`created` in the value), then the daily job removes it.
 */

export const REQUEST_KINDS = [
  "module",
  "track",
  "tool",
  "service",
  "report",
  "contribute",
  "other",
] as const;
export type RequestKind = typeof REQUEST_KINDS[number];

/** Kinds that go to REPORT_INBOX (with a link to the module); the rest go to TEAM_INBOX. */
const REPORT_KINDS: readonly RequestKind[] = ["report", "contribute"];

const REQUEST_LIFE = 180 * DAY;

/**
 * The form has no limit of its own (the interface names none), so anyone could make it mail an
 * address over and over: past this many receipts an hour to one address, the request is still
 * stored and passed to the team, but no further receipt is sent.
 */
export const RECEIPTS: Rule = { name: "request_receipt", max: 5, windowMs: HOUR };

interface ContactRequest {
  id: number;
  name: string;
  email: string;
  kind: RequestKind;
  text: string;
  org: string;
  /** Module slug, for report and contribute; "" otherwise. */
  module: string;
  created: number;
  /** When the team marked it handled; null while open. */
  handled: number | null;
}

type RequestInput = Omit<ContactRequest, "id" | "created" | "handled">;

const requestKey = (id: number) => ["requests", id] as const;

/**
 * Stores a request or report from the public form and tells the team (and the sender, within
 * the receipt limit). A report may name a module, which must exist (`invalid` naming `module`);
 * other kinds carry none.
 */
export async function createRequest(deps: Deps, sent: RequestInput): Promise<ContactRequest> {
  const { kv, clock, config } = deps;
  const module = REPORT_KINDS.includes(sent.kind) ? sent.module : "";
  if (module && await isSlugFree(kv, module)) invalid("module: no such module", "module");
  const input = { ...sent, module };
  const now = clock.now();
  const addr = await addressHash(input.email);
  const receipt = (await countSubjectUse(kv, RECEIPTS, `${RECEIPTS.name}:${input.email}`, now)).ok;
  const { item, p } = await transact(async () => {
    const claim = await claimId(kv, "request", requestKey);
    const item: ContactRequest = { ...input, id: claim.id, created: now, handled: null };
    const op = claim.apply(atomic(kv))
      .set(requestKey(item.id), item)
      .set(["requests_by_address", addr, item.id], true);
    const p = queuedInboxMails();
    if (receipt) {
      mailTo(op, p, { ...requestReceiptMail(item, now), to: item.email }, now);
    }
    const report = REPORT_KINDS.includes(item.kind);
    const inbox = report ? config.reportInbox : config.teamInbox;
    mailInbox(op, p, inbox, requestTeamMail(item, report, config.baseUrl), now);
    return { op, result: { item, p } };
  });
  await flush(deps, p);
  return item;
}

/** Newest first; handled ones only with `all`. */
export async function listRequests(kv: Deno.Kv, all: boolean): Promise<ContactRequest[]> {
  const out: ContactRequest[] = [];
  for await (const e of kv.list<ContactRequest>({ prefix: ["requests"] }, { reverse: true })) {
    if (all || e.value.handled === null) out.push(e.value);
  }
  return out;
}

/** Marks a request handled (or open again); null when there is no such request. */
export async function setHandled(
  deps: Deps,
  id: number,
  handled: boolean,
  actor: string,
): Promise<ContactRequest | null> {
  const { kv } = deps;
  const now = deps.clock.now();
  return await transact(async () => {
    const entry = await kv.get<ContactRequest>(requestKey(id));
    if (!entry.value) return { op: null, result: null };
    if ((entry.value.handled !== null) === handled) return { op: null, result: entry.value };
    const item = { ...entry.value, handled: handled ? now : null };
    const op = atomic(kv).check(entry).set(entry.key, item);
    (await trailAppend(kv, [{
      actor,
      action: handled ? "request.handle" : "request.reopen",
      subject: `request:${id}`,
      fields: ["handled"],
    }], now)).apply(op);
    return { op, result: item };
  });
}

export async function requestsOfAddress(kv: Deno.Kv, email: string): Promise<ContactRequest[]> {
  const addr = await addressHash(email);
  const ids: number[] = [];
  for await (const e of kv.list({ prefix: ["requests_by_address", addr] })) {
    ids.push(e.key[2] as number);
  }
  const got = await getManyValues<ContactRequest>(kv, ids.map(requestKey));
  return got.filter((r) => r.email === email);
}

async function deleteRequests(kv: Deno.Kv, items: ContactRequest[]): Promise<number> {
  let n = 0;
  for (const item of items) {
    const addr = await addressHash(item.email);
    await commit(
      atomic(kv).delete(requestKey(item.id)).delete(["requests_by_address", addr, item.id]),
    );
    n++;
  }
  return n;
}

/** Erasure: every request sent from the address. */
export async function eraseRequestsOf(kv: Deno.Kv, email: string): Promise<number> {
  return await deleteRequests(kv, await requestsOfAddress(kv, email));
}

/** Daily job: removes requests older than 180 days. */
export async function expireRequests(deps: Deps): Promise<number> {
  const cutoff = deps.clock.now() - REQUEST_LIFE;
  const old: ContactRequest[] = [];
  for await (const e of deps.kv.list<ContactRequest>({ prefix: ["requests"] })) {
    if (e.value.created <= cutoff) old.push(e.value);
  }
  return await deleteRequests(deps.kv, old);
}

export const requestView = (r: ContactRequest) => ({
  id: r.id,
  name: r.name,
  email: r.email,
  kind: r.kind,
  text: r.text,
  org: r.org,
  module: r.module || null,
  created: iso(r.created),
  handled: r.handled === null ? null : iso(r.handled),
});
