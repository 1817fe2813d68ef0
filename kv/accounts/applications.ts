import type { Deps } from "../../lib/deps.ts";
import { conflict, notFound } from "../../lib/errors.ts";
import { applicationDecisionMail } from "../../mail/accounts.ts";
import { actorOf, type Caller } from "./caller.ts";
import type { Mail } from "../../lib/mail.ts";
import { atomic, commit, transact } from "../_atomic.ts";
import { type Account, getAccount, putAccount } from "./accounts.ts";
import { claimId } from "../store/ids.ts";
import { trailAppend, type TrailEntry } from "../store/trail.ts";
import { getManyValues } from "../_batch.ts";
import { iso, isoOrNull } from "../../lib/clock.ts";

/**
 * Applications for contributor standing. Key layout:
 *   ["applications", id]                          -> Application
 *   ["applications_by_account", account_id, id]   -> true
 *   ["applications_open", account_id]             -> id of the account's open application
 * The open marker is created with `check(versionstamp: null)`, so an account never has two
 * open applications, and removed in the atomic that records the decision.
 */

export type Outcome = "approved" | "declined";

export interface Application {
  id: number;
  account: number;
  text: string;
  created: number;
  outcome: Outcome | null;
  reason: string | null;
  decided: number | null;
  /** Who decided: "account:<id>" or "service". */
  decided_by: string | null;
}

const appKey = (id: number) => ["applications", id] as const;
const byAccountKey = (account: number, id: number) =>
  ["applications_by_account", account, id] as const;
const openKey = (account: number) => ["applications_open", account] as const;

export async function applyFor(
  kv: Deno.Kv,
  account: number,
  text: string,
  now: number,
): Promise<Application> {
  return await transact(async () => {
    const open = await kv.get<number>(openKey(account));
    if (open.value !== null) conflict("you already have an open application");
    const holder = await getAccount(kv, account);
    if (!holder.value) notFound("no such account");
    const claim = await claimId(kv, "application", appKey);
    const app: Application = {
      id: claim.id,
      account,
      text,
      created: now,
      outcome: null,
      reason: null,
      decided: null,
      decided_by: null,
    };
    const ref = `account:${account}`;
    const trail = await trailAppend(kv, [{
      actor: ref,
      action: "application.create",
      subject: `application:${app.id}`,
    }], now);
    const op = claim.apply(atomic(kv))
      .check(open)
      .set(appKey(app.id), app)
      .set(byAccountKey(account, app.id), true)
      .set(openKey(account), app.id)
      // The account names its latest application, so GET /api/me needs no extra read.
      .check(holder);
    putAccount(op, { ...holder.value, application: app.id });
    trail.apply(op);
    return { op, result: app };
  });
}

async function getApps(kv: Deno.Kv, ids: number[]): Promise<Application[]> {
  return await getManyValues<Application>(kv, ids.map(appKey));
}

/** How an application shows to its applicant (http/schemas.ts ApplicationStateSchema). */
export const applicationView = (a: Application) => ({
  id: a.id,
  created: iso(a.created),
  outcome: a.outcome,
  reason: a.reason,
  decided: isoOrNull(a.decided),
});

/** An account's applications, newest first. */
export async function applicationsOf(kv: Deno.Kv, account: number): Promise<Application[]> {
  const ids: number[] = [];
  for await (
    const e of kv.list({ prefix: ["applications_by_account", account] }, { reverse: true })
  ) {
    ids.push(e.key[2] as number);
  }
  return await getApps(kv, ids);
}

/** The account's latest application: none without a read when the account names none. */
export async function latestApplication(
  kv: Deno.Kv,
  account: Account,
): Promise<Application | null> {
  // Every record names it (migration 2 named it on the records from before; the start runs it).
  if (account.application === null) return null;
  return (await kv.get<Application>(appKey(account.application))).value;
}

/** The latest application through the account index: how migration 2 names it on old records. */
export async function latestByIndex(kv: Deno.Kv, account: number) {
  for await (
    const e of kv.list({ prefix: ["applications_by_account", account] }, {
      reverse: true,
      limit: 1,
    })
  ) {
    return (await kv.get<Application>(appKey(e.key[2] as number))).value;
  }
  return null;
}

export async function hasOpenApplication(kv: Deno.Kv, account: number): Promise<boolean> {
  return (await kv.get(openKey(account))).value !== null;
}

/** Every application, oldest first; only open ones unless `all`. */
export async function listApplications(kv: Deno.Kv, all: boolean): Promise<Application[]> {
  if (all) {
    const out: Application[] = [];
    for await (const e of kv.list<Application>({ prefix: ["applications"] })) out.push(e.value);
    return out;
  }
  const ids: number[] = [];
  for await (const e of kv.list<number>({ prefix: ["applications_open"] })) ids.push(e.value);
  return (await getApps(kv, ids)).sort((a, b) => a.id - b.id);
}

interface Decided {
  application: Application;
  account: Account;
  mailId: string;
}

/**
 * The outbox, and the channel kinds it delivers to, load with the first decision: GET /api/me
 * reads the latest application on every call and needs none of them.
 */
const outbox = () => import("../alerts/outbox.ts");

/**
 * Records a team decision. Approval adds the contributor role to the account in the same
 * atomic, with its own `role.grant` trail line; the applicant's mail is queued with it.
 */
export async function decide(
  kv: Deno.Kv,
  id: number,
  input: { outcome: Outcome; reason: string },
  actor: string,
  now: number,
  compose: (app: Application, account: Account) => Omit<Mail, "to">,
): Promise<Decided | null> {
  const { enqueueMail } = await outbox();
  return await transact(async () => {
    const entry = await kv.get<Application>(appKey(id));
    const app = entry.value;
    if (!app) return { op: null, result: null };
    if (app.outcome !== null) conflict(`this application was already ${app.outcome}`);
    const acc = await getAccount(kv, app.account);
    if (!acc.value) return { op: null, result: null };
    const decided: Application = {
      ...app,
      outcome: input.outcome,
      reason: input.reason,
      decided: now,
      decided_by: actor,
    };
    const op = atomic(kv).check(entry).check(acc)
      .set(appKey(id), decided)
      .delete(openKey(app.account));
    const lines: TrailEntry[] = [{
      actor,
      action: `application.${input.outcome === "approved" ? "approve" : "decline"}`,
      subject: `application:${id}`,
    }];
    let account = acc.value;
    const ref = `account:${account.id}`;
    if (input.outcome === "approved" && !account.roles.includes("contributor")) {
      account = { ...account, roles: [...account.roles, "contributor"] };
      putAccount(op, account);
      lines.push({ actor, action: "role.grant", subject: ref, fields: ["contributor"] });
    }
    (await trailAppend(kv, lines, now)).apply(op);
    const mailId = enqueueMail(op, { ...compose(decided, account), to: account.email }, now);
    return { op, result: { application: decided, account, mailId } };
  });
}

/** Deletes every application of an account (erasure); answers the count. */
export async function deleteApplicationsOf(kv: Deno.Kv, account: number): Promise<number> {
  const apps = await applicationsOf(kv, account);
  for (const a of apps) {
    await commit(atomic(kv).delete(appKey(a.id)).delete(byAccountKey(account, a.id)));
  }
  await commit(atomic(kv).delete(openKey(account)));
  return apps.length;
}

/**
 * The team decides an application (PATCH /api/applications/{id} and the team's page): the
 * decision, the role on approval and the applicant's mail in one atomic (`decide`), then the
 * mail is sent. Not found for an unknown id.
 */
export async function decideApplication(
  deps: Deps,
  caller: Caller,
  id: number,
  input: { outcome: Outcome; reason: string },
): Promise<Application> {
  const done = await decide(
    deps.kv,
    id,
    input,
    actorOf(caller),
    deps.clock.now(),
    (app) =>
      applicationDecisionMail(
        app.outcome === "approved" ? "approved" : "declined",
        app.reason ?? "",
        `${deps.config.baseUrl}/me`,
      ),
  );
  if (!done) notFound("no such application");
  await (await outbox()).deliver(deps, [done.mailId]);
  return done.application;
}
