/**
 * What the screenshot scripts (tests/_screenshots*.ts) and bench/lighthouse.ts share: where the
 * screenshots go, a page shot at 1280 px and 375 px (light and dark), and the owner's incidents
 * as the API writes them.
 */
import type { IMPACTS } from "../kv/status/incidents.ts";
import type { Page } from "./_browser.ts";
import type { bearerApi } from "./_real_server.ts";

/** docs/screenshots/, made when missing. */
export async function screenshotDir(): Promise<string> {
  const dir = new URL("../docs/screenshots/", import.meta.url).pathname;
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

/**
 * The page as it is, whole, at 1280 px (`<name>-desktop.png`) and 375 px (`<name>-375.png`), in
 * each colour scheme asked for (dark ones named `<name>-dark-...`); the page is left light at
 * 1280 px.
 */
export async function shoot(
  page: Page,
  name: string,
  schemes: readonly ("light" | "dark")[] = ["light", "dark"],
): Promise<void> {
  const dir = await screenshotDir();
  for (const scheme of schemes) {
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
    const suffix = scheme === "dark" ? "-dark" : "";
    await page.setViewport({ width: 1280, height: 900 });
    await page.screenshot({ path: `${dir}${name}${suffix}-desktop.png`, fullPage: true });
    await page.setViewport({ width: 375, height: 800 });
    await page.screenshot({ path: `${dir}${name}${suffix}-375.png`, fullPage: true });
  }
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  await page.setViewport({ width: 1280, height: 900 });
}

export interface IncidentText {
  title: string;
  services: number[];
  impact: typeof IMPACTS[number];
  text: string;
}

/** An incident opened through the API, then its updates in order; answers its id. */
export async function postIncident(
  api: ReturnType<typeof bearerApi>,
  incident: IncidentText,
  ...updates: { state: string; text: string }[]
): Promise<number> {
  const id = (await api("POST", "/api/me/incidents", incident)).item.id as number;
  for (const u of updates) await api("POST", `/api/me/incidents/${id}/updates`, u);
  return id;
}
