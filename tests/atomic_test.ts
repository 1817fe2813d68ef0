import assert from "node:assert/strict";
import { openKv } from "../kv/_atomic.ts";

Deno.test("openKv: atomics chain and commit on a KV file", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await openKv(`${dir}/kv.sqlite3`);
  try {
    const res = await kv.atomic().check({ key: ["a"], versionstamp: null }).set(["a"], 1)
      .delete(["b"]).sum(["n"], 2n).commit();
    assert.equal(res.ok, true);
    assert.equal((await kv.get(["a"])).value, 1);
    await kv.set(["b"], 2);
    assert.equal((await kv.getMany([["a"], ["b"]]))[1].value, 2);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
