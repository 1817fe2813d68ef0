/**
 * Screenshots of the watching pages (the dashboard of twenty services in mixed states, down
 * and late first; a heartbeat's page; a checked service's page; the maintenance windows, one
 * on a schedule in its run and one started now) at 1280 px and 375 px, light and dark, into
 * docs/screenshots/:
 * `deno run -A --lock=deno.dev.lock tests/_screenshots_watch.ts`. The same real server, SMTP
 * sink and browser as the browser tests.
 */
import { flakyTarget } from "./_servers.ts";
import { checkByLabel, clickByText, fillByLabel, selectByLabel, startWeb } from "./_browser.ts";
import { bearerApi } from "./_real_server.ts";
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

// The rest of the twenty through the API, for the states the form's defaults do not give.
const session = (await page.cookies()).find((c) => c.name === "session")!;
const api = bearerApi(web.base, session.value);
const ids: Record<string, number> = Object.fromEntries(
  ((await api("GET", "/api/me/services")).items as { id: number; name: string }[])
    .map((s) => [s.name, s.id]),
);
const add = async (name: string, more: Record<string, unknown>) => {
  const made = await api("POST", "/api/me/services", { name, check: "webhook:", ...more });
  ids[name] = made.item.id;
  hooks[name] = `${web.base}${new URL(made.hook_url).pathname}`;
};
// Late: a beat a minute apart, an hour's grace; their one beat is over a minute old when shot.
const lateSince = Date.now();
for (
  const [name, tags] of [["Reading room sensors", ["floor-1", "iot"]], ["Self-checkout kiosk", [
    "floor-1",
  ]]] as const
) {
  await add(name, { group: "LAN and tailnet", period_seconds: 60, grace_seconds: 3600, tags });
  await ping(hooks[name]);
}
// Warning: one failed run of the three that turn it off.
await add("Door counter", { group: "LAN and tailnet", threshold: 3, tags: ["iot"] });
await ping(`${hooks["Door counter"]}/fail`);
// Down, and one that depends on the printer (down): unreachable.
await add("Room booking", { group: "Public", tags: ["prod"] });
await ping(`${hooks["Room booking"]}/fail`);
await add("Print queue", {
  group: "LAN and tailnet",
  depends_on: [ids["Library printer"]],
  tags: ["floor-2"],
});
await ping(hooks["Print queue"]);
await ping(`${hooks["Print queue"]}/fail`);
// Up, waiting and paused.
for (
  const [name, group, tags] of [
    ["Event calendar feed", "Public", ["prod"]],
    ["Member database dump", "Data", ["backup", "prod"]],
    ["Staff rota export", "Jobs", []],
    ["Inter-library loans sync", "Data", ["prod"]],
  ] as const
) {
  await add(name, { group, tags });
  for (let i = 0; i < 3; i++) await ping(hooks[name]);
}
await add("Search index rebuild", { group: "Jobs", tags: ["prod"] });
await add("Archive upload", { group: "Data", tags: ["backup"] });
await ping(hooks["Archive upload"]);
await api("PATCH", `/api/me/services/${ids["Archive upload"]}`, { paused: true });

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

// Maintenance: a window on a schedule in its run (it began ten minutes ago, an hour each day),
// and one started now for an hour.
const began = new Date(Date.now() - 10 * 60_000);
await page.goto(`${web.base}/me/maintenance`);
await fillByLabel(page, "Name of the window", "Daily catalogue reindex");
await checkByLabel(page, "Catalogue export");
await selectByLabel(page, "When it runs", "On a schedule");
await fillByLabel(page, "Time zone", "UTC");
await fillByLabel(page, "Schedule (cron)", `${began.getUTCMinutes()} ${began.getUTCHours()} * * *`);
await fillByLabel(page, "Length of each run (minutes)", "60");
await clickByText(page, "Plan a window");
await fillByLabel(page, "Name of the window", "NAS disk swap");
await checkByLabel(page, "Photo NAS sync");
await selectByLabel(page, "For", "1 hour");
await clickByText(page, "Start now");
await shoot(page, "maintenance");

// The late ones turn late a minute after their beat: the runner looks then.
await new Promise((r) => setTimeout(r, Math.max(0, lateSince + 65_000 - Date.now())));
await page.goto(`${web.base}/watch`);
await shoot(page, "watch");
await clickByText(page, "Mail relay");
await shoot(page, "watch-service");

// The status pages have their own: tests/_screenshots_status.ts.
