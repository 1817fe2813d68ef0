/**
 * The owner's role command (docs/api.md, "Owner command (`deno task roles`)"), run on the server
 * machine:
 *   deno task roles grant <email> <role>
 *   deno task roles revoke <email> <role>
 *   deno task roles list
 * It opens the same KV as the server (KV_PATH, default ./data/kv.sqlite3) and may run while
 * the server does: a busy file is retried (kv/_atomic.ts). Exit codes: 0 done (also when
 * nothing needed changing), 1 failure (revoke for an address without account, KV error),
 * 2 usage or a KV_PATH refused (cli/_kv.ts `ownerKvPath`; `--create` for a new database).
 */
import { openKv } from "../kv/_atomic.ts";
import { type Role, ROLES } from "../kv/accounts/accounts.ts";
import { grantRole, isRole, listRoleHolders, revokeRole } from "../kv/accounts/roles.ts";
import { canonicalEmail } from "../lib/email.ts";
import { CREATE_FLAG, ownerKvPath, splitCreate } from "./_kv.ts";
import { messageOf, runCommand } from "./_run.ts";

const USAGE = `usage: deno task roles grant <email> <role>
       deno task roles revoke <email> <role>
       deno task roles list
roles: ${ROLES.join(", ")}
KV: KV_PATH (default ./data/kv.sqlite3), the same as the server's; it must exist
    (${CREATE_FLAG} makes a new, empty one)`;

function usage(problem: string): never {
  console.error(`${problem}\n${USAGE}`);
  Deno.exit(2);
}

async function main(argv: string[]): Promise<number> {
  const { create, rest: args } = splitCreate(argv);
  const [command, ...rest] = args;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    usage("a command is required");
  }
  if (command === "list") {
    if (rest.length) usage("list takes no arguments");
  } else if (command === "grant" || command === "revoke") {
    if (rest.length !== 2) usage(`${command} takes an address and a role`);
    if (canonicalEmail(rest[0]) === null) {
      usage(`not a valid e-mail address: ${JSON.stringify(rest[0])}`);
    }
    if (!isRole(rest[1])) usage(`unknown role: ${JSON.stringify(rest[1])}`);
  } else {
    usage(`unknown command: ${command}`);
  }

  const kv = await openKv(await ownerKvPath("roles", create));
  try {
    if (command === "list") {
      const holders = await listRoleHolders(kv);
      if (holders.length === 0) console.log("no account holds a role");
      for (const a of holders) {
        console.log(`${a.id}\t${a.email}\t${a.roles.join(",")}${a.name ? `\t${a.name}` : ""}`);
      }
      return 0;
    }
    const email = canonicalEmail(rest[0])!;
    const role = rest[1] as Role;
    const now = Date.now();
    if (command === "grant") {
      const r = await grantRole(kv, email, role, now);
      const who = `account ${r.account.id} (${email})`;
      if (r.created) console.log(`created ${who} with role ${role}`);
      else if (r.changed) console.log(`granted ${role} to ${who}`);
      else console.log(`${who} already has ${role}; nothing changed`);
      return 0;
    }
    const r = await revokeRole(kv, email, role, now);
    if (r === null) {
      console.error(`no account has the address ${email}`);
      return 1;
    }
    const who = `account ${r.account.id} (${email})`;
    if (r.changed) console.log(`revoked ${role} from ${who}`);
    else console.log(`${who} does not have ${role}; nothing changed`);
    return 0;
  } finally {
    kv.close();
  }
}

if (import.meta.main) await runCommand(main, (err) => `roles: ${messageOf(err)}`);
