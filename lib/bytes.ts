/**
 * Byte chunks read from a stream, joined into one array of `size` bytes (the chunks' total, or
 * fewer: what goes past `size` is left out).
 */
export function joinBytes(chunks: Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
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
