/**
 * Every form of the site sent with too-long, empty and wrong-kind values: each answer is a page
 * (never a 500) whose messages are sentences in plain words: no validator phrase ("Too big:
 * expected string to have <=200 characters", "Invalid input"), no dotted path ("langs.0"), no
 * type name ("string", "NaN"). And the text fields' `maxlength` and `required` are the server's.
 */
import assert from "node:assert/strict";
import { ProfilePatchBody } from "../http/account_inputs.ts";
import { CreateBody } from "../http/services_inputs.ts";
import { rulesOf } from "../web/_form_controls.tsx";
import { seedModule } from "./_catalogue.ts";
import { proposal } from "./_forms_fixtures.ts";
import { formFields, formsOf } from "./_form_fields.ts";
import { fakeResolver, type TestApp, testApp } from "./_helpers.ts";

const BASE = "http://test.local";
/** Buttons that end, remove or send something rather than take typed values. */
const NOT_TYPED =
  /\/(delete|end|end-all|sign-out|erase|remove|rotate|check|test|badge|avatar|upload|visibility|point|attribution|confirm|unfollow|verify|requests\/\d+)$/;
const VALIDATOR = [
  /too (big|small)/i,
  /invalid (input|option|type|string|value)/i,
  /\bexpected\b/i,
  /\breceived\b/i,
  /\bNaN\b/,
  /\b(string|boolean|array|object|undefined|null|enum)\b/i,
  /\b[a-z_]+\.[0-9]+\b/i,
  /<=|>=/,
];

/** The messages a page shows: beside fields, in the summary, and an error page's text. */
function messagesOf(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/<p class="error"[^>]*>([^]*?)<\/p>/g)) out.push(m[1]);
  for (const m of html.matchAll(/<div class="errors"[^>]*>([^]*?)<\/div>/g)) {
    for (const li of m[1].matchAll(/<li>([^]*?)<\/li>/g)) out.push(li[1].replace(/<[^>]+>/g, ""));
  }
  const main = html.match(/<main[^>]*>([^]*?)<\/main>/)?.[1] ?? "";
  if (/<h1>(That did not work|Too large|Not allowed|Gone|That cannot be done now)/.test(main)) {
    out.push(main.replace(/<[^>]+>/g, " "));
  }
  return out;
}

const variants: Record<string, (type: string, name: string) => string> = {
  "too long": (type) =>
    type === "number"
      ? "9".repeat(40)
      : type === "email"
      ? `${"a".repeat(3000)}@example.org`
      : type === "url"
      ? `https://example.org/${"a".repeat(3000)}`
      : "ж".repeat(3000),
  empty: () => "",
  "wrong kind": (type, name) =>
    type === "number"
      ? "abc"
      : type === "email" || name === "email" || name === "contact"
      ? "not an address"
      : type === "url" || name === "website" || name.startsWith("file_url")
      ? "ftp://example.org/x"
      : type === "select"
      ? "no-such-choice"
      : name === "langs"
      ? "english xx"
      : "a\u0007b",
};

async function walk(t: TestApp, cookie: string, page: string, seen: string[]) {
  const res = await t.app.request(`${BASE}${page}`, { headers: cookie ? { cookie } : {} });
  assert.equal(res.status, 200, page);
  const html = await res.text();
  // Every field a person types into says how long it may be, as the server's rule says.
  const unbounded = [...html.matchAll(/<(input|textarea)\b[^>]*>/g)].map((m) => m[0])
    .filter((t) =>
      !/type="(hidden|checkbox|radio|file|submit|search|number)"|readonly|tabindex="-1"/.test(t)
    )
    .filter((t) => !/maxlength="\d+"/.test(t));
  assert.deepEqual(unbounded, [], `${page}: fields without maxlength`);
  for (const form of formsOf(html)) {
    if (NOT_TYPED.test(form.action)) continue;
    const typed = Object.entries(form.types).filter(([, type]) =>
      !["hidden", "checkbox", "radio", "file", "submit"].includes(type)
    );
    if (!typed.length) continue;
    for (const [variant, value] of Object.entries(variants)) {
      const shown = new Map(formFields(html, form.action));
      for (const [name, type] of typed) shown.set(name, value(type, name));
      const sent = await t.app.request(`${BASE}${form.action}`, {
        method: "POST",
        headers: { origin: BASE, ...(cookie ? { cookie } : {}) },
        body: new URLSearchParams([...shown]),
      });
      const text = await sent.text();
      const where = `${page} -> ${form.action} (${variant}): ${sent.status}`;
      assert.ok(sent.status < 500, where);
      for (const message of messagesOf(text)) {
        seen.push(message);
        // Fields are named as the page labels them, never by their form names.
        assert.doesNotMatch(message, /^[a-z]+_[a-z_0-9]+:/, `${where}: "${message}"`);
        for (const bad of VALIDATOR) assert.doesNotMatch(message, bad, `${where}: "${message}"`);
      }
    }
  }
}

Deno.test("every form with too-long, empty and wrong-kind values: messages in plain words", async () => {
  await using t = await testApp({
    config: { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" },
    resolver: fakeResolver({ "hooks.example.org": ["93.184.216.34"] }),
  });
  const olga = await t.account("olga@example.org", { name: "Olga", roles: ["owner"] });
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const me = `session=${olga.token}`;
  const her = `session=${ada.token}`;
  const tcp = await t.req("POST", "/api/me/services", {
    token: olga.token,
    body: { name: "Relay", check: "tcp:127.0.0.1:9" },
  });
  assert.equal(tcp.status, 200, tcp.text);
  await t.req("PUT", "/api/me/status-page", {
    token: olga.token,
    body: { enabled: true, title: "Olga's", services: [{ id: tcp.body.item.id, note: "" }] },
  });
  await seedModule(t, "pond-life", [olga.account.id]);
  const made = await t.req("POST", "/api/contributions", { token: ada.token, body: proposal() });
  assert.equal(made.status, 201, made.text);
  await t.req("POST", "/api/me/applications", {
    token: ada.token,
    body: { text: "I have written three modules for the catalogue." },
  });
  const slug = (await t.req("GET", "/api/me", { token: olga.token })).body.slug ?? "olga";

  const seen: string[] = [];
  for (const page of ["/sign-in", "/request", "/contribute", `/status/${slug}`]) {
    await walk(t, "", page, seen);
  }
  for (
    const page of [
      "/me/profile",
      "/me/journal",
      "/me/services",
      `/me/services/${tcp.body.item.id}`,
      "/me/channels",
      "/me/status-page",
      "/me/standing",
      "/me/work/modules/pond-life",
      `/team/proposals/${made.body.id}`,
      "/team/applications",
    ]
  ) await walk(t, me, page, seen);
  for (const page of ["/me/work", "/me/standing"]) await walk(t, her, page, seen);
  if (Deno.env.get("SHOW_MESSAGES")) console.log([...new Set(seen)].join("\n"));
  // The walk met messages (it would pass on pages that show none).
  assert.ok(seen.length > 40, `${seen.length} messages`);
  assert.ok(seen.some((m) => /^Entry 1: Must be a two-letter language code/.test(m)));
  assert.ok(seen.some((m) => /^Use at most [0-9,]+ characters/.test(m)));
  assert.ok(seen.some((m) => m === "Fill this in."));
});

Deno.test("text fields carry the server's maxlength and required", async () => {
  const profile = rulesOf(ProfilePatchBody);
  assert.deepEqual(profile.about, { maxlength: 280, required: false });
  assert.deepEqual(rulesOf(CreateBody).name, { maxlength: 80, required: true });

  await using t = await testApp();
  const { token } = await t.account("olga@example.org", { name: "Olga" });
  const page = await t.req("GET", "/me/profile", { headers: { cookie: `session=${token}` } });
  for (const [name, rule] of Object.entries(profile)) {
    if (!rule.maxlength) continue;
    const tag = page.text.match(new RegExp(`<(input|textarea) id="f-${name}"[^>]*>`))?.[0];
    assert.ok(tag, name);
    assert.match(tag, new RegExp(`maxlength="${rule.maxlength}"`), name);
  }
  const services = await t.req("GET", "/me/services/new?kind=url", {
    headers: { cookie: `session=${token}` },
  });
  assert.match(services.text, /<input id="f-name" name="name" required=""[^>]*maxlength="80"/);
});
