import assert from "node:assert/strict";
import { dumpStream, RestoreError, restoreStream } from "../kv/store/backup.ts";
import { startFreshServer } from "./_real_server.ts";
import { runTask } from "./_server.ts";

/** Every entry of a KV, KvU64 made comparable. */
async function entries(kv: Deno.Kv): Promise<[Deno.KvKey, unknown][]> {
  const out: [Deno.KvKey, unknown][] = [];
  const plain = (v: unknown) => v instanceof Deno.KvU64 ? { KvU64: v.value } : v;
  for await (const e of kv.list({ prefix: [] })) out.push([e.key, plain(e.value)]);
  return out;
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
const streamOf = (b: Uint8Array<ArrayBuffer> | string) => new Response(b).body!;

Deno.test("backup: every type KV stores comes back as it was", async () => {
  using src = await Deno.openKv(":memory:");
  const shared = { n: 1 };
  const values: [Deno.KvKey, unknown][] = [
    [["bytes", new Uint8Array([0, 1, 2])], new Uint8Array(60_000).map((_, i) => i % 251)],
    [["u64"], new Deno.KvU64(18446744073709551615n)],
    [["big", 5n], -(10n ** 40n)],
    [["num", -1.5], [NaN, -0, Infinity, -Infinity, 0.1, 2 ** 53]],
    [["date", true], new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6))],
    [["map"], new Map<unknown, unknown>([[1, new Set(["a", 2n])], ["k", { deep: [null] }]])],
    [["text"], 'line\nbreak\r\n\u2028 "quoted" {"end":true} é 🎉'],
    [["shape"], { a: undefined, b: null, c: [1, [2, [3]]], d: shared, e: shared, $: "x" }],
    [["regexp"], /a+b/gi],
    [["typed"], [new Int16Array([1, -2]), new Float64Array([0.5]), new Uint8Array(0).buffer]],
    [["empty"], ""],
  ];
  for (const [k, v] of values) await src.set(k, v);
  const dump = await bytesOf(dumpStream(src));
  const lines = new TextDecoder().decode(dump).trimEnd().split("\n");
  assert.equal(lines.length, values.length + 2, "a head, one line per entry, an end line");
  assert.equal(JSON.parse(lines.at(-1)!).entries, values.length);

  using dst = await Deno.openKv(":memory:");
  const done = await restoreStream(dst, streamOf(dump));
  assert.equal(done.entries, values.length);
  assert.deepStrictEqual(await entries(dst), await entries(src));
  const shape = (await dst.get<{ d: object; e: object }>(["shape"])).value!;
  assert.ok(shape.d === shape.e, "a shared object stays shared");

  // A second restore into the now non-empty KV is refused and writes nothing.
  await assert.rejects(() => restoreStream(dst, streamOf(dump)), RestoreError);
  assert.equal((await entries(dst)).length, values.length);
});

Deno.test("backup: a foreign, cut or altered dump is refused, saying how far it got", async () => {
  using src = await Deno.openKv(":memory:");
  for (let i = 0; i < 900; i++) await src.set(["n", i], i);
  const text = new TextDecoder().decode(await bytesOf(dumpStream(src)));
  const cases: [string, string, RegExp][] = [
    ["not a dump", "hello\n", /not a catalogue-kv-dump version 1 file/],
    ["cut short", text.split("\n").slice(0, 500).join("\n") + "\n", /ends early .*: 499 entries/],
    ["garbage line", text.replace(/\n\[.*?\n/, "\nnope\n"), /line 2: not a dump entry/],
    ["count differs", text.replace('"entries":900', '"entries":901'), /says 901 entries, 900/],
  ];
  for (const [name, dump, message] of cases) {
    using dst = await Deno.openKv(":memory:");
    await assert.rejects(() => restoreStream(dst, streamOf(dump)), message, name);
  }
});

Deno.test("backup: the real service round-trips through backup and restore tasks", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fileBytes = new Uint8Array(300_000).map((_, i) => i % 80 === 79 ? 10 : 97 + (i * 7) % 26);
    let token = "";
    let kvPath = "";
    const paths = ["/api/me", "/api/me/files", "/api/me/services"];
    let head = "";
    const answers: string[] = [];
    {
      kvPath = `${dir}/kv.sqlite3`;
      await using s = await startFreshServer({ KV_PATH: kvPath });
      token = await s.signIn("round@example.org");
      const auth = { authorization: `Bearer ${token}` };
      const up = await fetch(`${s.base}/api/me/files`, {
        method: "PUT",
        headers: { ...auth, "X-File-Name": "data.txt" },
        body: fileBytes,
      });
      assert.equal(up.status, 201, await up.clone().text());
      const svc = await fetch(`${s.base}/api/me/services`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "Nightly", check: "webhook:", interval: 5 }),
      });
      assert.equal(svc.status, 200);
      await fetch((await svc.json()).hook_url.replace(/^https?:\/\/[^/]+/, s.base), {
        method: "POST",
      }).then((r) => r.body?.cancel());
      for (const p of paths) {
        answers.push(await (await fetch(`${s.base}${p}`, { headers: auth })).text());
      }
      head = (await (await fetch(`${s.base}/api/audit/verify`)).json()).head;
      // Stopped before the dump: a point-in-time copy (kv/store/backup.ts says why).
      Deno.kill(s.pid, "SIGTERM");
      assert.equal((await s.exited).code, 0);
      const dumped = await runTask("backup", [`${dir}/kv.dump`], { KV_PATH: kvPath });
      assert.equal(dumped.code, 0, dumped.stderr);
      assert.match(dumped.stderr, /backup: \d+ entries, [\d.]+ MiB\n$/);
      // To standard output too: the same entries.
      const out = await runTask("backup", [], { KV_PATH: kvPath });
      assert.equal(out.code, 0, out.stderr);
      const body = (t: string) => t.split("\n").slice(1).join("\n");
      assert.equal(body(out.stdout), body(await Deno.readTextFile(`${dir}/kv.dump`)));
    }

    const restoredPath = `${dir}/restored/kv.sqlite3`;
    await Deno.mkdir(`${dir}/restored`);
    // Into a new file: refused (nothing created) until --create says so.
    const unsaid = await runTask("restore", [`${dir}/kv.dump`], { KV_PATH: restoredPath });
    assert.equal(unsaid.code, 2);
    assert.match(unsaid.stderr, /^restore: KV_PATH: there is no KV database at .*--create/);
    await assert.rejects(Deno.stat(restoredPath), Deno.errors.NotFound);
    const loaded = await runTask("restore", [`${dir}/kv.dump`, "--create"], {
      KV_PATH: restoredPath,
    });
    assert.equal(loaded.code, 0, loaded.stderr);
    assert.match(loaded.stderr, /restore: \d+ entries/);
    const again = await runTask("restore", [`${dir}/kv.dump`], { KV_PATH: restoredPath });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /restore refused: the KV is not empty/);

    // Every key and value, the file's bytes included.
    {
      using a = await Deno.openKv(kvPath);
      using b = await Deno.openKv(restoredPath);
      const [ea, eb] = [await entries(a), await entries(b)];
      assert.ok(ea.length > 10);
      assert.deepStrictEqual(eb, ea);
      const chunks = ea.filter(([, v]) => v instanceof Uint8Array);
      const stored = chunks.reduce((n, [, v]) => n + (v as Uint8Array).length, 0);
      assert.ok(stored >= fileBytes.length, "the file's chunks are in the dump");
    }

    // The restored service answers the same, to the same token.
    await using r = await startFreshServer({ KV_PATH: restoredPath });
    const auth = { authorization: `Bearer ${token}` };
    for (const [i, p] of paths.entries()) {
      assert.equal(await (await fetch(`${r.base}${p}`, { headers: auth })).text(), answers[i], p);
    }
    // The record trail checks out and ends at the same line.
    const verified = await (await fetch(`${r.base}/api/audit/verify`)).json();
    assert.deepEqual([verified.ok, verified.head], [true, head]);
    const list = JSON.parse(answers[1]);
    const item = (list.items ?? list.files)[0];
    const got = await fetch(new URL(item.url, r.base), { headers: auth });
    assert.deepStrictEqual(new Uint8Array(await got.arrayBuffer()), fileBytes);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
