/**
 * The proposal pages in process: withdrawing from /me/work with a bad reason shows the list
 * again with the message beside that proposal's reason field (nothing stored); the proposal
 * form offers exactly as many file rows as the API takes.
 */
import assert from "node:assert/strict";
import { MINUTE } from "../lib/clock.ts";
import { FILE_ROWS } from "../web/forms.tsx";
import { proposal } from "./_forms_fixtures.ts";
import { dumpKv, testApp } from "./_helpers.ts";

const ORIGIN = "http://localhost";
const inboxes = { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" };
const post = (fields: Record<string, string>, cookie = "") => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, cookie },
});

Deno.test("withdraw with a too-short reason: the form again, the message beside it", async () => {
  await using t = await testApp({ config: inboxes });
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const cookie = `session=${token}`;
  const ids: number[] = [];
  for (const title of ["Engines for beginners", "Looms and cards"]) {
    const r = await t.req("POST", "/api/contributions", { token, body: proposal({ title }) });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status, "confirmed");
    ids.push(r.body.id);
  }
  const [first, second] = ids;

  const before = await dumpKv(t.kv);
  const bad = await t.req(
    "POST",
    `/me/work/proposals/${second}/withdraw`,
    post({ reason: "no" }, cookie),
  );
  assert.equal(bad.status, 400, bad.text);
  assert.match(bad.headers.get("content-type")!, /text\/html/);
  assert.match(
    bad.text,
    /<h1>Modules and proposals<\/h1>/,
    "the page with the form, no error page",
  );
  // The message sits beside the reason field of the proposal sent, tied to it for readers.
  const field = new RegExp(
    `<p class="error" id="why-${second}-error">At least 3 characters\\.</p>\\s*<textarea id="why-${second}"[^>]*aria-invalid="true"[^>]*aria-describedby="why-${second}-error"[^>]*>no</textarea>`,
  );
  assert.match(bad.text, field);
  // The other proposal's form is untouched.
  assert.doesNotMatch(bad.text, new RegExp(`why-${first}-error`));
  assert.equal((bad.text.match(/class="error"/g) ?? []).length, 1);
  assert.equal(await dumpKv(t.kv), before, "nothing stored");
  const still = await t.req("GET", `/api/contributions/${second}`, { token });
  assert.equal(still.body.item?.status ?? still.body.status, "confirmed");

  // A good reason withdraws it and goes back to the list.
  const ok = await t.req(
    "POST",
    `/me/work/proposals/${second}/withdraw`,
    post({ reason: "Not ready yet" }, cookie),
  );
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.get("location"), "/me/work");
  const after = await t.req("GET", `/api/contributions/${second}`, { token });
  assert.equal(after.body.item?.status ?? after.body.status, "withdrawn");
  const list = await t.req("GET", "/me/work", { headers: { cookie } });
  assert.match(list.text, /Status: <strong>withdrawn<\/strong>/);
  assert.match(list.text, /reason: <bdi>Not ready yet<\/bdi>/);

  // Someone else's proposal: refused (a message above the form, nothing changed).
  const other = await t.account("bob@example.org", { name: "Bob" });
  const foreign = await t.req(
    "POST",
    `/me/work/proposals/${first}/withdraw`,
    post({ reason: "Not mine to withdraw" }, `session=${other.token}`),
  );
  assert.notEqual(foreign.status, 303);
  assert.notEqual(foreign.status, 500);
  const mine = await t.req("GET", `/api/contributions/${first}`, { token });
  assert.equal(mine.body.item?.status ?? mine.body.status, "confirmed");
});

Deno.test("proposal form: as many file rows as the API takes, all of them sent", async () => {
  await using t = await testApp({ config: inboxes });
  // The API's limit: 10 files taken, 11 refused.
  const file = (i: number) => ({ label: `Sheet ${i}`, url: `https://files.example/${i}.pdf` });
  const files = (n: number) => Array.from({ length: n }, (_, i) => file(i));
  const ten = await t.req("POST", "/api/contributions", { body: proposal({ files: files(10) }) });
  assert.equal(ten.status, 201, ten.text);
  const eleven = await t.req("POST", "/api/contributions", {
    body: proposal({ files: files(11), title: "Eleven files" }),
  });
  assert.equal(eleven.status, 400);
  assert.equal(FILE_ROWS, 10);

  // The form: rows 1-10, each with its label and link, none beyond.
  const form = await t.req("GET", "/contribute");
  for (let i = 1; i <= FILE_ROWS; i++) {
    assert.match(form.text, new RegExp(`>File ${i}: label</label>`));
    assert.match(form.text, new RegExp(`>File ${i}: link</label>`));
  }
  assert.doesNotMatch(form.text, new RegExp(`File ${FILE_ROWS + 1}:`));
  assert.match(form.text, /<details\s*><summary>More files \(up to 10\)<\/summary>/);

  // All ten rows sent through the form arrive; an error in row 10 shows beside it, "More
  // files" open.
  const fields: Record<string, string> = {
    name: "Ann Example",
    email: "ann@example.com",
    title: "Bees in the school garden",
    area: "nature-based",
    summary: "Counting bees through a spring term.",
    licence: "CC-BY-4.0",
  };
  for (let i = 0; i < FILE_ROWS; i++) {
    fields[`file_label_${i}`] = `Sheet ${i}`;
    fields[`file_url_${i}`] = `https://files.example/${i}.pdf`;
  }
  const bad = await t.req(
    "POST",
    "/contribute",
    post({ ...fields, file_url_9: "http://files.example/9.pdf" }),
  );
  assert.equal(bad.status, 400);
  assert.match(bad.text, /<details open(="")?\s*>/);
  assert.match(bad.text, /id="f-file_url_9-error"/);
  const ok = await t.req("POST", "/contribute", post(fields));
  assert.equal(ok.status, 303, ok.text);
  const id = ok.headers.get("location")!.match(/id=(\d+)/)![1];
  const owner = await t.account("olga@example.com", { roles: ["owner"] });
  const stored = await t.req("GET", `/api/contributions/${id}`, { token: owner.token });
  const item = stored.body.item ?? stored.body;
  assert.deepEqual(item.files, files(10));
});

Deno.test("an old session signs in again from the page and comes back to it", async () => {
  await using t = await testApp({ config: inboxes });
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  let cookie = `session=${token}`;
  const id = (await t.req("POST", "/api/contributions", { token, body: proposal() })).body.id;
  t.clock.advance(16 * MINUTE);

  // The name choice and the erasure need a sign-in under 15 minutes old.
  const stale = await t.req(
    "POST",
    `/me/work/proposals/${id}/attribution`,
    post({ attribution: "remove" }, cookie),
  );
  assert.equal(stale.status, 303);
  const again = stale.headers.get("location")!;
  assert.equal(again, "/sign-in?next=/me/work&fresh=1");
  const data = await t.req("GET", "/me/data", { headers: { cookie } });
  assert.match(data.text, /href="\/sign-in\?next=\/me\/data&amp;fresh=1"/);
  assert.doesNotMatch(data.text, /Erase my account/);

  // Signed in, /sign-in goes on to the page; with fresh=1 it asks for a new link.
  const plain = await t.req("GET", "/sign-in?next=/me/work", { headers: { cookie } });
  assert.equal(plain.status, 303);
  assert.equal(plain.headers.get("location"), "/me/work");
  const form = await t.req("GET", again, { headers: { cookie } });
  assert.equal(form.status, 200);
  assert.match(form.text, /<h1>Sign in again<\/h1>/);
  assert.match(form.text, /name="email"[^>]*value="ada@example.org"|value="ada@example.org"/);
  assert.match(form.text, /name="next" value="\/me\/work"/);
  const asked = await t.req(
    "POST",
    "/sign-in",
    post({ email: "ada@example.org", age_ok: "on", next: "/me/work" }, cookie),
  );
  assert.equal(asked.status, 303);
  const next = asked.headers.getSetCookie().find((c) => c.startsWith("next="));
  assert.match(next ?? "", /^next=%2Fme%2Fwork;.*HttpOnly/i);
  const nextCookie = next!.split(";")[0];

  // The mailed link, used in this browser: back on the page, the name choice goes through.
  const link = t.mail.linkToken("ada@example.org");
  const done = await t.req(
    "POST",
    "/me/verify",
    post({ token: link }, `${cookie}; ${nextCookie}`),
  );
  assert.equal(done.status, 303, done.text);
  assert.equal(done.headers.get("location"), "/me/work");
  assert.ok(done.headers.getSetCookie().some((c) => /^next=;/.test(c)), "forgotten once used");
  cookie = done.headers.getSetCookie().find((c) => c.startsWith("session="))!.split(";")[0];
  const fresh = await t.req(
    "POST",
    `/me/work/proposals/${id}/attribution`,
    post({ attribution: "remove" }, cookie),
  );
  assert.equal(fresh.headers.get("location"), "/me/work");
  const stored = await t.req("GET", `/api/contributions/${id}`, { token: cookie.slice(8) });
  assert.equal(stored.body.attribution ?? stored.body.item?.attribution, "remove");

  // A link used without the cookie (another device) lands on the account page.
  await t.req("POST", "/sign-in", post({ email: "ada@example.org", age_ok: "on" }));
  const other = await t.req(
    "POST",
    "/me/verify",
    post({ token: t.mail.linkToken("ada@example.org") }),
  );
  assert.equal(other.headers.get("location"), "/me");
});
