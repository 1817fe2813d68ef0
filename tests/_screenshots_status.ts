/**
 * Screenshots of the status pages (issues 46 and 47) at 1280 px and 375 px, light and dark, into
 * docs/screenshots/: a public page with an open incident, the history, an unreachable service,
 * groups of the owner's and its announcements (one open on top, the earlier ones below the
 * incidents) (status-page), the list of an owner's pages (status-pages), a page's
 * settings (status-page-settings) and the same form refused for one bad link, every value kept
 * (status-page-settings-error): `deno run -A --lock=deno.dev.lock tests/_screenshots_status.ts`.
 * The same real server, SMTP sink and browser as the browser tests.
 */
import { checkByLabel, clickByText, fillByLabel, startWeb } from "./_browser.ts";
import { bearerApi } from "./_real_server.ts";
import { postIncident, screenshotDir, shoot } from "./_shots.ts";

const out = await screenshotDir();

await using web = await startWeb();
const page = await web.page();
await web.signIn(page, "wanda@example.com");
const session = (await page.cookies()).find((c) => c.name === "session")!;
const api = bearerApi(web.base, session.value);
await api("PATCH", "/api/me", { name: "Wanda Ops" });
const add = async (name: string, group: string, depends_on: number[] = []) =>
  await api("POST", "/api/me/services", {
    name,
    check: "webhook:",
    interval: 60,
    group,
    depends_on,
  }) as { item: { id: number }; hook_url: string };
const hook = (s: { hook_url: string }, tail = "") =>
  fetch(`${web.base}${new URL(s.hook_url).pathname}${tail}`, { method: "POST" })
    .then((r) => r.body?.cancel());
const router = await add("LAN router", "LAN and tailnet");
const printer = await add("Library printer", "LAN and tailnet", [router.item.id]);
const mail = await add("Mail relay", "Public");
const site = await add("Catalogue website", "Public");
const backup = await add("Nightly backup", "Jobs");
for (const s of [mail, site, backup]) await hook(s);

// A past incident, resolved, and an open one with two updates.
await postIncident(api, {
  title: "Mail delayed",
  services: [mail.item.id],
  impact: "minor",
  text: "Mail to outside addresses waits in the queue.",
}, { state: "resolved", text: "The relay's certificate was renewed; the queue is empty." });
for (const s of [router, printer]) await hook(s, "/fail");
await postIncident(api, {
  title: "Printing on floor 2 fails",
  services: [printer.item.id],
  impact: "major",
  text: "The printer does not answer.",
}, { state: "identified", text: "The LAN router on floor 2 lost power; a new one is on its way." });

// Announcements: one over (investigating, then resolved), a plain note, and one still open.
await api("POST", "/api/me/status-page/notes", {
  kind: "investigating",
  text: "The catalogue search answers slowly; we are looking into it.",
});
await api("POST", "/api/me/status-page/notes", {
  kind: "resolved",
  text: "Search is fast again: its index was rebuilt.",
});
await api("POST", "/api/me/status-page/notes", {
  kind: "note",
  text: "The library closes at 16:00 on Friday 4 December; the services stay up.",
});
await api("POST", "/api/me/status-page/notes", {
  kind: "identified",
  text: "Mail to outside addresses may arrive late tonight: the relay's provider is moving it.",
});

// The first page through its form, with the owner's order and headings.
await page.goto(`${web.base}/me/status-page`);
await checkByLabel(page, "Publish the status page");
await fillByLabel(page, "Title", "Wanda's library");
await fillByLabel(page, "Link to your own site", "library.example.org");
for (const [name, place] of [["Catalogue website", 1], ["Mail relay", 2], ["Library printer", 3]]) {
  await checkByLabel(page, name as string);
  await fillByLabel(page, `Place of ${name}`, String(place));
}
await fillByLabel(page, "Heading for Library printer", "Floor 2");
await fillByLabel(page, "Note for Library printer", "Use the printer on floor 1 meanwhile.");
await clickByText(page, "Save status page");
await shoot(page, "status-page-settings-error");
await fillByLabel(page, "Link to your own site", "https://library.example.org/");
await clickByText(page, "Save status page");
await shoot(page, "status-page-settings");

// A second page for the staff, with the backup.
await api("POST", "/api/me/status-pages", {
  slug: "wanda-staff",
  title: "Library staff",
  enabled: true,
  services: [{ id: backup.item.id }, { id: router.item.id }],
});
await page.goto(`${web.base}/me/status-pages`);
await shoot(page, "status-pages");

// The looks the failures asked for run through the KV queue: the page once it reads them.
const visitor = await web.page();
for (let i = 0; i < 40; i++) {
  await visitor.goto(`${web.base}/status/wanda-ops`);
  const text = await visitor.$eval("main", (m: { textContent: string }) => m.textContent);
  if (text.includes("Unreachable")) break;
  await new Promise((r) => setTimeout(r, 250));
}
await shoot(visitor, "status-page");
console.log("screenshots in", out);
