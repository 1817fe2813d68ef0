/**
 * Runs a command (`deno test ...`) with one Chromium for all its browser test files: they
 * connect to it (tests/_browser.ts `SHARED_BROWSER`) rather than each starting its own, and it
 * closes when the command ends. Used by `deno task test`; a browser test file run alone starts
 * its own.
 *
 *   deno run -A tests/_with_chromium.ts deno test ...
 */
import { launchBrowser, SHARED_BROWSER } from "./_browser.ts";

const [command, ...args] = Deno.args;
if (!command) {
  console.error("usage: deno run -A tests/_with_chromium.ts <command> [args...]");
  Deno.exit(2);
}
const browser = await launchBrowser();
let code = 1;
try {
  const child = new Deno.Command(command === "deno" ? Deno.execPath() : command, {
    args,
    env: { [SHARED_BROWSER]: browser.wsEndpoint() },
  }).spawn();
  code = (await child.status).code;
} finally {
  await browser.close();
}
Deno.exit(code);
