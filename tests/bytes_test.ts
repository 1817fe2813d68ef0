import assert from "node:assert/strict";
import { joinBytes } from "../lib/bytes.ts";

Deno.test("joinBytes: chunks joined in order, cut at the size asked", () => {
  const chunks = [new Uint8Array([1, 2]), new Uint8Array([3]), new Uint8Array([4, 5, 6])];
  assert.deepEqual([...joinBytes(chunks, 6)], [1, 2, 3, 4, 5, 6]);
  assert.deepEqual([...joinBytes(chunks, 4)], [1, 2, 3, 4]);
  assert.deepEqual([...joinBytes(chunks, 2)], [1, 2]);
  assert.equal(joinBytes([], 0).length, 0);
  const one = new Uint8Array([7, 8]);
  assert.equal(joinBytes([one], 2), one, "a single chunk of the size as it is");
  assert.deepEqual([...joinBytes([one], 1)], [7]);
});
