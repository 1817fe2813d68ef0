import { atomic, transact } from "../kv/_atomic.ts";
import { findAccountByEmail, prepareAccount } from "../kv/accounts/accounts.ts";
import { importCatalogue } from "../kv/catalogue/catalogue_io.ts";
import { explainImport } from "./catalogue.ts";
import { openKv } from "../kv/_atomic.ts";
import { trailAppend } from "../kv/store/trail.ts";
import { systemClock } from "../lib/clock.ts";
import { envRecord, loadConfig } from "../lib/config.ts";
import { CREATE_FLAG, ownerKvPath, splitCreate } from "./_kv.ts";
import { runCommand } from "./_run.ts";

/**
 * `deno task demo`: loads the example catalogue (data_examples/) into the KV of KV_PATH
 * (default ./data/kv.sqlite3), creating its contributor accounts with the contributor role
 * (one trail line per grant, as the roles command writes). Safe to run again: existing
 * accounts are kept and modules are updated in place.
 */

const here = new URL("../data_examples/", import.meta.url);

async function main(argv: string[]): Promise<number> {
  const { create, rest } = splitCreate(argv);
  if (rest.length) {
    console.error(`usage: deno task demo [${CREATE_FLAG}]`);
    return 2;
  }
  const config = loadConfig(envRecord());
  const people = JSON.parse(await Deno.readTextFile(new URL("people.json", here))) as {
    accounts: { email: string; name: string }[];
  };
  const catalogue = JSON.parse(await Deno.readTextFile(new URL("catalogue.json", here)));
  const kv = await openKv(await ownerKvPath("demo", create));
  try {
    let made = 0;
    for (const p of people.accounts) {
      const now = systemClock.now();
      made += await transact(async () => {
        if (await findAccountByEmail(kv, p.email)) return { op: null, result: 0 };
        const acc = await prepareAccount(kv, p.email, p.name, now, ["contributor"]);
        const trail = await trailAppend(kv, [{
          actor: "owner",
          action: "role.grant",
          subject: `account:${acc.account.id}`,
          fields: ["contributor"],
        }], now);
        return { op: trail.apply(acc.apply(atomic(kv))), result: 1 };
      });
    }
    const r = await importCatalogue({ kv, clock: systemClock, config }, catalogue);
    // Say what the site will show: a module that is not published is not in the catalogue.
    const modules = catalogue.modules as { slug: string; published: boolean }[];
    const shown = modules.filter((m) => m.published).map((m) => m.slug);
    const hidden = modules.filter((m) => !m.published).map((m) => m.slug);
    console.log(
      [
        `demo loaded into ${config.kvPath ?? "the default KV"}:`,
        `- accounts: ${made} created, ${people.accounts.length - made} there already ` +
        "(contributors of the modules)",
        `- modules: ${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged`,
        `- ${shown.length} published, shown in the catalogue: ${shown.join(", ")}`,
        `- ${hidden.length} not published, seen only by their contributors: ` +
        (hidden.join(", ") || "none"),
        `Start the server with \`deno task start\`, then open ${config.baseUrl}/catalogue.`,
      ].join("\n"),
    );
    return 0;
  } finally {
    kv.close();
  }
}

// Run as a command only: importing the module (a test, the layout check) runs nothing.
if (import.meta.main) await runCommand(main, explainImport("demo"));
