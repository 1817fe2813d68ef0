/**
 * Screenshots of the signed-in and team pages (desktop 1280 px and phone 375 px) into
 * docs/screenshots/: `deno run -A --lock=deno.dev.lock tests/_screenshots_me.ts`. Uses the
 * same real server, SMTP sink and browser as the browser tests.
 */
import { grantRole } from "../kv/accounts/roles.ts";
import {
  checkByLabel,
  clickByText,
  fillByLabel,
  mainText,
  type Page,
  selectByLabel,
  startWeb,
  uploadByLabel,
} from "./_browser.ts";
import { screenshotDir, shoot as shootBoth } from "./_shots.ts";

const out = await screenshotDir();
/** These pages are shot light only. */
const shoot = (page: Page, name: string) => shootBoth(page, name, ["light"]);

await using web = await startWeb();
{
  const kv = await Deno.openKv(web.server.kvPath);
  await grantRole(kv, "olga@example.com", "owner", Date.now());
  kv.close();
}
const page = await web.page();
await web.signIn(page, "ann@example.com");
await page.goto(`${web.base}/me/profile`);
await fillByLabel(page, "Name", "Ann Example");
await clickByText(page, "Save profile");
await shoot(page, "me-profile");
await page.goto(`${web.base}/me`);
await shoot(page, "me");

// A file that is no picture: the profile page again, the message beside the picture field.
const notPicture = await Deno.makeTempFile({ suffix: ".png" });
await Deno.writeTextFile(notPicture, "this is not a picture");
await page.goto(`${web.base}/me/profile`);
await uploadByLabel(page, "Picture file", notPicture);
await clickByText(page, "Upload picture");
await Deno.remove(notPicture);
await shoot(page, "me-profile-picture-refused");

await page.goto(`${web.base}/me/services/new?kind=webhook`);
await fillByLabel(page, "Name", "Nightly backup");
await selectByLabel(page, "Group", "Jobs");
await clickByText(page, "Add service");
await shoot(page, "me-service-added");
await page.goto(`${web.base}/me/services`);
await shoot(page, "me-services");

await page.goto(`${web.base}/me/files`);
const tmp = await Deno.makeTempFile({ suffix: ".txt" });
await Deno.writeTextFile(tmp, "notes\n".repeat(2000));
await uploadByLabel(page, "File", tmp);
await fillByLabel(page, "Title (optional)", "Trail notes");
await checkByLabel(page, "Public: anyone with the link can open it");
await clickByText(page, "Upload");
await Deno.remove(tmp);
await shoot(page, "me-files");

await page.goto(`${web.base}/contribute`);
await fillByLabel(page, "Title of the module", "River walks");
await fillByLabel(page, "Summary", "Four outdoor sessions along the river, with notes and maps.");
await selectByLabel(page, "Licence", "CC BY 4.0: name the author");
await clickByText(page, "Send the proposal");
// Signed in with its address, the proposal is confirmed at once; the answer links its id.
const proposal = new URL(page.url()).searchParams.get("id");
if (!proposal) throw new Error(`the proposal was not taken: ${await mainText(page)}`);

const owner = await web.page();
await web.signIn(owner, "olga@example.com");
await owner.goto(`${web.base}/team`);
await shoot(owner, "team-queue");
await clickByText(owner, `#${proposal} River walks`);
await shoot(owner, "team-proposal");
console.log(`screenshots in ${out}`);
