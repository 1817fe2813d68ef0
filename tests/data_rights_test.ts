import assert from "node:assert/strict";
import { addressHash } from "../kv/accounts/links.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { RECEIPTS } from "../kv/forms/requests.ts";
import { verifyTrail } from "../kv/store/trail.ts";
import { sha256hex } from "../lib/crypto.ts";
import { runDueChecks } from "../jobs/checks.ts";
import { seedModule } from "./_catalogue.ts";
import { expectLog, testApp } from "./_helpers.ts";
import * as ada from "./_account_fixture.ts";
import { ok } from "./_account_fixture.ts";

/**
 * GDPR articles 15 and 17, checked against the KV itself: an account uses every feature,
 * then a scan of EVERY KV entry (not a list of known keys, so records that later areas add
 * are caught too) finds each record that names the account or holds one of its values, and
 * the export must hold all of it. After the erasure the same scan must find nothing personal.
 */

/** Each KV prefix that may hold data about an account, and where the export carries it. */
const EXPORTED_IN: Record<string, string> = {
  accounts: "account",
  accounts_by_email: "account (index)",
  accounts_by_slug: "account (index)",
  account_seen: "sign_in",
  sessions: "devices",
  sessions_by_account: "devices (index)",
  links: "links",
  links_by_address: "links (index)",
  outbox: "mail, channels (queued posts), status_notes (the followers' mail while it is written)",
  rate: "limits",
  journal: "journal",
  journal_by_account: "journal (index)",
  search: "account, journal, modules (word index of their texts)",
  search_terms: "account, journal (the word index's dictionary: words of their texts)",
  avatar_chunks: "account (avatar link and sha256)",
  applications: "applications",
  applications_by_account: "applications (index)",
  applications_open: "applications (index)",
  invites: "invitations, invitations_received",
  invites_by_inviter: "invitations (index)",
  invites_by_address: "invitations_received (index)",
  services: "services",
  services_by_id: "services (index)",
  api_keys: "api_keys",
  api_key_hashes: "api_keys (the key, hashed)",
  api_key_count: "api_keys (count)",
  ping_key: "ping_key",
  ping_keys: "ping_key (the key, hashed)",
  service_count: "services (count)",
  service_due: "services (schedule index)",
  hooks: "services (heartbeat key, stored as a hash)",
  beats: "services (last beat)",
  beat_starts: "services (last_start)",
  beat_fails: "services (last_failure)",
  service_events: "services (events)",
  service_changes: "services (changes)",
  service_days: "services (days)",
  channels: "channels",
  status_pages: "status_page",
  status_notes: "status_notes",
  maintenance: "maintenance_windows",
  alert_groups: "alert_settings (pending)",
  alert_group_due: "alert_settings (pending: its due time)",
  alert_grouping: "alert_settings (grouping)",
  followers: "status_followers (the count only: the addresses are the followers')",
  follower_count: "status_followers (count)",
  follow_tokens: "status_followers (their links, hashed)",
  service_badges: "services (badge_path)",
  files: "files",
  file_chunks: "files (link and sha256)",
  file_usage: "files (totals)",
  file_uploads: "files (uploads under way)",
  modules: "modules",
  modules_by_account: "modules (index)",
  points: "points",
  points_by_account: "points (index)",
  requests: "requests",
  requests_by_address: "requests (index)",
  proposals: "proposals",
  proposal_data: "proposals",
  proposals_by_address: "proposals (index)",
  proposals_by_status: "proposals (index)",
  proposal_slugs: "proposals (the slug a published proposal holds)",
  trail: "trail",
  trail_by_account: "trail (index)",
};

/**
 * Values a record may hold that the export does not repeat, as `prefix:path` (list indexes as
 * `*`), and why. Everything else (every text, every time) must appear in the export.
 */
const NOT_REPEATED: Record<string, string> = {
  "followers:email": "a follower's address is theirs, not the page owner's: counted only",
  "followers:created": "when a follower asked: theirs, counted only",
  "followers:confirmed": "when a follower confirmed: theirs, counted only",
  "follow_tokens:purpose": "a follower's link: theirs (hashed), counted only",
  "follow_tokens:expires": "a follower's link: theirs (hashed), counted only",
  "proposals:decisions.*.actor": "which team member decided: the team's own record (the " +
    "decision, its time and reason are exported)",
};

/** Key parts that name a kind of record, not data (the search index's kinds). */
const KINDS = new Set(["person", "journal", "module"]);

/** Link secrets in queued mail are withheld from the export, as kv/parts/mail.ts does. */
const withoutSecrets = (s: string) =>
  s.replace(/([?&](?:verify|key|token)=)[A-Za-z0-9_-]+/g, "$1(withheld)");

type Leaf = { path: string; value: unknown };

function leaves(v: unknown, path = ""): Leaf[] {
  if (v instanceof Uint8Array || v instanceof Deno.KvU64 || v === null || typeof v !== "object") {
    return [{ path, value: v }];
  }
  return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) =>
    leaves(x, path ? `${path}.${k}` : k)
  );
}

const isHash = (s: string) => /^[0-9a-f]{24,64}$/.test(s);
const isTime = (n: unknown): n is number =>
  typeof n === "number" && n > Date.UTC(2020, 0) && n < Date.UTC(2100, 0);

interface Needles {
  id: number;
  strings: string[];
}

/** Does a key or value name the account or hold one of its values? */
function names(v: unknown, n: Needles): boolean {
  if (v instanceof Uint8Array) return names(new TextDecoder().decode(v), n);
  if (typeof v === "number") return v === n.id;
  if (typeof v === "bigint") return v === BigInt(n.id);
  if (typeof v === "string") {
    const s = v.toLowerCase();
    return new RegExp(`(^|\\D)${n.id}(\\D|$)`).test(s) || n.strings.some((x) => s.includes(x));
  }
  if (v && typeof v === "object" && !(v instanceof Deno.KvU64)) {
    return Object.values(v).some((x) => names(x, n));
  }
  return false;
}

async function scan(kv: Deno.Kv, n: Needles): Promise<Deno.KvEntry<unknown>[]> {
  const found: Deno.KvEntry<unknown>[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    if (e.key.some((k) => names(k, n)) || names(e.value, n)) found.push(e);
  }
  return found;
}

const EMAIL = "adelaide@example.org";
/** Words that occur only in what the account wrote (lower-case). */
const WORDS = [
  ...ada.MADE_UP,
  "gallimaufry",
  "snollygoster",
  "bumfuzzle",
  "cattywampus",
  "lollygag",
];

Deno.test("data rights: the export holds every KV record about the account; erasure leaves none", () =>
  expectLog([/"msg":"mail delivery failed".*"reason":"relay down"/], async () => {
    await using t = await testApp({
      config: { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" },
    });
    const owner = await t.account("own@example.org", { name: "Owen Owner", roles: ["owner"] });
    const carl = await t.account("carl@example.org", { name: "Carl Inviter" });
    await seedModule(t, "pond-life", [owner.account.id]);

    // Carl invites Adelaide; account ids are long enough to be unmistakable in the scan.
    const joined = await ada.acceptInvitation(t, carl.token, "Come and lollygag with us");
    const id = joined.id;
    assert.ok(id > 1_000_000, "a time-based id, unmistakable in the scan");
    let token = joined.token;

    // Profile and picture.
    await ada.fillProfile(t, token);
    // Journal, public and private.
    await ada.writeJournal(t, token, "Splendiferous note");
    // An application, approved: the account becomes a contributor.
    await ada.approvedApplication(t, token, "Application about gallimaufry pedagogy");
    // An invitation sent.
    await ada.inviteDora(t, token, "Hello from snollygoster land");
    // A watched service with a heartbeat.
    await ada.heartbeatWith(t, token, "bumfuzzle");
    // A published status page with an incident note and a follower.
    const page = await t.req("PUT", "/api/me/status-page", { token, body: { enabled: true } });
    ok(page);
    const api = `/api${page.body.path}`;
    ok(await t.req("POST", `${api}/follow`, { body: { email: "fan@x.test" } }), 202);
    const link = t.mail.last("fan@x.test")!.text.match(/confirm\?token=([0-9.A-Za-z_-]+)/)!;
    ok(await t.req("POST", `${api}/confirm`, { body: { token: link[1] } }));
    ok(
      await t.req("POST", "/api/me/status-page/notes", {
        token,
        body: { kind: "identified", text: "Skedaddle outage" },
      }),
      201,
    );
    // A key of the Healthchecks-compatible API, and a check made through it (tags, grace).
    const apiKey = await t.req("POST", "/api/me/api-keys", { token, body: { name: "Cronjobs" } });
    ok(apiKey, 201);
    ok(
      await t.req("POST", "/api/v3/checks/", {
        headers: { "X-Api-Key": apiKey.body.key },
        raw: JSON.stringify({
          name: "Gobbledygook job",
          slug: "gobbledygook-job",
          tags: "nightly",
          grace: 120,
        }),
      }),
      201,
    );
    // A ping key for Healthchecks' slug addresses, and a ping by slug through it.
    const pingKey = await t.req("POST", "/api/me/ping-key", { token });
    ok(pingKey);
    ok(await t.req("POST", `/ping/${pingKey.body.ping_key}/gobbledygook-job`));
    // A maintenance window over her services' group.
    ok(
      await t.req("POST", "/api/me/maintenance", {
        token,
        body: { name: "Kerfuffle window", groups: ["Jobs"], cron: "0 2 * * 0", minutes: 90 },
      }),
      201,
    );
    // Two heartbeats at one place fail: their alerts wait together; then grouping is turned off
    // (the waiting group stays until sent).
    for (const name of ["Rigmarole router", "Hullabaloo printer"]) {
      const made = await t.req("POST", "/api/me/services", {
        token,
        body: { name, check: "webhook:", place: "LAN", interval: 60 },
      });
      ok(made);
      const hook = new URL(made.body.hook_url).pathname;
      ok(await t.req("POST", hook));
      ok(await t.req("POST", `${hook}/fail`, { body: { status: "Brouhaha down" } }));
    }
    await runDueChecks(t.deps); // a failure makes its heartbeat due at once
    ok(await t.req("PATCH", "/api/me/alert-settings", { token, body: { grouping: false } }));
    // A stored file.
    const bytes = await ada.storeNotes(t, token);
    // A request through the public form, while the relay is down: her receipt and the team's
    // notice (which names her address) wait in the outbox.
    t.mail.failWith = new Error("relay down");
    await ada.requestTool(t, "Cattywampus tool");
    t.mail.failWith = null;
    // Proposals: published with keep, published with remove, one confirmed and waiting.
    for (
      const [title, attribution] of [["Marmalade pedagogy", "keep"], ["Widget gardening", "remove"]]
    ) {
      const trail = `How ${title} came about`;
      await ada.publish(t, owner.token, await ada.propose(t, token, title, { attribution, trail }));
    }
    await ada.propose(t, token, "Clandestine draft", { trail: "How Clandestine draft came about" });
    // A point, and an edit of a module the owner made her a contributor of.
    ok(await t.req("POST", "/api/modules/pond-life/point", { token }));
    ok(
      await t.req("POST", "/api/me/modules/pond-life/contributors", {
        token: owner.token,
        body: { email: EMAIL },
      }),
    );
    ok(
      await t.req("PATCH", "/api/me/modules/pond-life", {
        token,
        body: { lede: "Children sample a pond in every season." },
      }),
    );
    // More devices; then a sign-in link whose mail the relay refuses: it stays queued, and the
    // link stays live.
    await t.signIn(EMAIL);
    token = (await t.signIn(EMAIL)).token;
    t.mail.failWith = new Error("relay down");
    ok(
      await t.req("POST", "/api/verify/request", {
        body: { email: EMAIL, purpose: "login", age_ok: true },
        from: "198.51.100.200",
      }),
      202,
    );
    t.mail.failWith = null;

    // --- The export against the scan.
    const r = await t.req("GET", "/api/me/export", { token });
    ok(r);
    const d = r.body;
    const text = r.text.toLowerCase();
    assert.equal(d.devices.length, 3);
    for (const dev of d.devices) {
      assert.deepEqual(Object.keys(dev).sort(), ["created", "expires", "id", "last_used", "via"]);
    }
    assert.equal(d.sign_in.last, new Date(t.clock.now()).toISOString());
    // Keys: that each exists, never the key itself.
    assert.deepEqual(d.ping_key, { exists: true, created: new Date(t.clock.now()).toISOString() });
    assert.ok(!r.text.includes(pingKey.body.ping_key), "the ping key is not repeated");
    assert.deepEqual(
      d.api_keys.map((k: { name: string; exists: boolean }) => [k.name, k.exists]),
      [["Cronjobs", true]],
    );
    assert.ok(!r.text.includes(apiKey.body.key), "the API key is not repeated");
    assert.deepEqual(
      d.invitations_received.map((i: { inviter: { name: string }; message: string }) => [
        i.inviter.name,
        i.message,
      ]),
      [["Carl Inviter", "Come and lollygag with us"]],
    );
    assert.equal(d.invitations_received[0].accepted, new Date(t.clock.now()).toISOString());
    assert.deepEqual(d.links.map((l: { purpose: string }) => l.purpose), ["login"]);
    assert.deepEqual(d.mail.map((m: { to: string }) => m.to).sort(), [
      EMAIL,
      EMAIL,
      "team@inbox.test",
    ]);
    const signInMail = d.mail.find((m: { text: string }) => m.text.includes("verify="));
    assert.match(signInMail.text, /verify=\(withheld\)/);
    // Counters under the account's id (journal) and under its address (link requests).
    const rules = d.limits.map((l: { rule: string }) => l.rule);
    for (const rule of ["journal", "link_address", "request_receipt", "proposal_address"]) {
      assert.ok(rules.includes(rule), `limits hold ${rule}: ${rules}`);
    }
    assert.equal(d.files[0].sha256, sha256hex(bytes));
    assert.match(d.account.avatar.sha256, /^[0-9a-f]{64}$/);
    const pic = await t.app.request(d.account.avatar.url);
    assert.equal(pic.status, 200);
    assert.equal(d.account.avatar.sha256, sha256hex(new Uint8Array(await pic.arrayBuffer())));
    // The header describes every section the file holds, and nothing else.
    assert.deepEqual(Object.keys(d.header.sections).sort(), Object.keys(d).sort());
    for (const [name, info] of Object.entries(d.header.sections)) {
      const i = info as { what: string; kept: string } | null;
      assert.ok(i && i.what.length > 10 && i.kept.length > 3, `header describes ${name}`);
    }
    assert.match(d.header.sections.requests.kept, /180 days/);
    assert.match(d.header.sections.limits.kept, /one hour/i);
    assert.match(d.header.sections.mail.kept, /eight days/);
    assert.match(d.header.sections.proposals.kept, /seven days/);

    const hashes = [EMAIL, String(id)].flatMap((w) =>
      [...Object.values(RULES), RECEIPTS].map((rule) => sha256hex(`${rule.name}:${w}`).slice(0, 32))
    );
    const needles: Needles = {
      id,
      strings: [EMAIL, await addressHash(EMAIL), "adelaide-quuxley", ...hashes, ...WORDS],
    };
    const found = await scan(t.kv, needles);
    const missing: string[] = [];
    const chunks = new Map<string, Uint8Array[]>();
    const exportedLines = new Set(d.trail.map((l: { hash: string }) => l.hash));
    for (const e of found) {
      const where = JSON.stringify(e.key);
      const prefix = String(e.key[0]);
      if (!(prefix in EXPORTED_IN)) missing.push(`${where}: no export section for "${prefix}"`);
      if (prefix === "trail") {
        // Lines naming the account are in its trail; others were found by a module's slug made
        // from one of its titles (the catalogue's lines; the slug is in the proposal exported).
        const line = e.value as { actor: string; subject: string | null; hash: string };
        const ref = `account:${id}`;
        if (line.actor === ref || line.subject === ref) {
          if (!exportedLines.has(line.hash)) missing.push(`${where}: trail line`);
        } else if (!line.subject?.startsWith("module:") || !text.includes(line.subject.slice(7))) {
          missing.push(`${where}: trail line about ${line.subject}`);
        }
        continue;
      }
      for (const k of e.key.slice(1)) {
        if (
          typeof k === "string" && !isHash(k) && !KINDS.has(k) && !text.includes(k.toLowerCase())
        ) missing.push(`${where}: key part "${k}"`);
      }
      for (const { path, value } of leaves(e.value)) {
        if (`${prefix}:${path.replace(/\.\d+(?=\.|$)/g, ".*")}` in NOT_REPEATED) continue;
        if (value instanceof Uint8Array) {
          const group = JSON.stringify(e.key.slice(0, -1));
          chunks.set(group, [...chunks.get(group) ?? [], value]);
        } else if (typeof value === "string") {
          const shown = JSON.stringify(withoutSecrets(value)).slice(1, -1).toLowerCase();
          if (value.length > 2 && !isHash(value) && !text.includes(shown)) {
            missing.push(`${where} ${path}: "${value}"`);
          }
        } else if (isTime(value) && !text.includes(new Date(value).toISOString().toLowerCase())) {
          missing.push(`${where} ${path}: time ${new Date(value).toISOString()}`);
        }
      }
    }
    for (const [group, parts] of chunks) {
      const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      parts.reduce((at, p) => (all.set(p, at), at + p.length), 0);
      if (!text.includes(sha256hex(all))) missing.push(`${group}: bytes without their sha256`);
    }
    assert.deepEqual(missing, [], `${found.length} KV entries about the account`);
    // Every area took part: the scan saw a record of each kind the account made.
    const prefixes = new Set(found.map((e) => String(e.key[0])));
    for (
      const p of [
        "sessions",
        "account_seen",
        "invites",
        "links",
        "outbox",
        "rate",
        "beats",
        "file_chunks",
        "avatar_chunks",
        "proposal_data",
        "points",
        "modules",
        "status_notes",
        "maintenance",
        "alert_groups",
        "alert_group_due",
        "alert_grouping",
        "followers",
        "follow_tokens",
        "ping_key",
        "ping_keys",
        "api_keys",
      ]
    ) {
      assert.ok(prefixes.has(p), `scan found ${p}`);
    }

    // --- Erasure, then the same scan.
    const gone = await t.req("DELETE", "/api/me", { token });
    ok(gone);
    assert.deepEqual(gone.body, { ok: true, kept: 1, unpublished: 1, deleted: 1 });
    const left = await scan(t.kv, needles);
    const allowed = (e: Deno.KvEntry<unknown>) => {
      const line = `${JSON.stringify(e.key)} ${JSON.stringify(e.value)}`.toLowerCase();
      // Trail lines keep the account's id (and nothing else of it) so the chain verifies.
      // Lines about the kept module name it by its slug, made from the title she wrote.
      if (e.key[0] === "trail") {
        const l = e.value as { subject: string | null };
        const rest = l.subject?.startsWith("module:")
          ? line.replace(JSON.stringify(l.subject), "")
          : line;
        return !needles.strings.some((s) => rest.includes(s));
      }
      // The module kept under the name (attribution keep), its proposal (address blanked) with
      // its data and slug claim, and its search words. Catalogue texts she wrote stay with the
      // modules (docs/api.md), so they are not among the WORDS.
      if (line.includes(EMAIL) || line.includes(needles.strings[1])) return false;
      return line.startsWith('["modules","marmalade-pedagogy"]') ||
        line.startsWith('["proposal_slugs","marmalade-pedagogy"]') ||
        (/^\["proposal(s|_data)",/.test(line) && line.includes("marmalade")) ||
        (line.startsWith('["search","module",') && line.includes("marmalade-pedagogy"));
    };
    const wrong = left.filter((e) => !allowed(e)).map((e) => JSON.stringify(e.key));
    assert.deepEqual(wrong, []);
    assert.equal((await verifyTrail(t.kv, true)).ok, true);
  }));
