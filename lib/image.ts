// imagescript's top-level module loads a native codec through FFI, which Deno Deploy does not
// offer; its WebAssembly decoders and pure-JS PNG encoder need no such thing, so we use those.
// The codecs are loaded on the first picture, not at start, where they would cost every process
// start-up time and memory (docs/performance.md, "Start-up and the request path").
const codecs = () => import("./_image_codecs.ts");

export type ImageKind = "png" | "jpeg" | "gif";

/** An RGBA picture, 4 bytes a pixel, rows top to bottom. */
export interface Rgba {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Decodes the first frame of a PNG, JPEG or GIF; throws on damaged data. */
export async function decodeImage(bytes: Uint8Array, kind: ImageKind): Promise<Rgba> {
  if (kind === "png") {
    const { width, height, framebuffer } = (await (await codecs()).pngDecoder.init()).decode(bytes);
    return { width, height, data: new Uint8Array(framebuffer) };
  }
  if (kind === "jpeg") {
    const fb = (await (await codecs()).jpegDecoder.init()).decode(bytes);
    return { width: fb.width, height: fb.height, data: jpegToRgba(fb) };
  }
  const decoder = new (await (await codecs()).gifDecoder.init()).Decoder(bytes);
  const width = decoder.width | 0;
  const height = decoder.height | 0;
  const data = new Uint8Array(width * height * 4);
  for (const frame of decoder.frames()) {
    // Only the first frame: a profile picture does not move.
    for (let y = 0; y < frame.height; y++) {
      const ty = frame.y + y;
      if (ty < 0 || ty >= height) continue;
      for (let x = 0; x < frame.width; x++) {
        const tx = frame.x + x;
        if (tx < 0 || tx >= width) continue;
        const s = (y * frame.width + x) * 4;
        if (frame.buffer[s + 3] === 0) continue;
        data.set(frame.buffer.subarray(s, s + 4), (ty * width + tx) * 4);
      }
    }
    break;
  }
  return { width, height, data };
}

function jpegToRgba(fb: { width: number; height: number; format: number; buffer: Uint8Array }) {
  const n = fb.width * fb.height;
  const out = new Uint8Array(n * 4);
  const b = fb.buffer;
  for (let i = 0; i < n; i++) {
    const o = i * 4;
    if (fb.format === 0) { // grey
      out[o] = out[o + 1] = out[o + 2] = b[i];
    } else if (fb.format === 1) { // RGB
      out[o] = b[i * 3];
      out[o + 1] = b[i * 3 + 1];
      out[o + 2] = b[i * 3 + 2];
    } else { // CMYK, as imagescript converts it
      const k = 1 - b[i * 4 + 3] / 255;
      out[o] = 255 * (1 - b[i * 4] / 255) * k;
      out[o + 1] = 255 * (1 - b[i * 4 + 1] / 255) * k;
      out[o + 2] = 255 * (1 - b[i * 4 + 2] / 255) * k;
    }
    out[o + 3] = 255;
  }
  return out;
}

/**
 * The centred square of a picture scaled to `size` x `size`: each output pixel averages the
 * source pixels it covers (sharp when shrinking), or samples the nearest when enlarging.
 */
export function centreSquare(img: Rgba, size: number): Rgba {
  const side = Math.min(img.width, img.height);
  const ox = Math.floor((img.width - side) / 2);
  const oy = Math.floor((img.height - side) / 2);
  const scale = side / size;
  const out = new Uint8Array(size * size * 4);
  const acc = new Float64Array(4);
  for (let y = 0; y < size; y++) {
    const y0 = oy + Math.floor(y * scale);
    const y1 = Math.max(y0 + 1, oy + Math.floor((y + 1) * scale));
    for (let x = 0; x < size; x++) {
      const x0 = ox + Math.floor(x * scale);
      const x1 = Math.max(x0 + 1, ox + Math.floor((x + 1) * scale));
      acc.fill(0);
      for (let sy = y0; sy < y1; sy++) {
        let s = (sy * img.width + x0) * 4;
        for (let sx = x0; sx < x1; sx++, s += 4) {
          acc[0] += img.data[s];
          acc[1] += img.data[s + 1];
          acc[2] += img.data[s + 2];
          acc[3] += img.data[s + 3];
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * size + x) * 4;
      for (let c = 0; c < 4; c++) out[o + c] = Math.round(acc[c] / n);
    }
  }
  return { width: size, height: size, data: out };
}

export async function encodePng(img: Rgba): Promise<Uint8Array> {
  const encoded = await (await codecs()).pngEncoder.encode(img.data, {
    width: img.width,
    height: img.height,
    channels: 4,
    level: 6,
  });
  return new Uint8Array(encoded);
}
