/**
 * IEEE 754 half precision, the element type of pgvector's `halfvec` (its binary form: an int16
 * dimension count, an unused int16, then each element as a big-endian half). A team store keeps
 * vectors as halves: half the bytes on disk and over the wire, and the local index quantizes far
 * more coarsely anyway.
 */
import { HALF_FLOAT_WASM_BASE64 } from './halfFloat-wasm';
import { instantiateKernel, memoryOf, type WasmMemory } from './wasmKernel';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The half nearest to `x` (ties to even); beyond the half range, ±Infinity. */
export function toHalf(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (rest > mid || (rest === mid && half & 1) ? half + 1 : half);
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa rounds into the exponent, as it should.
  return sign | (rest > 0x1000 || (rest === 0x1000 && half & 1) ? half + 1 : half);
}

let table: Float32Array | undefined;

/**
 * Every half's value as a float (256 KB, built on first use): decoding is one lookup per element.
 * Built from the bits (a half's exponent and mantissa placed in a float's), as arithmetic it took
 * 10 ms of the first answer's turn.
 */
function halfTable(): Float32Array {
  if (table) return table;
  table = new Float32Array(65536);
  const bits = new Uint32Array(table.buffer);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) table[h] = (sign ? -mant : mant) * 2 ** -24;
    else if (exp === 0x1f) bits[h] = (sign | 0x7f800000 | (mant << 13)) >>> 0;
    else bits[h] = (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0;
  }
  return table;
}

/** A vector in `halfvec`'s binary form. */
export function encodeHalfvec(v: ArrayLike<number>): Buffer {
  const out = Buffer.allocUnsafe(4 + 2 * v.length);
  out.writeInt16BE(v.length, 0);
  out.writeInt16BE(0, 2);
  for (let i = 0; i < v.length; i++) out.writeUInt16BE(toHalf(v[i]), 4 + 2 * i);
  return out;
}

interface HalfKernel {
  memory: WasmMemory;
  decode(src: number, dst: number, n: number): number;
}
let kernel: HalfKernel | null | undefined;

/** The WebAssembly SIMD decoder (`halfFloat.wat`), or null where it cannot run (the table is used). */
function halfKernel(): HalfKernel | null {
  if (kernel !== undefined) return kernel;
  const k = instantiateKernel(HALF_FLOAT_WASM_BASE64);
  kernel = k && { memory: k.memory, decode: k.exports.decode as HalfKernel['decode'] };
  return kernel;
}

/**
 * Many `halfvec`s in binary form within one buffer (a `COPY` answer: row r's value is
 * `bytes[starts[r] .. ends[r])`), decoded into one pool, row r at r × `dimensions`; `problems[r]`
 * says why row r cannot be used (as `decodeHalfvec`), undefined when it can. Through WebAssembly
 * SIMD, eight halves at a time, where it runs: a newcomer decodes 150 million of them, 0.5–0.7 s
 * by the table on the extension host's thread.
 */
export function decodeHalfvecRows(
  bytes: Uint8Array,
  starts: ArrayLike<number>,
  ends: ArrayLike<number>,
  dimensions: number,
  useKernel = true,
): { pool: Float32Array; problems: (string | undefined)[] } {
  const rows = starts.length;
  const pool = new Float32Array(rows * dimensions);
  const problems = new Array<string | undefined>(rows).fill(undefined);
  const k = useKernel ? halfKernel() : null;
  if (!k) {
    for (let r = 0; r < rows; r++) {
      if (starts[r] < 0) {
        problems[r] = 'no value';
        continue;
      }
      const v = decodeHalfvec(
        Buffer.from(bytes.buffer, bytes.byteOffset + starts[r], Math.max(0, ends[r] - starts[r])),
        dimensions,
        pool.subarray(r * dimensions, (r + 1) * dimensions),
      );
      problems[r] = typeof v === 'string' ? v : undefined;
    }
    return { pool, problems };
  }
  // The answer's bytes, then the floats (16-byte aligned).
  const out = (bytes.length + 15) & ~15;
  const memory = memoryOf(k.memory, out + pool.byteLength);
  new Uint8Array(memory, 0, bytes.length).set(bytes);
  const view = new DataView(memory);
  for (let r = 0; r < rows; r++) {
    const length = ends[r] - starts[r];
    if (starts[r] < 0) problems[r] = 'no value';
    else if (length !== 4 + 2 * dimensions) problems[r] = `${Math.max(0, length)} bytes where ${4 + 2 * dimensions} were expected`;
    else if (view.getInt16(starts[r]) !== dimensions) problems[r] = `${view.getInt16(starts[r])} dimensions where ${dimensions} were expected`;
    else {
      const norm = k.decode(starts[r] + 4, out + r * dimensions * 4, dimensions);
      if (norm === 0) problems[r] = 'a zero vector';
      else if (!Number.isFinite(norm)) {
        const row = new Float32Array(memory, out + r * dimensions * 4, dimensions);
        problems[r] = `element ${row.findIndex((x) => !Number.isFinite(x))} is not a finite number`;
      }
    }
  }
  pool.set(new Float32Array(memory, out, pool.length));
  return { pool, problems };
}

/**
 * A `halfvec` in binary form read back (into `out` when given: a view of a larger buffer), or why
 * it cannot be used: another dimension, a cut value, an element that is not finite, or a zero
 * vector (no direction to compare).
 */
export function decodeHalfvec(bytes: Buffer, dimensions: number, out = new Float32Array(dimensions)): Float32Array | string {
  if (bytes.length !== 4 + 2 * dimensions) return `${bytes.length} bytes where ${4 + 2 * dimensions} were expected`;
  const dim = bytes.readInt16BE(0);
  if (dim !== dimensions) return `${dim} dimensions where ${dimensions} were expected`;
  const values = halfTable();
  let norm = 0;
  for (let i = 0, at = 4; i < dim; i++, at += 2) {
    const x = values[(bytes[at] << 8) | bytes[at + 1]];
    out[i] = x;
    norm += x * x;
  }
  // A half's square stays far below the float range, so the sum is finite exactly when every element is.
  if (!Number.isFinite(norm)) return `element ${out.findIndex((x) => !Number.isFinite(x))} is not a finite number`;
  if (norm === 0) return 'a zero vector';
  return out;
}
