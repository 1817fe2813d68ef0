import { httpRequest } from "../../lib/checks/_http.ts";
import { describeError } from "../../lib/checks/_probe.ts";
import { DAY, iso } from "../../lib/clock.ts";
import { randomToken } from "../../lib/crypto.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, invalid } from "../../lib/errors.ts";
import { outboundTarget } from "../../lib/outbound.ts";
import { sealingKey, sealSecret, unsealSecret } from "../../lib/secrets.ts";
import {
  type AlertMessage,
  CHANNEL_KINDS,
  checkValues,
  explain,
  type FormatContext,
  type KindSpec,
  type OutRequest,
  PROVIDERS,
  secretFields,
  type Values,
} from "../../lib/channels/mod.ts";
import { fromApprise } from "../../lib/channels/apprise.ts";
import { alertOf, payloadJson, signature, SIGNATURE_HEADER } from "../../lib/channels/webhook.ts";
import { eventOf, linesOf } from "../../lib/channels/_format.ts";
import { channelBrokenMail } from "../../mail/channels.ts";
import { getAccount } from "../accounts/accounts.ts";
import { claimId } from "../store/ids.ts";
import type { Mail } from "../../lib/mail.ts";
import { type Atomic, atomic, commit, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { after, type Timer } from "../../lib/timers.ts";

/**
 * Alert channels: where an account's alerts go besides mail (Slack, Telegram, PagerDuty, a
 * signed webhook, ...: lib/channels/ formats each kind's requests). Key layout:
 *   ["channels", account_id, id]   -> Channel {id, account, name, kind, settings, sealed, hint,
 *                                     failure, broken, for_new, created}; `for_new`: a new
 *                                     service naming no channels gets it (absent: true)
 *   ["channel_incidents", account_id, channel_id, service_id]
 *                                  -> Incident: the outage's pairing key (PagerDuty's dedup_key,
 *                                     Opsgenie's alias, ...) and what the provider answered to
 *                                     its off; set when the off is sent, gone with its back
 *                                     (expires after 90 days)
 * A post to a channel is a delivery of the outbox (kv/alerts/outbox.ts queues, claims, sends
 * through `sendPost`, retries and orders it); this module says how one post goes out and what
 * its outcome does to the channel (`outcomeOf`: a failure noted, broken after MAX_ATTEMPTS
 * tries with its owner mailed once, cleared by a delivery). Sending resolves the address and
 * refuses private targets as checks do (lib/targets.ts; an owner may use them, and a
 * self-hosted kind the networks the server names in CHANNEL_NETWORKS), connects only to the
 * address it validated, speaks HTTPS through the injected connector and TLS, and does not
 * follow redirects. The secret fields (tokens, keys, webhook addresses, the signing secret)
 * are sealed with SECRETS_KEY (lib/secrets.ts), bound to the channel, and never shown again;
 * records written before kinds existed held a webhook's `url` and `secret` in the clear and are
 * sealed by a migration (`sealClearChannels`), or read as they are on a server without the key.
 */

export const MAX_CHANNELS = 10;
/** Tries of one post (the first and its retries, about an hour in all) before giving up. */
export const MAX_ATTEMPTS = 6;
const INCIDENT_AGE = 90 * DAY;
const SEND_LIMIT_MS = 10_000;
const ANSWER_LIMIT = 8 * 1024;
export { signature, SIGNATURE_HEADER };
export { payloadJson };

export interface Channel {
  id: number;
  account: number;
  name: string;
  /** A kind of lib/channels/mod.ts KINDS; absent in records from before kinds: "webhook". */
  kind?: string;
  /** The fields that are not secret, as entered. */
  settings?: Values;
  /** The secret fields, sealed (lib/secrets.ts), bound to `channelBound`. */
  sealed?: string;
  /** What the list shows: an origin, a chat, a region; never a secret. */
  hint?: string;
  /** The last failed delivery: when, and the answer in words. */
  failure?: { at: number; error: string } | null;
  /**
   * When a test or an alert last went through after it was made or after a failure; absent:
   * nothing has gone through yet ("not tested yet").
   */
  delivered?: number;
  /** Since when it is marked broken (a post failed every try); null/absent: not broken. */
  broken?: number | null;
  /** Ticked for a new service that names no channels (absent: true, as at creation). */
  for_new?: boolean;
  /** The optional secret fields left empty (absent: none, or a record from before). */
  unset?: string[];
  created: number;
  /** Records from before kinds: a webhook's address and signing secret, in the clear. */
  url?: string;
  secret?: string;
}

interface Incident {
  key: string;
  /** The provider's id of the off message (Telegram's message_id, Matrix's event_id). */
  ref?: string;
  opened: number;
}

/** What an alert says (kv/service/looks.ts and kv/alerts/grouped_alerts.ts build it). */
export type AlertPayload = AlertMessage;

const channelKey = (account: number, id: number) => ["channels", account, id] as const;
const incidentKey = (account: number, channel: number, service: number) =>
  ["channel_incidents", account, channel, service] as const;
const channelBound = (account: number, id: number) => `channel/${account}/${id}`;

export const channelKindOf = (c: Channel): KindSpec =>
  CHANNEL_KINDS[c.kind ?? "webhook"] ?? CHANNEL_KINDS.webhook;

export const stateOf = (c: Channel): "ok" | "failing" | "broken" =>
  c.broken ? "broken" : c.failure ? "failing" : "ok";

/** Whether a new service that names no channels gets this one. */
export const forNew = (c: Pick<Channel, "for_new">) => c.for_new !== false;

/** What the API and the pages show: the settings, each secret entered as "set", the health. */
export const channelView = (c: Channel) => {
  const spec = channelKindOf(c);
  const hint = c.hint ?? (c.url ? new URL(c.url).origin : "");
  return {
    id: c.id,
    name: c.name,
    kind: spec.kind,
    url_hint: hint,
    settings: { ...(c.settings ?? {}) },
    secrets: Object.fromEntries(
      secretFields(spec).filter((f) => !c.unset?.includes(f)).map((f) => [f, "set" as const]),
    ),
    state: stateOf(c),
    for_new_services: forNew(c),
    last_error: c.failure ? { at: iso(c.failure.at), error: c.failure.error } : null,
    last_delivered: c.delivered === undefined ? null : iso(c.delivered),
    broken_since: c.broken ? iso(c.broken) : null,
    created: iso(c.created),
  };
};

export type ChannelView = ReturnType<typeof channelView>;

export async function listChannels(kv: Deno.Kv, account: number): Promise<Channel[]> {
  const out: Channel[] = [];
  for await (const e of kv.list<Channel>({ prefix: ["channels", account] })) out.push(e.value);
  return out;
}

export async function getChannel(kv: Deno.Kv, account: number, id: number) {
  return (await kv.get<Channel>(channelKey(account, id))).value;
}

/** The channel's entry, for an atomic that must fail if the channel goes meanwhile. */
export const channelEntry = (kv: Deno.Kv, account: number, id: number) =>
  kv.get<Channel>(channelKey(account, id));

/** The account's channels as the add-service form offers them, ticked for new services or not. */
export async function channelChoices(kv: Deno.Kv, account: number) {
  return (await listChannels(kv, account)).map((c) => ({
    id: c.id,
    name: c.name,
    kind: channelKindOf(c).kind,
    for_new_services: forNew(c),
  }));
}

/** The ids of the channels a new service gets when it names none ("use for new services"). */
export async function defaultChannels(kv: Deno.Kv, account: number): Promise<number[]> {
  return (await listChannels(kv, account)).filter(forNew).map((c) => c.id);
}

/** Turns "use for new services" on or off; null: no such channel. */
export async function setForNew(
  deps: Deps,
  account: number,
  id: number,
  on: boolean,
): Promise<Channel | null> {
  return await transact(async () => {
    const entry = await deps.kv.get<Channel>(channelKey(account, id));
    if (!entry.value) return { op: null, result: null };
    const next: Channel = { ...entry.value, for_new: on };
    return { op: atomic(deps.kv).check(entry).set(entry.key, next), result: next };
  });
}

/**
 * Whether sending to this host may go on (lib/outbound.ts): a self-hosted kind may reach the
 * networks the server names.
 */
const checkTarget = (deps: Deps, spec: KindSpec, url: URL, allowPrivate: boolean) =>
  outboundTarget(
    deps.resolver,
    url,
    spec.selfHosted ? deps.config.channelNetworks : [],
    allowPrivate,
  );

export interface NewChannel {
  name: string;
  /** Absent: the generic webhook (`url`), as before kinds. */
  kind?: string;
  /** "Use for new services" (absent: true). */
  for_new_services?: boolean;
  /** An Apprise-style URL (`tgram://token/chat`, ...) standing for `kind` and its fields. */
  apprise?: string;
  [field: string]: unknown;
}

/** Adds a channel after checking its fields and that its address resolves to an allowed target. */
export async function createChannel(
  deps: Deps,
  account: number,
  input: NewChannel,
  allowPrivate: boolean,
): Promise<Channel & { shownSecret: string | null }> {
  const apprise = typeof input.apprise === "string" ? fromApprise(input.apprise) : null;
  if (apprise && "error" in apprise) invalid(`apprise: ${apprise.error}`, "apprise");
  const kind = apprise ? apprise.kind : input.kind ?? "webhook";
  const spec = CHANNEL_KINDS[kind];
  if (!spec) invalid(`kind: one of ${Object.keys(CHANNEL_KINDS).join(", ")}`, "kind");
  const checked = checkValues(spec, apprise ? apprise.fields : input);
  // An Apprise URL's part that is wrong is said of the URL, which is what was entered.
  if (!checked.ok) {
    invalid(
      apprise ? `apprise: ${checked.error}` : checked.error,
      apprise ? "apprise" : checked.field,
    );
  }
  const values = checked.values;
  if (spec.target) {
    const r = await checkTarget(deps, spec, new URL(values[spec.target]), allowPrivate);
    if (!r.ok) invalid(`${spec.target}: ${r.error}`, spec.target);
  }
  // The generic webhook signs with a secret of its own, shown once.
  const shownSecret = spec.kind === "webhook" ? randomToken(32) : null;
  if (shownSecret) values.secret = shownSecret;
  const existing = await listChannels(deps.kv, account);
  if (existing.length >= MAX_CHANNELS) {
    conflict(`at most ${MAX_CHANNELS} channels per account; remove one first`, {
      max: MAX_CHANNELS,
    });
  }
  const id = await claimId(deps.kv, "channel", (n) => channelKey(account, n));
  const secretNames = new Set([...secretFields(spec), "secret"]);
  const secrets = Object.fromEntries(Object.entries(values).filter(([k]) => secretNames.has(k)));
  const settings = Object.fromEntries(Object.entries(values).filter(([k]) => !secretNames.has(k)));
  const key = await keyOf(deps);
  if (!key) conflict(NO_KEY);
  const channel: Channel = {
    id: id.id,
    account,
    name: input.name,
    kind: spec.kind,
    settings,
    sealed: await sealSecret(key, JSON.stringify(secrets), channelBound(account, id.id)),
    hint: spec.hint(values),
    failure: null,
    broken: null,
    for_new: input.for_new_services ?? true,
    created: deps.clock.now(),
  };
  const unset = secretFields(spec).filter((f) => !(f in values));
  if (unset.length) channel.unset = unset;
  const res = await commit(id.apply(atomic(deps.kv)).set(channelKey(account, channel.id), channel));
  if (!res.ok) conflict("the channel could not be stored; try again");
  return { ...channel, shownSecret };
}

const NO_KEY = "this server has no SECRETS_KEY, so it cannot keep a channel's tokens; its " +
  "owner must set one (README)";

const keyOf = (deps: Deps) =>
  deps.config.secretsKey ? sealingKey(deps.config.secretsKey) : Promise.resolve(null);

/** The channel's values, its secrets opened; null when they do not open (SECRETS_KEY changed). */
async function valuesOf(deps: Deps, c: Channel): Promise<Values | null> {
  if (!c.sealed) return { url: c.url ?? "", secret: c.secret ?? "" };
  const key = await keyOf(deps);
  if (!key) return null;
  const opened = await unsealSecret(key, c.sealed, channelBound(c.account, c.id));
  return opened === null ? null : { ...(c.settings ?? {}), ...JSON.parse(opened) };
}

/**
 * Seals the clear webhook fields of records from before kinds (migration 10, kv/store/migrations.ts).
 * Answers how many are left in the clear: all of them when the server has no SECRETS_KEY.
 */
export async function sealClearChannels(kv: Deno.Kv, secretsKey: string | null): Promise<number> {
  const key = secretsKey ? await sealingKey(secretsKey) : null;
  let left = 0;
  for await (const e of kv.list<Channel>({ prefix: ["channels"] })) {
    const c = e.value;
    if (c.sealed || c.url === undefined) continue;
    if (!key) {
      left++;
      continue;
    }
    const secrets = { url: c.url, secret: c.secret ?? "" };
    const { url: _u, secret: _s, ...rest } = c;
    const next: Channel = {
      ...rest,
      kind: "webhook",
      settings: {},
      hint: new URL(c.url).origin,
      sealed: await sealSecret(key, JSON.stringify(secrets), channelBound(c.account, c.id)),
    };
    if (!(await commit(atomic(kv).check(e).set(e.key, next))).ok) left++;
  }
  // The mark the former minutely job kept.
  await commit(atomic(kv).delete(["channels_sealed"]));
  return left;
}

export async function deleteChannel(deps: Deps, account: number, id: number): Promise<boolean> {
  const entry = await deps.kv.get<Channel>(channelKey(account, id));
  if (!entry.value) return false;
  await commit(atomic(deps.kv).check(entry).delete(entry.key));
  await deleteKeys(deps.kv, keysOf(deps.kv, { prefix: ["channel_incidents", account, id] }));
  return true;
}

/** Removes every channel of an account and its open incidents (erasure; the outbox drops its
 * queued posts). */
export async function eraseChannels(deps: Deps, account: number): Promise<number> {
  let n = 0;
  for (const c of await listChannels(deps.kv, account)) {
    if (await deleteChannel(deps, account, c.id)) n++;
  }
  await deleteKeys(deps.kv, keysOf(deps.kv, { prefix: ["channel_incidents", account] }));
  return n;
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

export type SendResult = { ok: boolean; status: string; retryAfter?: number };

/** One request to a validated address within 10 s; never throws. */
async function sendRequest(
  deps: Deps,
  req: OutRequest,
  address: string,
): Promise<{ status: number; headers: Headers; body: string } | { error: string }> {
  const conns = new Set<{ close(): void }>();
  let timer: Timer | undefined;
  const closeAll = () => {
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  };
  const limit = new Promise<never>((_, reject) => {
    timer = after(SEND_LIMIT_MS, () => {
      closeAll();
      reject(new Error("timed out"));
    });
  });
  try {
    const work = httpRequest(deps, {
      address,
      url: new URL(req.url),
      method: req.method,
      headers: req.headers,
      body: req.body,
      bodyLimit: ANSWER_LIMIT,
    }, (c) => conns.add(c));
    work.catch(() => {});
    return await Promise.race([work, limit]);
  } catch (err) {
    return { error: describeError(err) };
  } finally {
    timer?.cancel();
    closeAll();
  }
}

/** The origins of the providers with fixed addresses (the test override, else PROVIDERS). */
const originOf = (deps: Deps) => (p: keyof typeof PROVIDERS) =>
  deps.config.providerOrigin ?? PROVIDERS[p];

/** The pairing of each service the alert is about: its open incident, or a new one for an off. */
async function incidentsFor(
  deps: Deps,
  channel: Channel,
  alert: AlertMessage,
  postId: string,
): Promise<Map<number, Incident & { event: string; fresh: boolean }>> {
  const lines = linesOf(alert);
  const keys = lines.map((s) => incidentKey(channel.account, channel.id, s.id));
  const got = keys.length ? await deps.kv.getMany<Incident[]>(keys) : [];
  const out = new Map<number, Incident & { event: string; fresh: boolean }>();
  lines.forEach((s, i) => {
    const open = got[i]?.value;
    const event = eventOf(alert, s);
    // A back with no open incident (its off went out before kinds) closes the service's plain key.
    const key = event === "back" ? `service-${s.id}` : `service-${s.id}-${postId}`;
    out.set(s.id, {
      ...(open ?? { key, opened: deps.clock.now() }),
      event,
      fresh: !open,
    });
  });
  return out;
}

/**
 * One alert to a channel: its kind's requests, one after the other, each to an address checked
 * as a check's is; never throws. An off opens the service's incident for this channel before it
 * is sent (so its back pairs with it even when the off is still being retried), a back closes it.
 */
export async function sendPost(
  deps: Deps,
  channel: Channel,
  body: string,
  postId: string,
  allowPrivate: boolean,
): Promise<SendResult> {
  const spec = channelKindOf(channel);
  const values = await valuesOf(deps, channel);
  if (!values) {
    return {
      ok: false,
      status: deps.config.secretsKey
        ? "the channel's secrets cannot be read (was SECRETS_KEY changed?)"
        : NO_KEY,
    };
  }
  const alert = alertOf(body);
  const incidents = await incidentsFor(deps, channel, alert, postId);
  const opening = atomic(deps.kv);
  for (const [service, inc] of incidents) {
    if (inc.fresh && (inc.event === "off" || inc.event === "reminder")) {
      opening.set(incidentKey(channel.account, channel.id, service), {
        key: inc.key,
        opened: inc.opened,
      }, { expireIn: INCIDENT_AGE });
    }
  }
  await commit(opening);
  const ctx: FormatContext = {
    id: postId,
    pair: (s) => s === null ? `test-${postId}` : incidents.get(s)?.key ?? `service-${s}`,
    ref: (s) => s === null ? undefined : incidents.get(s)?.ref,
    origin: originOf(deps),
  };
  const fixed = new Set(Object.keys(PROVIDERS).map((p) => ctx.origin(p as keyof typeof PROVIDERS)));
  let last: SendResult = { ok: true, status: "nothing to send" };
  let answer = "";
  for (const req of spec.format(alert, values, ctx)) {
    const url = new URL(req.url);
    // A provider's fixed origin is the server owner's choice, not the person's.
    const target = await checkTarget(deps, spec, url, allowPrivate || fixed.has(url.origin));
    if (!target.ok) {
      return {
        ok: false,
        status: target.refused ? "target refused: private address" : target.error,
      };
    }
    const got = await sendRequest(deps, req, target.address);
    if ("error" in got) return { ok: false, status: got.error };
    const said = explain(got.status, got.headers, got.body, deps.clock.now());
    last = {
      ok: said.ok,
      status: spec.kind === "webhook" && said.ok ? `HTTP ${got.status}` : said.words,
      ...(said.retryAfter ? { retryAfter: said.retryAfter } : {}),
    };
    if (!said.ok) return last;
    answer = got.body;
  }
  await closeIncidents(deps, channel, spec, incidents, answer, alert);
  return last;
}

/** After a delivered alert: a back's incident is gone, an off keeps what the provider named. */
async function closeIncidents(
  deps: Deps,
  channel: Channel,
  spec: KindSpec,
  incidents: Map<number, Incident & { event: string; fresh: boolean }>,
  answer: string,
  alert: AlertMessage,
) {
  const op = atomic(deps.kv);
  let writes = 0;
  for (const [service, inc] of incidents) {
    const key = incidentKey(channel.account, channel.id, service);
    if (inc.event === "back") {
      op.delete(key);
      writes++;
    } else if (inc.event === "off" && !alert.services && !inc.ref && spec.refOf) {
      const ref = spec.refOf(answer);
      if (ref) {
        op.set(key, { key: inc.key, opened: inc.opened, ref }, { expireIn: INCIDENT_AGE });
        writes++;
      }
    }
  }
  if (writes) await commit(op);
}

/**
 * What a post's outcome does to its channel: a success clears its failure and broken mark, a
 * failure is noted, and one given up (`givenUp`: the tries made) marks it broken and mails its
 * owner, once. Answers the atomic (checked against the channel) with that mail, for the outbox
 * to add it and commit; null when nothing changes.
 */
export async function outcomeOf(
  deps: Deps,
  channel: Channel,
  r: SendResult,
  givenUp: number | null,
): Promise<{ op: Atomic; mail: Mail | null } | null> {
  const { kv, clock } = deps;
  const entry = await kv.get<Channel>(channelKey(channel.account, channel.id));
  const c = entry.value;
  if (!c) return null;
  const op = atomic(kv).check(entry);
  if (r.ok) {
    // Written once it first went through, and after a failure: not at every alert.
    if (!c.failure && !c.broken && c.delivered !== undefined) return null;
    const ok = { ...c, failure: null, broken: null, delivered: clock.now() };
    return { op: op.set(entry.key, ok), mail: null };
  }
  const now = clock.now();
  const next: Channel = { ...c, failure: { at: now, error: r.status } };
  let mail: Mail | null = null;
  if (givenUp !== null && !c.broken) {
    next.broken = now;
    const acc = (await getAccount(kv, c.account)).value;
    if (acc) {
      const text = channelBrokenMail(
        c.name,
        channelKindOf(c).label,
        r.status,
        givenUp,
        `${deps.config.baseUrl}/me/channels`,
      );
      mail = { ...text, to: acc.email };
    }
  }
  return { op: op.set(entry.key, next), mail };
}
