/**
 * Screenshots of the watching pages (the dashboard, a heartbeat's page, a service's page)
 * at 1280 px and 375 px, light and dark, into docs/screenshots/:
 * `deno run -A --lock=deno.dev.lock tests/_screenshots_watch.ts`. The same real server, SMTP
 * sink and browser as the browser tests.
 */
import { flakyTarget } from "./_servers.ts";
import { checkByLabel, clickByText, fillByLabel, selectByLabel, startWeb } from "./_browser.ts";
import { screenshotDir, shoot } from "./_shots.ts";

await screenshotDir();

await using web = await startWeb();
const page = await web.page();
await web.signIn(page, "wanda@example.com");
await page.goto(`${web.base}/me/profile`);
await fillByLabel(page, "Name", "Wanda Ops");
await clickByText(page, "Save profile");

const hooks: Record<string, string> = {};
for (
  const [name, group, tags] of [
    ["Nightly backup", "Jobs", "backup prod"],
    ["Library printer", "LAN and tailnet", "floor-2"],
    ["Mail relay", "Public", "prod mail"],
    ["Catalogue export", "Jobs", "prod"],
    ["Photo NAS sync", "LAN and tailnet", "backup"],
    ["Newsletter digest", "Jobs", "mail"],
    ["Loan reminders", "Jobs", ""],
    ["Wiki snapshot", "Data", "backup"],
  ]
) {
  await page.goto(`${web.base}/me/services/new?kind=webhook`);
  await fillByLabel(page, "Name", name);
  await selectByLabel(page, "Group", group);
  await fillByLabel(page, "Tags", tags);
  await clickByText(page, "Add service");
  const hook = new URL(await page.$eval("#hook-url", (e: { value: string }) => e.value));
  hooks[name] = `${web.base}${hook.pathname}`;
}
const ping = async (url: string) =>
  void await (await fetch(url, { method: "POST" })).body?.cancel();
for (let i = 0; i < 12; i++) await ping(hooks["Nightly backup"]);
for (const name of ["Catalogue export", "Photo NAS sync", "Newsletter digest", "Wiki snapshot"]) {
  for (let i = 0; i < 5; i++) await ping(hooks[name]);
}
for (let i = 0; i < 8; i++) await ping(i % 3 ? hooks["Mail relay"] : `${hooks["Mail relay"]}/fail`);
await ping(hooks["Mail relay"]);
await ping(`${hooks["Library printer"]}/fail`);

// A checked service with its chart: the owner (the first run's printed link) may check
// 127.0.0.1, a local server here that fails now and then.
await using target = flakyTarget();
const claim = web.server.output().match(/open \S+(\/me\/standing\/owner\?claim=\S+) /)?.[1];
await page.goto(`${web.base}${claim}`);
await clickByText(page, "Become the owner");
await page.goto(`${web.base}/me/services/new`);
await shoot(page, "add-service-kind");
await checkByLabel(page, "Web address (url)");
await clickByText(page, "Next");
await clickByText(page, "Add service");
await shoot(page, "add-service-errors");
await fillByLabel(page, "Name", "Library website");
await fillByLabel(page, "Address to check", target.check.slice("url:".length));
await clickByText(page, "Add service");
for (let i = 0; i < 8; i++) {
  target.failing = i === 5;
  await clickByText(page, "Check now");
}
await shoot(page, "service-page");

await page.goto(`${web.base}/watch`);
await shoot(page, "watch");
await clickByText(page, "Mail relay");
await shoot(page, "watch-service");

// Maintenance: one started now for an hour, over the printer.
await page.goto(`${web.base}/me/maintenance`);
await fillByLabel(page, "Name of the window", "Printer firmware update");
await checkByLabel(page, "Library printer");
await selectByLabel(page, "For", "1 hour");
await clickByText(page, "Start now");
await shoot(page, "maintenance");

// The status pages have their own: tests/_screenshots_status.ts.
