/**
 * Post/Redirect/Get on every form of the site, walked as a browser would: open the page that
 * holds the form, send it as the page shows it (with a few fields filled in), follow the 303,
 * then reload the page it landed on and go Back to the form's page. A reload or Back after a
 * 303 is a GET: nothing is stored twice (the KV is the same before and after), and what the form
 * made exists once. Every POST route of the pages is walked (the list comes from the page
 * areas themselves, so a new form cannot be left out); the one exception is the file upload,
 * which is not a form but a fetch of the files page's script, answering JSON.
 */
import assert from "node:assert/strict";
import { Image } from "imagescript";
import { dumpKv, expectLog, fakeResolver, type TestApp, testApp } from "./_helpers.ts";
import { atomic, commit } from "../kv/_atomic.ts";
import { putNewIdentity } from "../kv/accounts/identities.ts";
import { credentialHash } from "../kv/accounts/passkeys.ts";
import { seedModule } from "./_catalogue.ts";
import { storeNotes } from "./_account_fixture.ts";
import { proposal } from "./_forms_fixtures.ts";
import { renewOwnerClaim } from "../kv/accounts/owner_claim.ts";
import { formFields, pagePosts } from "./_form_fields.ts";

const BASE = "http://test.local";
const NOT_FORMS = new Set([
  "/me/files/upload",
  // The passkey pages' scripts fetch options (JSON); the two forms post a browser's WebAuthn
  // answer, which only a browser makes: tests/sign_in_browser_test.ts walks them, and their
  // flow is used once, so a reload's second post is refused (tests/passkeys_test.ts).
  "/sign-in/passkey/options",
  "/me/passkeys/options",
  "/sign-in/passkey",
  "/me/passkeys",
]);

/** A browser with one cookie, walking the pages of an in-process app. */
function browser(t: TestApp, cookie = "") {
  const covered = new Set<string>();
  const get = async (path: string) => {
    const res = await t.app.request(`${BASE}${path}`, { headers: cookie ? { cookie } : {} });
    return { status: res.status, text: await res.text(), location: res.headers.get("location") };
  };
  return {
    covered,
    get cookie() {
      return cookie;
    },
    set cookie(v: string) {
      cookie = v;
    },
    get,
    /**
     * Opens `page`, sends the form of `action` with `fill` over its shown values (a File for a
     * file field), follows the 303, reloads where it landed and goes Back to `page`. Answers
     * the page it landed on.
     */
    async submit(
      page: string,
      action: string,
      fill: Record<string, string | File> = {},
      opts: { route?: string; lands?: RegExp } = {},
    ) {
      const shown = await get(page);
      assert.equal(shown.status, 200, `${page}: ${shown.text.slice(0, 300)}`);
      const fields = formFields(shown.text, action).filter(([k]) => !(k in fill));
      const multipart = Object.values(fill).some((v) => v instanceof File);
      let body: BodyInit;
      if (multipart) {
        const fd = new FormData();
        for (const [k, v] of fields) fd.append(k, v);
        for (const [k, v] of Object.entries(fill)) fd.append(k, v);
        body = fd;
      } else {
        body = new URLSearchParams([...fields, ...Object.entries(fill) as [string, string][]]);
      }
      const res = await t.app.request(`${BASE}${action}`, {
        method: "POST",
        headers: { origin: BASE, ...(cookie ? { cookie } : {}) },
        body,
      });
      const text = await res.text();
      const said = [...text.matchAll(/<(?:p|li) class="error"[^>]*>([^<]*)|<main[^]*?<p>([^<]*)/g)]
        .map((m) => m[1] ?? m[2]);
      assert.equal(res.status, 303, `${action}: ${res.status} ${said.join(" | ")}`);
      const set = res.headers.get("set-cookie");
      if (set?.startsWith("session=")) {
        const value = set.match(/^session=([^;]*)/)![1];
        cookie = value ? `session=${value}` : "";
      }
      const to = res.headers.get("location")!;
      if (opts.lands) assert.match(to, opts.lands, action);
      const landed = await get(to);
      assert.equal(landed.status, 200, `${action} -> ${to}: ${landed.status}`);
      // Reload and Back: GETs only, so nothing changes, and the result is still shown.
      const before = await dumpKv(t.kv);
      const reloaded = await get(to);
      assert.equal(reloaded.status, 200);
      assert.equal(reloaded.text, landed.text, `${to}: a reload shows the same page`);
      assert.equal((await get(page)).status < 500, true);
      assert.equal(await dumpKv(t.kv), before, `${action}: reload and Back store nothing`);
      covered.add(opts.route ?? action);
      return landed.text;
    },
  };
}

/** The token of a status page's mailed link (confirm or unfollow). */
const linkIn = (text: string, what: string) =>
  text.match(new RegExp(`/status/[a-z0-9-]+/${what}\\?token=([0-9]+\\.[A-Za-z0-9_-]+)`))![1];

async function listOf(t: TestApp, path: string, token: string) {
  const r = await t.req("GET", path, { token });
  assert.equal(r.status, 200, r.text);
  return r.body.items as { id: number; paused?: boolean; methods?: string; kind?: string }[];
}

async function png(): Promise<File> {
  const bytes = await new Image(8, 8).fill(0x3366ccff).encode();
  return new File([new Uint8Array(bytes)], "me.png", { type: "image/png" });
}

Deno.test("reload and Back after every form: one record each, nothing sent twice", async () => {
  await using t = await testApp({
    config: { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" },
    resolver: fakeResolver({ "hooks.example.org": ["93.184.216.34"] }),
  });
  const olga = await t.account("olga@example.org", { name: "Olga", roles: ["owner"] });
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const me = browser(t, `session=${olga.token}`);
  const her = browser(t, `session=${ada.token}`);
  const guest = browser(t);
  const walked = [me.covered, her.covered, guest.covered];

  // ---- public forms ----
  await guest.submit("/sign-in", "/sign-in", { email: "new@example.org", age_ok: "on" });
  const token = t.mail.linkToken("new@example.org");
  await guest.submit(`/me?verify=${token}`, "/me/verify");
  assert.match(guest.cookie, /^session=/);
  await guest.submit("/request", "/request", {
    name: "Grace Hopper",
    email: "grace@example.org",
    kind: "module",
    text: "A module about compilers, please.",
  });
  const requests = await t.req("GET", "/api/requests", {
    headers: { "x-service-token": t.deps.config.serviceToken! },
  });
  assert.equal(requests.body.items.length, 1);
  const p = proposal();
  await guest.submit("/contribute", "/contribute", {
    name: p.name,
    email: p.email,
    title: p.title,
    summary: p.summary,
    licence: "CC0-1.0",
    file_label_0: "Notes",
    file_url_0: "https://example.org/notes.pdf",
  });
  await guest.submit("/me", "/sign-out");
  assert.equal(guest.cookie, "");

  // ---- the account's own pages ----
  await me.submit("/me/profile", "/me/profile", { about: "I run the site." });
  await me.submit("/me/profile", "/me/avatar", { avatar: await png() });
  await me.submit("/me/profile", "/me/avatar/remove");

  await me.submit("/me/journal", "/me/journal", { text: "First entry." });
  const [entry] = await listOf(t, "/api/me/journal", olga.token);
  assert.equal((await listOf(t, "/api/me/journal", olga.token)).length, 1);
  await me.submit(`/me/journal/${entry.id}`, `/me/journal/${entry.id}`, { text: "Changed." }, {
    route: "/me/journal/:id",
  });
  await me.submit("/me/journal", `/me/journal/${entry.id}/visibility`, {}, {
    route: "/me/journal/:id/visibility",
  });
  await me.submit("/me/journal", `/me/journal/${entry.id}/delete`, {}, {
    route: "/me/journal/:id/delete",
  });

  // Services: a heartbeat's address after the redirect, the same on a reload, one service.
  const added = await me.submit("/me/services/new?kind=webhook", "/me/services", {
    kind: "webhook",
    name: "Nightly backup",
    check: "",
  }, { lands: /^\/me\/services\/\d+\/hook$/ });
  const hook = added.match(/id="hook-url"[^>]*value="([^"]+)"/)?.[1];
  assert.match(hook ?? "", /\/api\/hooks\/[A-Za-z0-9_-]{43}$/);
  const services = await listOf(t, "/api/me/services", olga.token);
  assert.equal(services.length, 1, "one service after the add, its reload and Back");
  const hb = services[0].id;
  const beat = await t.req("POST", new URL(hook!).pathname);
  assert.equal(beat.status, 200, "the address shown works");
  const renewed = await me.submit(`/me/services/${hb}`, `/me/services/${hb}/rotate`, {}, {
    route: "/me/services/:id/rotate",
  });
  assert.notEqual(renewed.match(/id="hook-url"[^>]*value="([^"]+)"/)?.[1], hook);
  await me.submit(`/me/services/${hb}`, `/me/services/${hb}`, { name: "Backup" }, {
    route: "/me/services/:id",
  });
  // Pause and resume (issue 24): the page offers the one that applies.
  await me.submit(`/me/services/${hb}`, `/me/services/${hb}/pause`, {}, {
    route: "/me/services/:id/pause",
  });
  assert.equal((await listOf(t, "/api/me/services", olga.token))[0].paused, true);
  await me.submit(`/me/services/${hb}`, `/me/services/${hb}/resume`, {}, {
    route: "/me/services/:id/resume",
  });
  assert.equal((await listOf(t, "/api/me/services", olga.token))[0].paused, false);
  // Other products' addresses (issue 32): the ping key and a push address shown once, POST
  // only, and an import (form, preview, confirm).
  const keyPage = await me.submit("/me/ping-key", "/me/ping-key");
  assert.match(keyPage, /class="secret">[A-Za-z0-9_-]{22}</);
  await me.submit(`/me/services/${hb}`, `/me/services/${hb}/methods`, {}, {
    route: "/me/services/:id/methods",
  });
  assert.equal((await listOf(t, "/api/me/services", olga.token))[0].methods, "POST");
  const pushPage = await me.submit(`/me/services/${hb}`, `/me/services/${hb}/push`, {}, {
    route: "/me/services/:id/push",
  });
  assert.match(pushPage, /\/api\/push\/[A-Za-z0-9]{32}/);
  const exported = {
    checks: [{ name: "Imported job", slug: "imported-job", timeout: 3600, grace: 300 }],
  };
  const preview = await me.submit("/me/services/import", "/me/services/import", {
    data: JSON.stringify(exported),
  }, { lands: /^\/me\/services\/import\/preview$/ });
  assert.match(preview, /Imported job/);
  await me.submit("/me/services/import/preview", "/me/services/import/confirm");
  const imported = await listOf(t, "/api/me/services", olga.token);
  assert.equal(imported.length, 2, "the import made its one service once");
  await me.submit("/me/services/new?kind=tcp", "/me/services", {
    kind: "tcp",
    name: "Mail relay",
    check: "127.0.0.1:9",
  });
  const tcp = (await listOf(t, "/api/me/services", olga.token)).find((s) => s.kind === "tcp")!.id;
  await me.submit(`/me/services/${tcp}`, `/me/services/${tcp}/check`, {}, {
    route: "/me/services/:id/check",
  });
  await me.submit(`/me/services/${tcp}`, `/me/services/${tcp}/badge`, {}, {
    route: "/me/services/:id/badge",
  });
  await me.submit("/me/channels/new/webhook", "/me/channels/new/webhook", {
    name: "Team chat",
    url: "https://hooks.example.org/in",
  }, { route: "/me/channels/new/:kind" });
  await me.submit("/me/channels", "/me/channels/apprise", {
    name: "Phone",
    apprise: "tgram://123456789:AAE-reload_token_abcdefghij/42",
  });
  const channels = await listOf(t, "/api/me/channels", olga.token);
  assert.equal(channels.length, 2);
  const ch = channels[0].id;
  await me.submit(`/me/services/${tcp}`, `/me/services/${tcp}/channels`, {
    channel: String(ch),
  }, { route: "/me/services/:id/channels" });
  // The other channel, now off that service, applied to all again; "use for new services" off.
  const phone = channels[1].id;
  await me.submit("/me/channels", `/me/channels/${phone}/apply`, {}, {
    route: "/me/channels/:id/apply",
  });
  await me.submit("/me/channels", `/me/channels/${phone}/for-new`, {}, {
    route: "/me/channels/:id/for-new",
  });
  const after = await listOf(t, "/api/me/channels", olga.token) as unknown as {
    id: number;
    services: number;
    for_new_services: boolean;
  }[];
  const applied = after.find((c) => c.id === phone)!;
  assert.equal(applied.for_new_services, false);
  assert.equal(applied.services, (await listOf(t, "/api/me/services", olga.token)).length);
  // No receiver answers here (the test app's connector refuses): the failed test is logged.
  await expectLog(
    [/"msg":"channel delivery failed"/],
    () =>
      me.submit("/me/channels", `/me/channels/${ch}/test`, {}, {
        route: "/me/channels/:id/test",
      }),
  );
  await me.submit("/me/channels", `/me/channels/${ch}/delete`, {}, {
    route: "/me/channels/:id/delete",
  });
  // A key of the Healthchecks-compatible API, made and revoked.
  await me.submit("/me/api-keys", "/me/api-keys", { name: "Cron box" });
  const apiKeys = await listOf(t, "/api/me/api-keys", olga.token);
  assert.equal(apiKeys.length, 1);
  await me.submit("/me/api-keys", `/me/api-keys/${apiKeys[0].id}/revoke`, {}, {
    route: "/me/api-keys/:id/revoke",
  });
  // The alert grouping switch, sent as shown (ticked): it stays on.
  await me.submit("/me/channels", "/me/channels/grouping");
  const settings = await t.req("GET", "/api/me/alert-settings", { token: olga.token });
  assert.equal(settings.body.grouping, true);
  await me.submit("/me/status-page", "/me/status-page", { enabled: "on", title: "Olga's" });
  // Its notes, and a follower who confirms and leaves by the mailed links.
  await me.submit("/me/status-page", "/me/status-page/notes", {
    kind: "note",
    text: "Maintenance tonight.",
  });
  const slug = (await me.get("/me/status-page")).text.match(/href="\/status\/([a-z0-9-]+)"/)![1];
  const fan = "fan@example.org";
  await guest.submit(`/status/${slug}`, `/status/${slug}/follow`, { email: fan }, {
    route: "/status/:slug/follow",
  });
  const confirm = linkIn(t.mail.last(fan)!.text, "confirm");
  await guest.submit(`/status/${slug}/confirm?token=${confirm}`, `/status/${slug}/confirm`, {}, {
    route: "/status/:slug/confirm",
  });
  await me.submit("/me/status-page", "/me/status-page/notes", {
    kind: "note",
    text: "Back to normal.",
  });
  const out = linkIn(t.mail.last(fan)!.text, "unfollow");
  await guest.submit(`/status/${slug}/unfollow?token=${out}`, `/status/${slug}/unfollow`, {}, {
    route: "/status/:slug/unfollow",
  });
  const note = (await me.get("/me/status-page")).text
    .match(/action="\/me\/status-page\/notes\/(\d+)\/delete"/)![1];
  await me.submit("/me/status-page", `/me/status-page/notes/${note}/delete`, {}, {
    route: "/me/status-page/notes/:id/delete",
  });
  // Another status page at an address of its own: made, saved, deleted.
  await me.submit("/me/status-pages", "/me/status-pages", { slug: "olga-lab", title: "Lab" });
  const [, lab] = await listOf(t, "/api/me/status-pages", olga.token);
  await me.submit(`/me/status-pages/${lab.id}`, `/me/status-pages/${lab.id}`, {
    enabled: "on",
  }, { route: "/me/status-pages/:id" });
  await me.submit(`/me/status-pages/${lab.id}`, `/me/status-pages/${lab.id}/delete`, {}, {
    route: "/me/status-pages/:id/delete",
  });
  assert.equal((await listOf(t, "/api/me/status-pages", olga.token)).length, 1);
  // A maintenance window over the service, and its delete button.
  await me.submit("/me/maintenance", "/me/maintenance", {
    name: "Switch swap",
    kind: "once",
    [`s-${tcp}`]: "on",
    tz: "UTC",
    from: "2026-03-03T10:00",
    to: "2026-03-03T11:00",
  });
  const window = (await me.get("/me/maintenance")).text
    .match(/action="\/me\/maintenance\/(\d+)\/delete"/)![1];
  await me.submit("/me/maintenance", `/me/maintenance/${window}/delete`, {}, {
    route: "/me/maintenance/:id/delete",
  });
  // Started now for an hour, then ended now: one record, running, then over.
  await me.submit("/me/maintenance", "/me/maintenance", {
    name: "Reboot",
    [`s-${tcp}`]: "on",
    start: "now",
    duration: "60",
  });
  const running = (await me.get("/me/maintenance")).text
    .match(/action="\/me\/maintenance\/(\d+)\/end"/)![1];
  await me.submit("/me/maintenance", `/me/maintenance/${running}/end`, {}, {
    route: "/me/maintenance/:id/end",
  });
  // An incident (issue 47): opened, an update, deleted; one record each.
  const opened = await me.submit("/me/incidents", "/me/incidents", {
    title: "Switch swap overran",
    impact: "minor",
    state: "investigating",
    text: "The swap takes longer than planned.",
  }, { lands: /^\/me\/incidents\/\d+$/ });
  const incident = opened.match(/action="\/me\/incidents\/(\d+)\/updates"/)![1];
  assert.equal((await listOf(t, "/api/me/incidents", olga.token)).length, 1);
  await me.submit(`/me/incidents/${incident}`, `/me/incidents/${incident}/updates`, {
    state: "resolved",
    text: "Done.",
  }, { route: "/me/incidents/:id/updates" });
  const [only] = await listOf(t, "/api/me/incidents", olga.token) as unknown as {
    updates: unknown[];
  }[];
  assert.equal(only.updates.length, 2, "one update, whatever the reloads");
  await me.submit(`/me/incidents/${incident}`, `/me/incidents/${incident}/delete`, {}, {
    route: "/me/incidents/:id/delete",
  });
  // The monthly report mail (issue 47): on, then off, once each whatever the reloads.
  await me.submit("/me/reports", "/me/reports/mail/on");
  assert.deepEqual((await t.req("GET", "/api/me/reports/mail", { token: olga.token })).body, {
    monthly: true,
  });
  await me.submit("/me/reports", "/me/reports/mail/off");
  await me.submit(`/me/services/${tcp}`, `/me/services/${tcp}/delete`, {}, {
    route: "/me/services/:id/delete",
  });

  // Files (stored through the API: the upload is the page script's fetch, not a form).
  await storeNotes(t, olga.token);
  const [file] = await listOf(t, "/api/me/files", olga.token);
  await me.submit("/me/files", `/me/files/${file.id}`, { name: "notes.txt" }, {
    route: "/me/files/:id",
  });
  await me.submit("/me/files", `/me/files/${file.id}/visibility`, {}, {
    route: "/me/files/:id/visibility",
  });
  await me.submit("/me/files", `/me/files/${file.id}/delete`, {}, {
    route: "/me/files/:id/delete",
  });

  // Standing: Ada applies, Olga invites and decides.
  await her.submit("/me/standing", "/me/standing/apply", {
    text: "I have written three modules.",
  });
  await me.submit("/me/standing", "/me/standing/invite", {
    email: "dora@example.org",
    message: "Come and help.",
  });
  const apps = await t.req("GET", "/team/applications", { headers: { cookie: me.cookie } });
  const appId = apps.text.match(/action="\/team\/applications\/(\d+)"/)![1];
  await me.submit("/team/applications", `/team/applications/${appId}`, {
    outcome: "approved",
    reason: "Welcome aboard.",
  }, { route: "/team/applications/:id" });

  // The team's queues.
  const reqId = (await me.get("/team/requests")).text.match(/action="\/team\/requests\/(\d+)"/)![1];
  await me.submit("/team/requests", `/team/requests/${reqId}`, {}, {
    route: "/team/requests/:id",
  });
  const made = await t.req("POST", "/api/contributions", {
    token: ada.token,
    body: proposal({ title: "Looms and cards" }),
  });
  assert.equal(made.status, 201, made.text);
  await me.submit(`/team/proposals/${made.body.id}`, `/team/proposals/${made.body.id}`, {
    status: "reviewing",
    reason: "Looking at it.",
  }, { route: "/team/proposals/:id" });
  await me.submit(`/team/proposals/${made.body.id}`, `/team/proposals/${made.body.id}/links`, {}, {
    route: "/team/proposals/:id/links",
  });
  await her.submit("/me/work", `/me/work/proposals/${made.body.id}/attribution`, {
    attribution: "remove",
  }, { route: "/me/work/proposals/:id/attribution" });
  await her.submit("/me/work", `/me/work/proposals/${made.body.id}/withdraw`, {
    reason: "Not ready yet.",
  }, { route: "/me/work/proposals/:id/withdraw" });

  // A module Olga contributes to: edit it, add Ada, remove her.
  await seedModule(t, "pond-life", [olga.account.id]);
  await me.submit("/me/work/modules/pond-life", "/me/work/modules/pond-life", {
    lede: "Ponds all year round.",
  }, { route: "/me/work/modules/:slug" });
  await me.submit("/me/work/modules/pond-life", "/me/work/modules/pond-life/contributors", {
    email: "ada@example.org",
  }, { route: "/me/work/modules/:slug/contributors" });
  await me.submit(
    "/me/work/modules/pond-life",
    `/me/work/modules/pond-life/contributors/${ada.account.id}/remove`,
    {},
    { route: "/me/work/modules/:slug/contributors/:id/remove" },
  );
  await her.submit("/modules/pond-life", "/modules/pond-life/point", {}, {
    route: "/modules/:slug/point",
  });

  // Sign-in methods: a provider account linked to olga, removed.
  await commit(putNewIdentity(atomic(t.kv), {
    provider: "github",
    subject: "4242",
    account: olga.account.id,
    email: null,
    created: t.clock.now(),
    last_used: t.clock.now(),
  }));
  const methods = await me.get("/me/sign-in-methods");
  const remove =
    methods.text.match(/action="(\/me\/sign-in-methods\/github\/[0-9a-f]{40}\/remove)"/)![1];
  await me.submit("/me/sign-in-methods", remove, {}, {
    route: "/me/sign-in-methods/:provider/:hash/remove",
  });

  // A passkey of olga's, removed.
  const hash = credentialHash("cred-1");
  await t.kv.atomic().set(["passkeys", hash], {
    id: "cred-1",
    account: olga.account.id,
    name: "Laptop",
    public_key: new Uint8Array(4),
    counter: 0,
    transports: [],
    device_type: "multiDevice",
    backed_up: true,
    created: t.clock.now(),
    last_used: null,
  }).set(["passkeys_by_account", olga.account.id, hash], hash).commit();
  await me.submit("/me/sign-in-methods", `/me/passkeys/${hash}/remove`, {}, {
    route: "/me/passkeys/:hash/remove",
  });

  // The first-run link a new server prints: Ada becomes the owner.
  const claim = await renewOwnerClaim(t.kv, true, t.clock.now());
  await her.submit(`/me/standing/owner?claim=${claim}`, "/me/standing/owner", {}, {
    lands: /^\/me\/standing\?owner=1$/,
  });

  // Devices: another session ended, then all of them.
  const second = await t.signIn("olga@example.org");
  const devices = await me.get("/me/devices");
  // Only the other session has an end button of its own.
  const other = devices.text.match(/action="\/me\/devices\/(\d+)\/end"/)![1];
  await me.submit("/me/devices", `/me/devices/${other}/end`, {}, {
    route: "/me/devices/:id/end",
  });
  await her.submit("/me/data", "/me/data/erase", { sure: "on" });
  assert.equal((await t.req("GET", "/api/me", { token: second.token })).status, 401);
  await me.submit("/me/devices", "/me/devices/end-all");

  // Every POST route of the pages was walked.
  const done = new Set(walked.flatMap((s) => [...s]));
  const pattern = (path: string) => path.replace(/\{\[[^\]]*\]\{[0-9,]+\}\}/g, "");
  const missing = (await pagePosts(t.deps)).filter((path) =>
    !NOT_FORMS.has(path) && !done.has(pattern(path))
  );
  assert.deepEqual(missing, []);
});
