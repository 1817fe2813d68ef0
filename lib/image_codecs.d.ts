// Types for the parts of imagescript that lib/image.ts uses (the package types only its
// top-level module).
interface Codecs {
  init(): Promise<{
    decode(data: Uint8Array): {
      width: number;
      height: number;
      framebuffer: Uint8Array;
      format: number;
      buffer: Uint8Array;
    };
    Decoder: new (data: Uint8Array) => {
      width: number;
      height: number;
      frames(): Iterable<
        { x: number; y: number; width: number; height: number; buffer: Uint8Array }
      >;
    };
  }>;
  encode(
    data: Uint8Array,
    opts: { width: number; height: number; channels: number; level: number },
  ): Uint8Array | Promise<Uint8Array>;
}
declare const codecs: Codecs;
export default codecs;
