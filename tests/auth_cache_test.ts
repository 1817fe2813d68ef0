import assert from "node:assert/strict";
import {
  cachedAuth,
  FINE_SETTLE_MS,
  readMark,
  registerKv,
  rememberAuth,
  SETTLE_MS,
} from "../kv/_auth_cache.ts";
import { atomic, commit, openKv, transact } from "../kv/_atomic.ts";
import { type Account, accountKey, prepareAccount } from "../kv/accounts.ts";
import { findSession, prepareSession, type Session } from "../kv/sessions.ts";
import { sha256hex } from "../lib/crypto.ts";
import { MINUTE } from "../lib/clock.ts";
import { ROOT } from "./_server.ts";
import { aroundCommits } from "./_helpers.ts";

const NOW = Date.parse("2026-03-02T09:00:00.000Z");

async function seed(kv: Deno.Kv, email = "a@example.org") {
  return await transact(async () => {
    const acc = await prepareAccount(kv, email, "Ada", NOW);
    const s = await prepareSession(kv, acc.account.id, NOW);
    return {
      op: s.apply(acc.apply(atomic(kv))),
      result: { account: acc.account, token: s.token, hash: sha256hex(s.token) },
    };
  });
}

/** A KV registered as openKv does; `raw` writes to it without the commit path. */
async function memoryKv() {
  const kv = await Deno.openKv(":memory:");
  registerKv(kv, ":memory:");
  return { raw: kv, kv };
}

/** Moves a file's timestamps back, as if its last write were long ago. */
function age(path: string) {
  const past = new Date(Date.now() - 60_000);
  for (const f of [path, `${path}-wal`]) {
    try {
      Deno.utimeSync(f, past, past);
    } catch { /* no WAL yet */ }
  }
}

Deno.test("auth cache: a second lookup is served from memory, without a KV read", async () => {
  const { raw, kv } = await memoryKv();
  try {
    const a = await seed(kv);
    assert.equal((await findSession(kv, a.token, NOW))?.account.id, a.account.id);
    // Deleted behind the wrapper's back (no product code can do this): the cache still
    // answers, which proves the second lookup did not read KV.
    await raw.delete(["sessions", a.hash]);
    assert.equal((await findSession(kv, a.token, NOW))?.account.id, a.account.id);
    // Through the wrapper, as every product write goes: gone at once.
    await commit(atomic(kv).delete(["sessions", a.hash]));
    assert.equal(await findSession(kv, a.token, NOW), null);
  } finally {
    kv.close();
  }
});

Deno.test("auth cache: session ends, account changes and erasure take effect at once", async () => {
  const kv = await openKv(":memory:");
  try {
    const a = await seed(kv);
    const b = await seed(kv, "b@example.org");
    await findSession(kv, a.token, NOW);
    await findSession(kv, b.token, NOW);
    // An account write inside an atomic drops that account's sessions only.
    const acc = (await kv.get<Account>(accountKey(a.account.id))).value!;
    await commit(atomic(kv).set(accountKey(a.account.id), { ...acc, roles: ["reviewer"] }));
    assert.deepEqual((await findSession(kv, a.token, NOW))?.account.roles, ["reviewer"]);
    assert.equal((await findSession(kv, b.token, NOW))?.account.id, b.account.id);
    // Erasure deletes the account: its token opens nothing.
    await commit(atomic(kv).delete(accountKey(a.account.id)));
    assert.equal(await findSession(kv, a.token, NOW), null);
    // Expiry is decided on every lookup, cached or not.
    assert.equal(await findSession(kv, b.token, NOW + 31 * 24 * 60 * MINUTE), null);
  } finally {
    kv.close();
  }
});

Deno.test("auth cache: a read that raced a write is not stored", async () => {
  const { kv } = await memoryKv();
  try {
    const a = await seed(kv);
    const found = await findSession(kv, a.token, NOW);
    assert.ok(found);
    const fresh = await memoryKv();
    try {
      // A lookup took its mark, then a write to the same session landed before it stored.
      const mark = readMark(fresh.kv);
      await commit(atomic(fresh.kv).set(["sessions", a.hash], found.session));
      rememberAuth(fresh.kv, mark, found, 0n);
      assert.equal(await cachedAuth(fresh.kv, a.hash), null);
      // Without a write in between it is stored.
      rememberAuth(fresh.kv, readMark(fresh.kv), found, 0n);
      assert.equal((await cachedAuth(fresh.kv, a.hash))?.account.id, a.account.id);
    } finally {
      fresh.kv.close();
    }
  } finally {
    kv.close();
  }
});

Deno.test("auth cache: cached objects are frozen, so no handler can change them in place", async () => {
  const kv = await openKv(":memory:");
  try {
    const a = await seed(kv);
    await findSession(kv, a.token, NOW);
    const hit = await findSession(kv, a.token, NOW);
    assert.ok(hit && Object.isFrozen(hit.account) && Object.isFrozen(hit.account.roles));
    assert.throws(() => (hit.account as { name: string }).name = "x", TypeError);
  } finally {
    kv.close();
  }
});

Deno.test("auth cache: last_used is written once a minute and the next lookup caches again", async () => {
  const kv = await openKv(":memory:");
  try {
    const a = await seed(kv);
    await findSession(kv, a.token, NOW);
    const later = NOW + 2 * MINUTE;
    assert.equal((await findSession(kv, a.token, later))?.session.last_used, later);
    const stored = await kv.get<{ last_used: number }>(["sessions", a.hash]);
    assert.equal(stored.value?.last_used, later);
    assert.equal((await findSession(kv, a.token, later + 1))?.session.last_used, later);
    assert.equal(
      (await cachedAuth<{ session: Session; account: Account; hash: string }>(kv, a.hash))?.session
        .last_used,
      later,
    );
  } finally {
    kv.close();
  }
});

Deno.test("auth cache: another process's write on the same KV file is seen by the next lookup", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  const server = await openKv(path);
  const command = await openKv(path); // as `deno task roles` opens it
  const foreign = await Deno.openKv(path); // a tool that bypasses openKv
  try {
    const a = await seed(server);
    const b = await seed(server, "b@example.org");
    await findSession(server, a.token, NOW);
    await findSession(server, b.token, NOW);
    age(path);
    // Settled file: proven once against the epoch, then served from memory.
    assert.ok(await cachedAuth(server, a.hash));

    // A write that does not count in the epoch goes unseen: why every writer uses openKv.
    const acc = (await foreign.get<Account>(accountKey(b.account.id))).value!;
    await foreign.set(accountKey(b.account.id), { ...acc, name: "Foreign" });
    age(path);
    assert.equal((await findSession(server, b.token, NOW))?.account.name, "Ada");

    // The owner command's write counts: the file changed, the epoch moved, all is re-read.
    const accA = (await command.get<Account>(accountKey(a.account.id))).value!;
    await commit(atomic(command).set(accountKey(a.account.id), { ...accA, roles: ["owner"] }));
    assert.deepEqual((await findSession(server, a.token, NOW))?.account.roles, ["owner"]);
    age(path);
    assert.deepEqual((await findSession(server, a.token, NOW))?.account.roles, ["owner"]);
    assert.equal((await findSession(server, b.token, NOW))?.account.name, "Foreign");

    // Signed out from the other process, then a lookup once the file has settled.
    await commit(atomic(command).delete(["sessions", a.hash]));
    age(path);
    assert.equal(await findSession(server, a.token, NOW), null);

    // The server's own writes elsewhere change the file but never drop its cache.
    await findSession(server, b.token, NOW);
    await commit(atomic(server).set(["unrelated"], 1));
    age(path);
    assert.ok(await cachedAuth(server, b.hash));
  } finally {
    server.close();
    command.close();
    foreign.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Sets the write-ahead log's timestamps to `ms`, as a write at that moment would. */
function stamp(path: string, ms: number) {
  Deno.utimeSync(`${path}-wal`, new Date(ms), new Date(ms));
}

/** A moment `ago` ms back whose timestamp shows milliseconds (not a whole second). */
const withMillis = (ago: number) => {
  const t = Date.now() - ago;
  return t % 1000 === 0 ? t - 1 : t;
};

Deno.test("auth cache: how long a written file is not trusted follows its timestamps' grain", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Millisecond timestamps (Linux, macOS): the wait is FINE_SETTLE_MS, not two seconds.
    const fine = `${dir}/fine.sqlite3`;
    const kv = await openKv(fine);
    try {
      const a = await seed(kv);
      stamp(fine, withMillis(FINE_SETTLE_MS + 250));
      assert.ok(await findSession(kv, a.token, NOW));
      assert.ok(await cachedAuth(kv, a.hash), "trusted once FINE_SETTLE_MS old");
      stamp(fine, withMillis(5));
      assert.equal(await cachedAuth(kv, a.hash), null, "not while a second write could hide");
      stamp(fine, withMillis(FINE_SETTLE_MS - 100));
      assert.equal(await cachedAuth(kv, a.hash), null, "nor until FINE_SETTLE_MS have passed");
      stamp(fine, withMillis(FINE_SETTLE_MS + 250));
      assert.ok(await cachedAuth(kv, a.hash));
    } finally {
      kv.close();
    }
    // Whole-second timestamps (FAT keeps two): the cache waits two seconds.
    const coarse = `${dir}/coarse.sqlite3`;
    const kv2 = await openKv(coarse);
    try {
      const a = await seed(kv2);
      const second = Math.floor(Date.now() / 1000) * 1000;
      stamp(coarse, second);
      assert.ok(await findSession(kv2, a.token, NOW));
      assert.equal(await cachedAuth(kv2, a.hash), null, "under two seconds on a coarse clock");
      stamp(coarse, second - SETTLE_MS - 1000);
      assert.ok(await cachedAuth(kv2, a.hash), "trusted once two seconds old");
    } finally {
      kv2.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("auth cache: a freshly written file is never trusted; a network KV never caches", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  const server = await openKv(path);
  try {
    const a = await seed(server);
    await findSession(server, a.token, NOW);
    // Written a moment ago: the cache stands aside and every lookup reads.
    stamp(path, withMillis(1));
    assert.equal(await cachedAuth(server, a.hash), null);
    assert.ok(await findSession(server, a.token, NOW));
  } finally {
    server.close();
    await Deno.remove(dir, { recursive: true });
  }
  const kv = await Deno.openKv(":memory:");
  registerKv(kv, "https://api.deno.com/databases/x/connect");
  try {
    const a = await seed(kv);
    await findSession(kv, a.token, NOW);
    await findSession(kv, a.token, NOW);
    assert.equal(await cachedAuth(kv, a.hash), null);
    // No key that every sign-in and every lookup goes through. Creating the account counted in
    // the epoch; another sign-in and a `last_used` touch do not; ending a session does (a
    // process caching on the file behind a denokv must hear of it).
    const epoch = async () => (await kv.get<Deno.KvU64>(["auth_epoch"])).value?.value ?? 0n;
    assert.equal(await epoch(), 1n);
    const second = await transact(async () => {
      const s = await prepareSession(kv, a.account.id, NOW);
      return { op: s.apply(atomic(kv)), result: s.token };
    });
    await findSession(kv, a.token, NOW + 2 * MINUTE); // writes last_used
    assert.equal(await epoch(), 1n);
    await commit(atomic(kv).delete(["sessions", sha256hex(second)]));
    assert.equal(await epoch(), 2n);
    const read: Deno.KvKey[][] = [];
    const getMany = kv.getMany.bind(kv);
    // deno-lint-ignore no-explicit-any
    (kv as any).getMany = (keys: Deno.KvKey[], ...rest: unknown[]) => {
      read.push(keys);
      // deno-lint-ignore no-explicit-any
      return (getMany as any)(keys, ...rest);
    };
    assert.ok(await findSession(kv, a.token, NOW + 2 * MINUTE));
    assert.ok(read.length > 0 && read.every((keys) => !keys.some((k) => k[0] === "auth_epoch")));
  } finally {
    kv.close();
  }
});

Deno.test("auth cache: a write still finishing while a lookup sets the baseline never hides a later foreign write", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  const real = await Deno.openKv(path);
  // Holds back the JS side of one commit after it landed in the file, as a busy event loop can.
  let gate: Promise<void> | null = null;
  const held = aroundCommits(real, async (commit) => {
    const wait = gate;
    const res = await commit();
    if (wait) await wait;
    return res;
  });
  const server = held;
  registerKv(server, path);
  const command = await openKv(path);
  try {
    const a = await seed(server);
    const b = await seed(server, "b@example.org");
    // The server writes b's account; its commit lands but its caller resumes only later.
    let release!: () => void;
    gate = new Promise((r) => release = r);
    const accB = (await server.get<Account>(accountKey(b.account.id))).value!;
    const write = commit(atomic(server).set(accountKey(b.account.id), { ...accB, name: "B2" }));
    gate = null;
    await new Promise((r) => setTimeout(r, 50));
    // Meanwhile a lookup reads a, with an epoch that already counts that write.
    assert.equal((await findSession(server, a.token, NOW))?.account.name, "Ada");
    release();
    await write;
    // The owner command (another process) changes a's roles.
    const accA = (await command.get<Account>(accountKey(a.account.id))).value!;
    await commit(atomic(command).set(accountKey(a.account.id), { ...accA, roles: ["owner"] }));
    age(path);
    assert.deepEqual((await findSession(server, a.token, NOW))?.account.roles, ["owner"]);
  } finally {
    server.close();
    command.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("auth cache: a process that may not stat the write-ahead log never trusts its cache", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  const command = await openKv(path); // the owner command, in this process
  try {
    const a = await seed(command);
    age(path);
    // The server may read the KV file itself but not its -wal (deno run --allow-read=<file>).
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        `--allow-read=${path}`,
        `--allow-write=${dir}`,
        "tests/_cache_child.ts",
        path,
        a.token,
        String(NOW),
      ],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const writer = child.stdin.getWriter();
    let buffered = "";
    const nextLine = async () => {
      while (!buffered.includes("\n")) {
        const { value, done } = await lines.read();
        if (done) throw new Error("child ended");
        buffered += value;
      }
      const [line, ...rest] = buffered.split("\n");
      buffered = rest.join("\n");
      return JSON.parse(line);
    };
    const lookUp = async () => {
      await writer.write(new TextEncoder().encode("go\n"));
      return await nextLine();
    };
    try {
      assert.deepEqual(await nextLine(), []);
      age(path);
      assert.deepEqual(await lookUp(), []);
      // The owner command makes a an owner: the write goes to the -wal file only.
      const acc = (await command.get<Account>(accountKey(a.account.id))).value!;
      await commit(atomic(command).set(accountKey(a.account.id), { ...acc, roles: ["owner"] }));
      const past = new Date(Date.now() - 60_000);
      Deno.utimeSync(`${path}-wal`, past, past);
      assert.deepEqual(await lookUp(), ["owner"]);
    } finally {
      await writer.close();
      await lines.cancel();
      await child.status;
    }
  } finally {
    command.close();
    await Deno.remove(dir, { recursive: true });
  }
});
