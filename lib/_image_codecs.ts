// imagescript's WebAssembly decoders and pure-JS PNG encoder, imported only by lib/image.ts on
// first use (see there).
// @ts-types="./image_codecs.d.ts"
export { default as pngDecoder } from "imagescript/wasm/node/png.js";
// @ts-types="./image_codecs.d.ts"
export { default as jpegDecoder } from "imagescript/wasm/node/jpeg.js";
// @ts-types="./image_codecs.d.ts"
export { default as gifDecoder } from "imagescript/wasm/node/gif.js";
// @ts-types="./image_codecs.d.ts"
export { default as pngEncoder } from "imagescript/png/node.js";
