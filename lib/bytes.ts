/**
 * Byte chunks read from a stream, joined into one array of `size` bytes (the chunks' total, or
 * fewer: what goes past `size` is left out). A single chunk of exactly that size is answered as
 * it is, not copied.
 */
export function joinBytes<B extends ArrayBufferLike>(
  chunks: Uint8Array<B>[],
  size: number,
): Uint8Array<B | ArrayBuffer> {
  if (chunks.length === 1 && chunks[0].length === size) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    if (at >= size) break;
    const part = chunk.subarray(0, size - at);
    out.set(part, at);
    at += part.length;
  }
  return out;
}
