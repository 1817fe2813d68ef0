import assert from "node:assert/strict";
import { verifyTrail } from "../kv/store/trail.ts";
import { testApp } from "./_helpers.ts";

/**
 * `deno task compact` against a real KV file: the erased account's address and texts are in
 * the file's raw bytes after the erasure (free pages), refused while another process holds the
 * file, gone after the compaction, and what was not erased is intact.
 */

const ROOT = new URL("..", import.meta.url).pathname;
const EMAIL = "zebedee.quillfeather@example.org";
// Each is written many times (30 journal entries), so some copy is sure to sit in a free page
// after the erasure whatever pages later writes reuse.
const NEEDLES = [EMAIL, "Quillfeather", "Thaumaturgical"];

/** How often each needle occurs in the raw bytes of the KV file and its -wal. */
async function grep(path: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const files: Uint8Array[] = [];
  for (const p of [path, `${path}-wal`]) {
    try {
      files.push(await Deno.readFile(p));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  for (const needle of NEEDLES) {
    out[needle] = 0;
    for (const bytes of files) {
      // latin1 keeps one character per byte, so the search is on the raw bytes.
      const text = new TextDecoder("latin1").decode(bytes);
      for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) out[needle]++;
    }
  }
  return out;
}

async function compact(kvPath: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "compact"],
    cwd: ROOT,
    env: { KV_PATH: kvPath, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("compact: erased values leave the KV file's bytes; refused while the file is in use", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  try {
    {
      await using t = await testApp({ kvPath: path });
      const bob = await t.signIn("bob.keeper@example.org", { name: "Bob Keeper" });
      const note = await t.req("POST", "/api/me/journal", {
        token: bob.token,
        body: { text: "A lasting note" },
      });
      assert.equal(note.status, 201, note.text);
      const z = await t.signIn(EMAIL, { name: "Zebedee Quillfeather" });
      const bio = await t.req("PATCH", "/api/me", {
        token: z.token,
        body: { bio: "Thaumaturgical biography" },
      });
      assert.equal(bio.status, 200, bio.text);
      for (let i = 0; i < 30; i++) {
        const r = await t.req("POST", "/api/me/journal", {
          token: z.token,
          body: {
            text: `Thaumaturgical diary of Quillfeather, page ${i}. ${"Lorem ipsum. ".repeat(40)}`,
          },
        });
        assert.equal(r.status, 201, r.text);
      }
      const gone = await t.req("DELETE", "/api/me", { token: z.token });
      assert.equal(gone.status, 200, gone.text);
      // Logically erased: no KV entry holds any of it.
      for await (const e of t.kv.list({ prefix: [] })) {
        const line = JSON.stringify(
          [e.key, e.value],
          (_k, v) => typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? "" : v,
        );
        for (const n of NEEDLES) assert.ok(!line.includes(n), `${n} in ${line}`);
      }
    }
    // Physically still there: the file keeps the bytes in free pages.
    const before = await grep(path);
    for (const n of NEEDLES) assert.ok(before[n] > 0, `before compaction ${n}: ${before[n]}`);

    // While another process holds the file (as the server does), the command refuses.
    const holder = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-write", "tests/_kv_holder.ts", path],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = holder.stdout.getReader();
    const first = await reader.read();
    assert.match(new TextDecoder().decode(first.value), /ready/);
    const refused = await compact(path);
    holder.stdin.close();
    reader.releaseLock();
    await holder.stdout.cancel();
    assert.equal((await holder.status).code, 0);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /in use: stop the server/);
    assert.deepEqual(await grep(path), before);

    const done = await compact(path);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /^compacted .*kv\.sqlite3: \d+ KiB -> \d+ KiB/);
    const after = await grep(path);
    assert.deepEqual(after, Object.fromEntries(NEEDLES.map((n) => [n, 0])));

    // What was not erased is intact, and the trail still verifies.
    {
      await using t = await testApp({ kvPath: path });
      const bob = await t.signIn("bob.keeper@example.org");
      const me = await t.req("GET", "/api/me", { token: bob.token });
      assert.equal(me.body.name, "Bob Keeper");
      const list = await t.req("GET", "/api/me/journal", { token: bob.token });
      assert.deepEqual(list.body.items.map((j: { text: string }) => j.text), ["A lasting note"]);
      assert.equal((await verifyTrail(t.kv, true)).ok, true);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compact: a KV that is not a file is refused, naming why", async () => {
  for (const kvPath of [":memory:", "https://kv.example.invalid/db"]) {
    const r = await compact(kvPath);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /does not name a KV file.*platform stores the data/);
  }
  // A path with no KV file is refused as every owner command refuses it (cli/_kv.ts).
  const r = await compact("/nonexistent/dir/kv.sqlite3");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /\ncompact: KV_PATH: the folder \/nonexistent\/dir does not exist/);
});
