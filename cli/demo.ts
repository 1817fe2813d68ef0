import { atomic, transact } from "../kv/_atomic.ts";
import { findAccountByEmail, prepareAccount } from "../kv/accounts.ts";
import { importCatalogue, ImportError } from "../kv/catalogue_io.ts";
import { openKv } from "../kv/_atomic.ts";
import { trailAppend } from "../kv/trail.ts";
import { systemClock } from "../lib/clock.ts";
import { ConfigError, envRecord, loadConfig } from "../lib/config.ts";

/**
 * `deno task demo`: loads the example catalogue (data_examples/) into the KV of KV_PATH
 * (default ./data/kv.sqlite3), creating its contributor accounts with the contributor role
 * (one trail line per grant, as the roles command writes). Safe to run again: existing
 * accounts are kept and modules are updated in place.
 */

const here = new URL("../data_examples/", import.meta.url);

async function main(): Promise<number> {
  const config = loadConfig(envRecord());
  const people = JSON.parse(await Deno.readTextFile(new URL("people.json", here))) as {
    accounts: { email: string; name: string }[];
  };
  const catalogue = JSON.parse(await Deno.readTextFile(new URL("catalogue.json", here)));
  const kv = await openKv(config.kvPath);
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
    console.log(
      `demo loaded into ${config.kvPath ?? "the default KV"}: ${made} accounts created, ` +
        `${r.created} modules created, ${r.updated} updated.\n` +
        "Start the server with `deno task start`, then open /api/catalogue.",
    );
    return 0;
  } catch (err) {
    if (err instanceof ImportError) {
      console.error(`demo refused: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    kv.close();
  }
}

try {
  Deno.exit(await main());
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  Deno.exit(1);
}
