import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { httpRequest } from "../lib/checks/_http.ts";
import { describeError } from "../lib/checks/mod.ts";
import { DAY, iso, MINUTE } from "../lib/clock.ts";
import { randomToken } from "../lib/crypto.ts";
import type { Deps } from "../lib/deps.ts";
import { conflict, invalid } from "../lib/errors.ts";
import { log } from "../lib/log.ts";
import { parseUrlTarget, resolveTarget, TargetError } from "../lib/targets.ts";
import { isOwner } from "./accounts.ts";
import { getAccount } from "./accounts.ts";
import { claimId } from "./ids.ts";
import { CLAIM_MS, deliveryId, waitsBehind } from "./outbox.ts";
import { type Atomic, atomic, commit } from "./_atomic.ts";
import { getManyEntries } from "./_batch.ts";

/**
 * Alert channels: webhooks an account adds besides mail. Key layout:
 *   ["channels", account_id, id]  -> Channel {id, account, name, url, secret, created}
 *   ["channel_outbox", id]        -> QueuedPost, kept until delivered (expires after 8 days)
 * A post is enqueued in the atomic of the alert it carries (as mail in kv/outbox.ts), sent
 * right after the commit and retried by the minutely outbox job with backoff. Delivery is at
 * least once, with the post's id as `X-Webhook-Id` on every attempt; a channel's posts go one
 * after the other, and an alert's post waits while an earlier post of one of its services
 * (`thread`) to that channel is queued, so a back never reaches a channel before its off. Sending
 * resolves the address and refuses private targets as checks do (lib/targets.ts; an owner
 * may use them), connects only to the address it validated, speaks HTTPS through the
 * injected connector and TLS, and does not follow redirects (so no hop escapes the check).
 * The signing secret is kept as it is: the receiver verifies the HMAC with the same key, so
 * it cannot be a hash; it grants nothing on this service.
 */

export const MAX_CHANNELS = 10;
const MAX_AGE = 8 * DAY;
const SEND_LIMIT_MS = 10_000;
export const SIGNATURE_HEADER = "X-Signature-256";

export interface Channel {
  id: number;
  account: number;
  name: string;
  url: string;
  secret: string;
  created: number;
}

export interface QueuedPost {
  id: string;
  account: number;
  channel: number;
  /** The JSON payload as sent (signed as these bytes). */
  body: string;
  event: string;
  created: number;
  attempts: number;
  next: number;
  /** The services an alert's post is about: it goes after their earlier posts to `channel`. */
  thread?: number[];
}

const channelKey = (account: number, id: number) => ["channels", account, id] as const;
const postKey = (id: string) => ["channel_outbox", id] as const;

/** The origin only, as `target_hint` shows for checks. */
export const channelView = (c: Channel) => ({
  id: c.id,
  name: c.name,
  url_hint: new URL(c.url).origin,
  created: iso(c.created),
});

/** A webhook address: https only, no credentials; answers the canonical URL. */
export function parseChannelUrl(raw: string): string {
  try {
    const t = parseUrlTarget("url", raw, ["https:"]);
    return t.url!.href;
  } catch (err) {
    if (err instanceof TargetError) invalid(err.message.replace(/^url: /, "url: "), "url");
    throw err;
  }
}

export async function listChannels(kv: Deno.Kv, account: number): Promise<Channel[]> {
  const out: Channel[] = [];
  for await (const e of kv.list<Channel>({ prefix: ["channels", account] })) out.push(e.value);
  return out;
}

export async function getChannel(kv: Deno.Kv, account: number, id: number) {
  return (await kv.get<Channel>(channelKey(account, id))).value;
}

/** Adds a channel after checking its address resolves to an allowed target. */
export async function createChannel(
  deps: Deps,
  account: number,
  input: { name: string; url: string },
  allowPrivate: boolean,
): Promise<Channel> {
  const url = parseChannelUrl(input.url);
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const r = await resolveTarget(deps.resolver, host, allowPrivate);
  if (!r.ok) invalid(`url: ${r.error}`, "url");
  const existing = await listChannels(deps.kv, account);
  if (existing.length >= MAX_CHANNELS) {
    conflict(`at most ${MAX_CHANNELS} channels per account; remove one first`, {
      max: MAX_CHANNELS,
    });
  }
  const id = await claimId(deps.kv, "channel", (n) => channelKey(account, n));
  const channel: Channel = {
    id: id.id,
    account,
    name: input.name,
    url,
    secret: randomToken(32),
    created: deps.clock.now(),
  };
  const res = await commit(id.apply(atomic(deps.kv)).set(channelKey(account, channel.id), channel));
  if (!res.ok) conflict("the channel could not be stored; try again");
  return channel;
}

export async function deleteChannel(deps: Deps, account: number, id: number): Promise<boolean> {
  const entry = await deps.kv.get<Channel>(channelKey(account, id));
  if (!entry.value) return false;
  await commit(atomic(deps.kv).check(entry).delete(entry.key));
  return true;
}

/** The account's queued posts (export). */
export async function listPostsOf(kv: Deno.Kv, account: number): Promise<QueuedPost[]> {
  const out: QueuedPost[] = [];
  for await (const e of kv.list<QueuedPost>({ prefix: ["channel_outbox"] })) {
    if (e.value.account === account) out.push(e.value);
  }
  return out;
}

/** Removes every channel of an account and its queued posts (erasure). */
export async function eraseChannels(deps: Deps, account: number): Promise<number> {
  let n = 0;
  for (const c of await listChannels(deps.kv, account)) {
    if (await deleteChannel(deps, account, c.id)) n++;
  }
  for await (const e of deps.kv.list<QueuedPost>({ prefix: ["channel_outbox"] })) {
    if (e.value.account === account) await commit(atomic(deps.kv).delete(e.key));
  }
  return n;
}

/** What an alert says, in the shapes Slack (`text`), Discord (`content`) and ntfy read. */
export interface AlertPayload {
  event: "off" | "back" | "expiry" | "reminder" | "test";
  title: string;
  text: string;
  service: ServiceLine | null;
  /** An alert of several services at one place (kv/grouped_alerts.ts): each of them. */
  services?: ServiceLine[];
  /** The place or group they share, and how many services of the account it holds. */
  group?: { name: string; total: number };
  at: string;
  link: string;
}

type ServiceLine = { id: number; name: string; kind: string; state: string; status: string };

export function payloadJson(p: AlertPayload): string {
  return JSON.stringify({
    text: `${p.title}\n${p.text}`,
    content: `${p.title}\n${p.text}`,
    title: p.title,
    message: p.text,
    event: p.event,
    service: p.service,
    ...(p.services ? { services: p.services, group: p.group } : {}),
    at: p.at,
    link: p.link,
  });
}

/**
 * Adds one post per channel to the caller's atomic; answers their ids for `deliverPosts`. An
 * alert's posts name its services in `thread`.
 */
export function enqueuePosts(
  op: Atomic,
  channels: Channel[],
  payload: AlertPayload,
  now: number,
  thread?: number[],
): string[] {
  const body = payloadJson(payload);
  return channels.map((c) => {
    const id = deliveryId(now);
    const post: QueuedPost = {
      id,
      account: c.account,
      channel: c.id,
      body,
      event: payload.event,
      created: now,
      attempts: 0,
      next: now,
    };
    if (thread?.length) post.thread = thread;
    op.set(postKey(id), post, { expireIn: MAX_AGE });
    return id;
  });
}

/** The channels of a service that still exist (ids of deleted ones are skipped). */
export async function channelsOf(
  kv: Deno.Kv,
  account: number,
  ids: number[] | undefined,
): Promise<Channel[]> {
  if (!ids?.length) return [];
  const got = await kv.getMany<Channel[]>(ids.map((id) => channelKey(account, id)));
  return got.flatMap((e) => e.value ? [e.value] : []);
}

export const signature = (secret: string, body: string) =>
  "sha256=" +
  bytesToHex(hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(body)));

export type SendResult = { ok: true; status: string } | { ok: false; status: string };

/** One POST to a channel, validated like a check, within 10 s; never throws. */
export async function sendPost(
  deps: Deps,
  channel: Channel,
  body: string,
  postId: string,
  allowPrivate: boolean,
): Promise<SendResult> {
  const url = new URL(channel.url);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const resolved = await resolveTarget(deps.resolver, host, allowPrivate);
  if (!resolved.ok) {
    return {
      ok: false,
      status: resolved.refused ? "target refused: private address" : resolved.error,
    };
  }
  const conns = new Set<{ close(): void }>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      reject(new Error("timed out"));
    }, SEND_LIMIT_MS);
  });
  try {
    const work = httpRequest(deps, {
      address: resolved.address,
      url,
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        [SIGNATURE_HEADER]: signature(channel.secret, body),
        "X-Webhook-Id": postId,
      },
      body,
      bodyLimit: 0,
    }, (c) => conns.add(c));
    work.catch(() => {});
    const ans = await Promise.race([work, limit]);
    const status = `HTTP ${ans.status}`;
    return ans.status >= 200 && ans.status < 300 ? { ok: true, status } : { ok: false, status };
  } catch (err) {
    return { ok: false, status: describeError(err) };
  } finally {
    clearTimeout(timer);
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  }
}

/**
 * Tries to deliver queued posts now (claimed first, so the retry job never sends twice): the
 * posts of one channel one after the other, in the order they were queued; channels side by
 * side. Answers each post's result, in the order of `ids`.
 */
export async function deliverPosts(deps: Deps, ids: string[]): Promise<SendResult[]> {
  const entries = await getManyEntries<QueuedPost>(deps.kv, ids.map(postKey));
  const byChannel = new Map<number, number[]>();
  entries.forEach((e, i) => {
    const c = e.value?.channel ?? -1;
    byChannel.set(c, [...byChannel.get(c) ?? [], i]);
  });
  const results: SendResult[] = ids.map(() => ({ ok: false, status: "not due" }));
  await Promise.all([...byChannel.values()].map(async (inOrder) => {
    inOrder.sort((a, b) => ids[a] < ids[b] ? -1 : 1);
    for (const i of inOrder) results[i] = await deliverOne(deps, ids[i]);
  }));
  return results;
}

/** Every queued post (for the order of an alert's post: posts leave at once, few wait). */
async function queuedPosts(kv: Deno.Kv): Promise<QueuedPost[]> {
  const out: QueuedPost[] = [];
  for await (const e of kv.list<QueuedPost>({ prefix: ["channel_outbox"] })) out.push(e.value);
  return out;
}

async function deliverOne(deps: Deps, id: string): Promise<SendResult> {
  const { kv, clock } = deps;
  const entry = await kv.get<QueuedPost>(postKey(id));
  const post = entry.value;
  if (!post || post.next > clock.now()) return { ok: false, status: "not due" };
  // Behind an earlier alert of its service to this channel: sent after it.
  if (
    post.thread && waitsBehind(await queuedPosts(kv), post, (q) => q.channel === post.channel)
  ) {
    return { ok: false, status: "waits for an earlier alert" };
  }
  const claimed = { ...post, next: clock.now() + CLAIM_MS };
  const got = await commit(atomic(kv).check(entry).set(entry.key, claimed, { expireIn: MAX_AGE }));
  if (!got.ok) return { ok: false, status: "claimed elsewhere" };
  const channel = await getChannel(kv, post.account, post.channel);
  if (!channel) {
    await commit(atomic(kv).delete(entry.key));
    return { ok: false, status: "channel removed" };
  }
  const account = (await getAccount(kv, post.account)).value;
  const r = await sendPost(deps, channel, post.body, post.id, account ? isOwner(account) : false);
  if (r.ok) {
    await commit(atomic(kv).delete(entry.key));
    return r;
  }
  const attempts = post.attempts + 1;
  const backoff = Math.min(2 ** attempts * MINUTE, 6 * 60 * MINUTE);
  // The reason only: no address in the logs.
  log("warn", "webhook delivery failed", { post: id, attempt: attempts, reason: r.status });
  await commit(
    atomic(kv).set(entry.key, { ...post, attempts, next: clock.now() + backoff }, {
      expireIn: MAX_AGE,
    }),
  );
  return r;
}

/** Job: delivers every queued post that is due. */
export async function retryPosts(deps: Deps): Promise<number> {
  const due: string[] = [];
  const now = deps.clock.now();
  for await (const e of deps.kv.list<QueuedPost>({ prefix: ["channel_outbox"] })) {
    if (e.value.next <= now) due.push(e.value.id);
  }
  for (let i = 0; i < due.length; i += 10) await deliverPosts(deps, due.slice(i, i + 10));
  return due.length;
}

/** Sends a test alert to one channel now; answers how it went. */
export async function testChannel(deps: Deps, channel: Channel): Promise<SendResult> {
  const now = deps.clock.now();
  const op = atomic(deps.kv);
  const [id] = enqueuePosts(op, [channel], {
    event: "test",
    title: `Test alert for channel "${channel.name}"`,
    text: "This is a test alert. Alerts of the services that use this channel come here.",
    service: null,
    at: iso(now),
    link: `${deps.config.baseUrl}/me/channels`,
  }, now);
  await commit(op);
  const [r] = await deliverPosts(deps, [id]);
  return r;
}
