import assert from "node:assert/strict";
import { runTask, spawnService } from "./_server.ts";

/**
 * The owner's commands refuse a KV_PATH the way the server does (cli/_kv.ts `ownerKvPath`): one
 * plain line, exit 2, nothing created; a new database only with `--create`. And an ordinary run
 * of the server writes no runtime warning.
 */

/** Every file and folder under `dir`, relative to it. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    out.push(e.name);
    if (e.isDirectory) out.push(...(await tree(`${dir}/${e.name}`)).map((n) => `${e.name}/${n}`));
  }
  return out.sort();
}

const oneLine = (r: { stderr: string }) => r.stderr.trimEnd().split("\n").length === 1;

Deno.test("owner commands: a mistyped KV_PATH exits 2 with one line and creates nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/modules.json`, '{"modules": []}');
    await Deno.writeTextFile(`${dir}/kv.dump`, "not a dump\n");
    const before = await tree(dir);
    const env = { KV_PATH: `${dir}/dta/kv.sqlite3` };
    const runs: [string, string[]][] = [
      ["roles", ["grant", "x@example.org", "owner"]],
      ["roles", ["list"]],
      ["roles", ["grant", "x@example.org", "owner", "--create"]],
      ["catalogue", ["import", `${dir}/modules.json`]],
      ["catalogue", ["export"]],
      ["demo", []],
      ["backup", []],
      ["restore", [`${dir}/kv.dump`, "--create"]],
      ["compact", []],
    ];
    const results = await Promise.all(runs.map(([task, args]) => runTask(task, args, env)));
    results.forEach((r, i) => {
      const what = runs[i].flat().join(" ");
      assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, "", what);
      assert.ok(oneLine(r), `${what}: ${r.stderr}`);
      assert.match(
        r.stderr,
        new RegExp(`^${runs[i][0]}: KV_PATH: the folder .*/dta does not exist \\(check the path`),
        what,
      );
    });
    assert.deepEqual(await tree(dir), before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("owner commands: no database at KV_PATH, or a file that is not one: refused; --create makes one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    const absent = await runTask("roles", ["grant", "x@example.org", "owner"], { KV_PATH: kvPath });
    assert.equal(absent.code, 2, absent.stderr);
    assert.ok(oneLine(absent), absent.stderr);
    assert.match(absent.stderr, /^roles: KV_PATH: there is no KV database at .*kv\.sqlite3 \(/);
    assert.match(absent.stderr, /--create makes a new one\)\n$/);
    assert.deepEqual(await tree(dir), []);

    const notes = `${dir}/notes.txt`;
    await Deno.writeTextFile(notes, "shopping list\n");
    for (const args of [["list"], ["list", "--create"]]) {
      const r = await runTask("roles", args, { KV_PATH: notes });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `roles: KV_PATH: ${notes} is not a KV database (check the path)\n`);
    }
    assert.equal(await Deno.readTextFile(notes), "shopping list\n");
    // The server refuses the same file in the same words.
    const server = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts"],
      cwd: new URL("..", import.meta.url),
      env: { KV_PATH: notes, PORT: "0", HOSTNAME: "127.0.0.1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(server.code, 1);
    assert.match(
      new TextDecoder().decode(server.stderr),
      new RegExp(`cannot start: KV_PATH: ${notes} is not a KV database \\(check the path\\)`),
    );

    const made = await runTask("roles", ["grant", "--create", "x@example.org", "owner"], {
      KV_PATH: kvPath,
    });
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^created account \d+ \(x@example\.org\) with role owner\n$/);
    const listed = await runTask("roles", ["list"], { KV_PATH: kvPath });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /x@example\.org\towner/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("server: an ordinary run (pages, forms, JSON) writes nothing to standard error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using server = await spawnService(`${dir}/kv.sqlite3`, {
      BASE_URL: "http://127.0.0.1",
    });
    const form = await fetch(`${server.url}/request`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams({
        name: "Ada",
        email: "ada@example.org",
        kind: "module",
        text: "A module about ponds, please.",
      }),
      redirect: "manual",
    });
    await form.body?.cancel();
    assert.equal(form.status, 303);
    const json = await fetch(`${server.url}/api/verify/request`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "ada@example.org", purpose: "login", age_ok: true }),
    });
    await json.body?.cancel();
    assert.equal(json.status, 202);
    for (const path of ["/", "/catalogue", "/contribute"]) {
      const page = await fetch(`${server.url}${path}`);
      await page.body?.cancel();
      assert.equal(page.status, 200, path);
    }
    // Deno.serve's warning is written when the answer goes out: give it that moment.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(server.stderr.text, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
