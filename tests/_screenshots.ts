/**
 * Screenshots of the main pages for docs/screenshots/ (desktop 1280 px and phone 375 px),
 * taken with the browser tests' headless Chromium over the real server and the example
 * catalogue:  deno run -A --lock=deno.dev.lock tests/_screenshots.ts
 */
import { startWeb } from "./_browser.ts";
import { screenshotDir } from "./_shots.ts";

const out = await screenshotDir();
await using web = await startWeb();
await web.demo();
const page = await web.page();
const shots: [string, string][] = [
  ["home", "/"],
  ["catalogue", "/catalogue"],
  ["module", "/modules/pond-life-through-the-seasons"],
  ["sign-in", "/sign-in"],
  ["contribute", "/contribute"],
];
for (const [name, path] of shots) {
  for (const [size, width] of [["desktop", 1280], ["375", 375]] as const) {
    await page.setViewport({ width, height: size === "375" ? 800 : 900 });
    await page.goto(`${web.base}${path}`, { waitUntil: "networkidle0" });
    await page.screenshot({ path: `${out}${name}-${size}.png`, fullPage: false });
  }
}
console.log(`screenshots in ${out}`);
