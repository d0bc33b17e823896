/**
 * The search core's WebAssembly kernels (`*.wat`, compiled into base64 by `scripts/build-wasm.mjs`),
 * each over a memory of its own: instantiated once by whoever uses it, or null where it cannot run
 * (the caller's JavaScript loop is used instead).
 */

// The part of the WebAssembly API used here (Node's typings declare it only with the DOM library).
export interface WasmMemory {
  buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Memory: new (d: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
}

/** The kernel in `base64` over a new memory (imported as `env.memory`), or null where it does not compile or run here. */
export function instantiateKernel(base64: string): { memory: WasmMemory; exports: Record<string, unknown> } | null {
  try {
    const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
    if (!wasm) return null;
    const memory = new wasm.Memory({ initial: 1 });
    const instance = new wasm.Instance(new wasm.Module(Buffer.from(base64, 'base64')), { env: { memory } });
    return { memory, exports: instance.exports };
  } catch {
    return null;
  }
}

/** A kernel's memory, grown to at least `bytes` first (growing replaces the buffer: views are made after). */
export function memoryOf(memory: WasmMemory, bytes: number): ArrayBuffer {
  if (memory.buffer.byteLength < bytes) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / 65536));
  return memory.buffer;
}
