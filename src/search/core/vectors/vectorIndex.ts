import { readSync } from 'node:fs';
import { HAMMING_WASM_BASE64 } from './hamming-wasm';
import { ROTATION_WASM_BASE64 } from './rotation-wasm';
import { instantiateKernel, memoryOf, type WasmMemory } from './wasmKernel';

export interface SearchHit {
  row: number;
  /** Cosine similarity (vectors are normalised). */
  score: number;
}

interface HammingKernel {
  memory: WasmMemory;
  hamming(codes: number, query: number, n: number, bytes: number, out: number): void;
}

let kernel: HammingKernel | null | undefined;
/** Which index's codes (and which version of them) the kernel's memory holds. */
let inKernel: { index: VectorIndex; version: number } | undefined;

/** The WebAssembly SIMD kernel, or null where WebAssembly SIMD is unavailable (a JS loop is used). */
function loadKernel(): HammingKernel | null {
  if (kernel !== undefined) return kernel;
  const k = instantiateKernel(HAMMING_WASM_BASE64);
  kernel = k && { memory: k.memory, hamming: k.exports.hamming as HammingKernel['hamming'] };
  return kernel;
}

interface RotationKernel {
  memory: WasmMemory;
  round(y: number, signs: number, n: number): void;
  /** Scales `rows` rows at `src` to length 1, adding each value to the f64 sums at `sum` (`rotation.wat`). */
  normalise(src: number, rows: number, dim: number, sum: number): void;
  /** Codes and scales of `rows` normalised rows at `src` (`rotation.wat`). */
  encode(
    src: number,
    rows: number,
    dim: number,
    centre: number,
    y: number,
    signs: number,
    rounds: number,
    n: number,
    scale: number,
    codes: number,
    alphas: number,
  ): void;
  /** The signs the memory holds (after the values, one round after another). */
  signs: Float32Array[] | undefined;
  /** The values' view (made again when the memory grows or the length changes). */
  values: Float32Array | undefined;
}

let rotationKernel: RotationKernel | null | undefined;

/** The WebAssembly SIMD rotation (signs, then the transform: 1.4 µs a round of 2,048 values, 9 µs in JavaScript), or null (the loop is used). */
function loadRotation(): RotationKernel | null {
  if (rotationKernel !== undefined) return rotationKernel;
  const k = instantiateKernel(ROTATION_WASM_BASE64);
  rotationKernel = k && {
    memory: k.memory,
    round: k.exports.round as RotationKernel['round'],
    encode: k.exports.encode as RotationKernel['encode'],
    normalise: k.exports.normalise as RotationKernel['normalise'],
    signs: undefined,
    values: undefined,
  };
  return rotationKernel;
}

function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * In-place fast Walsh–Hadamard transform of `n` values (a power of two), unscaled (×√n). Two
 * levels at a time (radix 4): half the passes over memory of the textbook loop.
 */
function fwht(v: Float32Array, n: number): void {
  let h = 1;
  for (; h * 4 <= n; h *= 4) {
    for (let i = 0; i < n; i += h * 4) {
      for (let j = i; j < i + h; j++) {
        const a = v[j];
        const b = v[j + h];
        const c = v[j + 2 * h];
        const d = v[j + 3 * h];
        const ab = a + b;
        const amb = a - b;
        const cd = c + d;
        const cmd = c - d;
        v[j] = ab + cd;
        v[j + h] = amb + cmd;
        v[j + 2 * h] = ab - cd;
        v[j + 3 * h] = amb - cmd;
      }
    }
  }
  if (h < n) {
    for (let j = 0; j < h; j++) {
      const a = v[j];
      const b = v[j + h];
      v[j] = a + b;
      v[j + h] = a - b;
    }
  }
}

/** Random ±1 signs from a seed (the rotation must be the same for every run and every process). */
function signs(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s & 0x80000000 ? -1 : 1;
  }
  return out;
}

const ROTATION_ROUNDS = 2;

/** Rows' bytes copied into the kernel's memory per call when encoding a block (about 1 MB). */
const ENCODE_BLOCK_BYTES = 1 << 20;

/** Rows of `dim` values a kernel call takes (of `count`): about ENCODE_BLOCK_BYTES of them, at least one. */
const rowsPerCall = (count: number, dim: number) => Math.max(1, Math.min(count, Math.floor(ENCODE_BLOCK_BYTES / (dim * 4))));

/** Puts `k` best (largest `score`) of `rows` first, in any order: quickselect, linear on average. */
function selectTop(score: Float32Array, rows: Int32Array, k: number): void {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo < hi) {
    const pivot = score[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (score[i] > pivot) i++;
      while (score[j] < pivot) j--;
      if (i <= j) {
        const ts = score[i];
        score[i] = score[j];
        score[j] = ts;
        const tr = rows[i];
        rows[i] = rows[j];
        rows[j] = tr;
        i++;
        j--;
      }
    }
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}

/**
 * Nearest-neighbour search by cosine similarity over normalised float32 vectors, without native
 * code, in three passes:
 * 1. every row's 1-bit code against the query's by Hamming distance (WebAssembly SIMD). The codes
 *    are signs after centring on the corpus mean and a fixed random rotation (randomised Hadamard
 *    transforms): real embeddings carry most of their variance in a few coordinates, which a sign
 *    per raw coordinate cannot see (recall@10 fell to 0.4 on such data); after the rotation every
 *    bit carries the same share;
 * 2. the best `candidates × WIDEN` (at least 1/64 of the rows) of those are estimated again, asymmetrically: the float query
 *    against each code, scaled by the row's stored correction (RaBitQ's estimator);
 * 3. the best `candidates` of those are re-scored exactly in float32.
 * Recall@10 against exact search on hard, anisotropic queries is printed by `npm run bench -- vectors`.
 */
export class VectorIndex {
  readonly dim: number;
  /** The dimension padded to a power of two (at least 128), the length of the rotation. */
  readonly padded: number;
  private vectors: Float32Array;
  private codes: Uint8Array;
  /** Per row: ||y||² / Σ|y| of its rotated, centred vector y (the estimator's scale). */
  private alphas: Float32Array;
  private alive: Uint8Array;
  private mean: Float32Array;
  private readonly rotation: Float32Array[];
  private rows = 0;
  readonly codeBytes: number;
  /** Scratch for rotating one vector. */
  private readonly scratch: Float32Array;
  /**
   * Where the float32 vectors live when they are not in memory (a large index): an open file of
   * rows back to back, read for the few rows the last pass re-scores.
   */
  private vectorFile: number | undefined;

  /** How many more rows the asymmetric pass estimates than are finally re-scored. */
  static WIDEN = 8;

  /** The dimension padded to a power of two, at least 128 (the rotation's length). */
  static paddedFor(dim: number): number {
    let p = 128;
    while (p < dim) p <<= 1;
    return p;
  }

  /** Bytes of one row's code for vectors of `dim` dimensions. */
  static codeBytesFor(dim: number): number {
    return VectorIndex.paddedFor(dim) / 8;
  }

  constructor(dim: number, capacity = 1024, seed = 0x9e3779b9) {
    this.dim = dim;
    const p = VectorIndex.paddedFor(dim);
    this.padded = p;
    this.codeBytes = p / 8;
    this.vectors = new Float32Array(capacity * dim);
    this.codes = new Uint8Array(capacity * this.codeBytes);
    this.alphas = new Float32Array(capacity);
    this.alive = new Uint8Array(capacity);
    this.mean = new Float32Array(dim);
    this.rotation = Array.from({ length: ROTATION_ROUNDS }, (_, i) => signs(p, seed + i * 7919));
    this.scratch = new Float32Array(p);
  }

  /** Builds an index over `count` vectors stored back to back (they are normalised in a copy). */
  static fromVectors(vectors: Float32Array, dim: number, headroom = 0): VectorIndex {
    const count = Math.floor(vectors.length / dim);
    const index = new VectorIndex(dim, Math.max(count + headroom, 1));
    index.vectors.set(vectors.subarray(0, count * dim));
    for (let r = 0; r < count; r++) normalise(index.vectors, r * dim, dim);
    index.rows = count;
    index.alive.fill(1, 0, count);
    index.recentre();
    return index;
  }

  /**
   * An index from its stored parts: codes and scales made by `parts()` (no rotation to compute
   * again), and the vectors either in memory or in a file (`vectorFile`, an open descriptor of
   * float32 rows), which keeps a million rows of 1,024 dimensions in about 135 MB.
   */
  static fromParts(p: {
    dim: number;
    count: number;
    mean: Float32Array;
    codes: Uint8Array;
    alphas: Float32Array;
    vectors?: Float32Array;
    vectorFile?: number;
    seed?: number;
    headroom?: number;
  }): VectorIndex {
    const index = new VectorIndex(p.dim, 1, p.seed);
    if (p.codes.length < p.count * index.codeBytes || p.alphas.length < p.count) throw new Error('stored codes are shorter than the index');
    index.mean.set(p.mean);
    // Room for the rows later updates append, so that an edit does not copy the whole index.
    const capacity = Math.max(1, p.count + (p.headroom ?? 0));
    const widen = <T extends Uint8Array | Float32Array>(a: T, perRow: number, make: (n: number) => T): T => {
      if (a.length >= capacity * perRow) return a;
      const out = make(capacity * perRow);
      out.set(a.subarray(0, p.count * perRow));
      return out;
    };
    index.codes = widen(p.codes, index.codeBytes, (n) => new Uint8Array(n));
    index.alphas = widen(p.alphas, 1, (n) => new Float32Array(n));
    index.alive = new Uint8Array(capacity).fill(1, 0, p.count);
    index.rows = p.count;
    if (p.vectors) index.vectors = widen(p.vectors, p.dim, (n) => new Float32Array(n));
    else {
      index.vectors = new Float32Array(0);
      index.vectorFile = p.vectorFile;
    }
    index.version++;
    return index;
  }

  /**
   * Encodes normalised vectors with a given mean, as an index with that mean would (for building
   * the parts of an index too large to hold as float32: block by block, straight to files).
   */
  static encoder(dim: number, mean: Float32Array, seed?: number): (vectors: Float32Array, rows: number) => { codes: Uint8Array; alphas: Float32Array } {
    const index = new VectorIndex(dim, 1, seed);
    index.mean.set(mean);
    return (vectors, rows) => {
      const codes = new Uint8Array(rows * index.codeBytes);
      const alphas = new Float32Array(rows);
      index.encodeRows(vectors, rows, codes, alphas);
      return { codes, alphas };
    };
  }

  /**
   * The codes and scales of the first `count` normalised rows of `src`, into `codes` and `alphas`:
   * in WebAssembly a block of rows a call (the JavaScript loop spent 52 µs a row of 1,536
   * dimensions, five times the kernel's), else one row at a time.
   */
  private encodeRows(src: Float32Array, count: number, codes: Uint8Array, alphas: Float32Array): void {
    const k = this.dim % 4 === 0 ? loadRotation() : null;
    if (!k) {
      for (let r = 0; r < count; r++) alphas[r] = packSigns(this.rotate(src, r * this.dim, this.mean), codes, r * this.codeBytes);
      return;
    }
    const n = this.padded;
    const rounds = this.rotation.length;
    const block = rowsPerCall(count, this.dim);
    // The kernel's memory: the scratch row, each round's signs, the centre, then a block's codes, scales and rows.
    const centreAt = (rounds + 1) * n * 4;
    const codesAt = centreAt + this.dim * 4;
    const alphasAt = codesAt + block * this.codeBytes;
    const srcAt = alphasAt + block * 4;
    const memory = memoryOf(k.memory, srcAt + block * this.dim * 4);
    if (k.signs !== this.rotation) {
      this.rotation.forEach((s, r) => new Float32Array(memory, (r + 1) * n * 4, n).set(s));
      k.signs = this.rotation;
    }
    new Float32Array(memory, centreAt, this.dim).set(this.mean);
    const scale = n ** (-rounds / 2);
    for (let at = 0; at < count; at += block) {
      const rows = Math.min(block, count - at);
      new Float32Array(memory, srcAt, rows * this.dim).set(src.subarray(at * this.dim, (at + rows) * this.dim));
      k.encode(srcAt, rows, this.dim, centreAt, 0, 4 * n, rounds, n, scale, codesAt, alphasAt);
      codes.set(new Uint8Array(memory, codesAt, rows * this.codeBytes), at * this.codeBytes);
      alphas.set(new Float32Array(memory, alphasAt, rows), at);
    }
  }

  /** What `fromParts` needs besides the vectors: the mean, the codes and the scales of every row. */
  parts(): { mean: Float32Array; codes: Uint8Array; alphas: Float32Array } {
    return { mean: this.mean, codes: this.codes.subarray(0, this.rows * this.codeBytes), alphas: this.alphas.subarray(0, this.rows) };
  }

  get count(): number {
    return this.rows;
  }

  /** Bytes held in memory per vector (float32 vector unless it is in a file, code, estimator scale, liveness flag). */
  get bytesPerVector(): number {
    return (this.vectorFile === undefined ? this.dim * 4 : 0) + this.codeBytes + 4 + 1;
  }

  /** Recomputes the centring mean and every code (after many changes). */
  recentre(): void {
    const { dim } = this;
    this.mean.fill(0);
    let live = 0;
    for (let r = 0; r < this.rows; r++) {
      if (!this.alive[r]) continue;
      live++;
      const o = r * dim;
      for (let d = 0; d < dim; d++) this.mean[d] += this.vectors[o + d];
    }
    if (live > 0) for (let d = 0; d < dim; d++) this.mean[d] /= live;
    this.encodeRows(this.vectors, this.rows, this.codes, this.alphas);
    this.version++;
  }

  /**
   * The rotated copy of `src[offset…]` (less `centre` when given), in a scratch buffer valid until
   * the next rotation (of any index).
   */
  private rotate(src: Float32Array, offset: number, centre?: Float32Array): Float32Array {
    const k = loadRotation();
    const y = k ? this.kernelScratch(k) : this.scratch;
    y.fill(0);
    for (let d = 0; d < this.dim; d++) y[d] = src[offset + d] - (centre ? centre[d] : 0);
    if (k) this.rotation.forEach((_, r) => k.round(0, (r + 1) * this.padded * 4, this.padded));
    else {
      for (const s of this.rotation) {
        for (let d = 0; d < this.padded; d++) y[d] *= s[d];
        fwht(y, this.padded);
      }
    }
    // Each transform scales by √n: one multiply makes the whole rotation orthonormal.
    const scale = this.padded ** (-this.rotation.length / 2);
    for (let d = 0; d < this.padded; d++) y[d] *= scale;
    return y;
  }

  /** The kernel's memory as this index's scratch: the values, then its signs (copied in when another index's are there). */
  private kernelScratch(k: RotationKernel): Float32Array {
    const floats = (this.rotation.length + 1) * this.padded;
    memoryOf(k.memory, floats * 4);
    if (k.signs !== this.rotation) {
      this.rotation.forEach((s, r) => new Float32Array(k.memory.buffer, (r + 1) * this.padded * 4, this.padded).set(s));
      k.signs = this.rotation;
    }
    if (k.values?.buffer !== k.memory.buffer || k.values.length !== this.padded) k.values = new Float32Array(k.memory.buffer, 0, this.padded);
    return k.values;
  }

  private encodeRow(r: number): void {
    const y = this.rotate(this.vectors, r * this.dim, this.mean);
    this.alphas[r] = packSigns(y, this.codes, r * this.codeBytes);
  }

  private grow(min: number): void {
    const cap = Math.max(min, Math.ceil(this.alive.length * 1.5) + 1024);
    const v = new Float32Array(this.vectorFile === undefined ? cap * this.dim : 0);
    v.set(this.vectors.subarray(0, v.length));
    const c = new Uint8Array(cap * this.codeBytes);
    c.set(this.codes);
    const al = new Float32Array(cap);
    al.set(this.alphas);
    const a = new Uint8Array(cap);
    a.set(this.alive);
    this.vectors = v;
    this.codes = c;
    this.alphas = al;
    this.alive = a;
  }

  /** Normalises `vector` in place; returns its code and scale under this index's mean and rotation. */
  encode(vector: Float32Array): { code: Uint8Array; alpha: number } {
    normalise(vector, 0, this.dim);
    const code = new Uint8Array(this.codeBytes);
    const alpha = packSigns(this.rotate(vector, 0, this.mean), code, 0);
    return { code, alpha };
  }

  /**
   * Appends a row already encoded by `encode`: its (normalised) vector is kept in memory, or, for
   * an index reading its vectors from a file, must already be written there at this row.
   */
  appendEncoded(vector: Float32Array, code: Uint8Array, alpha: number): number {
    if (this.rows >= this.alive.length) this.grow(this.rows + 1);
    const r = this.rows++;
    if (this.vectorFile === undefined) this.vectors.set(vector, r * this.dim);
    this.codes.set(code, r * this.codeBytes);
    this.alphas[r] = alpha;
    this.alive[r] = 1;
    this.version++;
    return r;
  }

  /** Makes a removed row searchable again (the same chunk came back). */
  restore(row: number): void {
    if (row >= 0 && row < this.rows && !this.alive[row]) {
      this.alive[row] = 1;
      this.removed--;
    }
  }

  /** Appends a vector; returns its row. (An index whose vectors are in a file takes none: it is rebuilt.) */
  add(vector: Float32Array): number {
    if (vector.length !== this.dim) throw new Error(`vector has ${vector.length} dimensions, the index ${this.dim}`);
    if (this.vectorFile !== undefined) throw new Error('this index reads its vectors from a file; build a new one to add');
    if (this.rows >= this.alive.length) this.grow(this.rows + 1);
    const r = this.rows++;
    this.vectors.set(vector, r * this.dim);
    normalise(this.vectors, r * this.dim, this.dim);
    this.encodeRow(r);
    this.alive[r] = 1;
    this.version++;
    return r;
  }

  remove(row: number): void {
    if (row >= 0 && row < this.rows && this.alive[row]) {
      this.alive[row] = 0;
      this.removed++;
    }
  }

  /** Rows removed and not restored (the first pass skips its liveness checks when there are none). */
  private removed = 0;

  vector(row: number): Float32Array {
    if (this.vectorFile !== undefined) {
      const out = new Float32Array(this.dim);
      readSync(this.vectorFile, new Uint8Array(out.buffer), 0, this.dim * 4, row * this.dim * 4);
      return out;
    }
    return this.vectors.subarray(row * this.dim, (row + 1) * this.dim);
  }

  /** Hamming distances of every stored code to the query's code. */
  private distances(queryCode: Uint8Array): Uint16Array {
    const n = this.rows;
    const k = loadKernel();
    if (!k) {
      const out = new Uint16Array(n);
      const q = new Uint32Array(queryCode.buffer, queryCode.byteOffset, this.codeBytes / 4);
      const all = new Uint32Array(this.codes.buffer, this.codes.byteOffset, (n * this.codeBytes) / 4);
      const words = this.codeBytes / 4;
      for (let r = 0; r < n; r++) {
        let s = 0;
        for (let w = 0; w < words; w++) s += popcount32(all[r * words + w] ^ q[w]);
        out[r] = s;
      }
      return out;
    }
    const codesAt = 0;
    const queryAt = n * this.codeBytes;
    const outAt = queryAt + this.codeBytes;
    const need = outAt + n * 2;
    const have = k.memory.buffer.byteLength;
    if (need > have) k.memory.grow(Math.ceil((need - have) / 65536));
    const mem = new Uint8Array(k.memory.buffer);
    // The codes are copied into WebAssembly memory only when this index or its codes changed.
    if (inKernel?.index !== this || inKernel.version !== this.version || need > have) {
      mem.set(this.codes.subarray(0, n * this.codeBytes), codesAt);
      inKernel = { index: this, version: this.version };
    }
    mem.set(queryCode, queryAt);
    k.hamming(codesAt, queryAt, n, this.codeBytes, outAt);
    // A view, not a copy: it is read at once, before the kernel runs again.
    return new Uint16Array(k.memory.buffer, outAt, n);
  }

  /** Bumped whenever codes change, so the kernel's copy is refreshed. */
  private version = 0;

  /**
   * The `k` nearest rows to `query` by cosine similarity. `candidates` rows are re-scored exactly
   * (chosen by the first two passes); more candidates, higher recall. Exact (`candidates` ≥ count)
   * for small sets.
   */
  search(query: Float32Array, k: number, candidates = 500): SearchHit[] {
    if (query.length !== this.dim) throw new Error(`query has ${query.length} dimensions, the index ${this.dim}`);
    const q = Float32Array.from(query);
    normalise(q, 0, this.dim);
    const n = this.rows;
    let rows: Int32Array;
    if (n <= candidates * 2) {
      rows = new Int32Array(n);
      let m = 0;
      for (let r = 0; r < n; r++) if (this.alive[r]) rows[m++] = r;
      rows = rows.subarray(0, m);
    } else {
      // The query is rotated but not centred: ranking by <q, x - mean> is ranking by <q, x>.
      const qr = Float32Array.from(this.rotate(q, 0));
      const code = new Uint8Array(this.codeBytes);
      packSigns(qr, code, 0);
      // The first pass keeps at least 1/64 of the rows: a million rows need a wider net than 100,000.
      const dist = this.distances(code);
      const wide = this.nearestCodes(dist, Math.min(n, Math.max(candidates * VectorIndex.WIDEN, Math.ceil(n / 64))));
      rows = this.estimateTop(qr, wide, candidates);
    }
    return this.rescore(q, rows, k);
  }

  /** The `count` rows of `rows` with the best asymmetric estimate of <q, x - mean>. */
  private estimateTop(qr: Float32Array, rows: Int32Array, count: number): Int32Array {
    if (rows.length <= count) return rows;
    const bytes = this.codeBytes;
    // lut[j][v]: the sum of the query's rotated values over the bits set in byte value v at byte j.
    const lut = new Float32Array(bytes * 256);
    let total = 0;
    for (let j = 0; j < bytes; j++) {
      const base = j * 256;
      for (let v = 1; v < 256; v++) {
        const low = v & -v;
        lut[base + v] = lut[base + (v ^ low)] + qr[j * 8 + 31 - Math.clz32(low)];
      }
      for (let b = 0; b < 8; b++) total += qr[j * 8 + b];
    }
    const est = new Float32Array(rows.length);
    const codes = this.codes;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      const o = r * bytes;
      let s0 = 0;
      let s1 = 0;
      for (let j = 0; j < bytes; j += 2) {
        s0 += lut[j * 256 + codes[o + j]];
        s1 += lut[(j + 1) * 256 + codes[o + j + 1]];
      }
      est[i] = this.alphas[r] * (2 * (s0 + s1) - total);
    }
    const picked = Int32Array.from(rows);
    selectTop(est, picked, count);
    return picked.subarray(0, count);
  }

  /** Rows with the smallest distances (about `count` of them), by a histogram: linear time. */
  private nearestCodes(dist: Uint16Array, count: number): Int32Array {
    const bits = this.codeBytes * 8;
    const hist = new Uint32Array(bits + 1);
    const all = this.removed === 0;
    if (all) for (let r = 0; r < dist.length; r++) hist[dist[r]]++;
    else for (let r = 0; r < dist.length; r++) if (this.alive[r]) hist[dist[r]]++;
    let threshold = 0;
    let seen = 0;
    while (threshold <= bits && seen + hist[threshold] < count) seen += hist[threshold++];
    const allowAtThreshold = count - seen;
    const out = new Int32Array(count);
    let m = 0;
    let atThreshold = 0;
    for (let r = 0; r < dist.length && m < count; r++) {
      if (!all && !this.alive[r]) continue;
      const d = dist[r];
      if (d < threshold) out[m++] = r;
      else if (d === threshold && atThreshold < allowAtThreshold) {
        out[m++] = r;
        atThreshold++;
      }
    }
    return out.subarray(0, m);
  }

  private rescore(q: Float32Array, rows: Int32Array, k: number): SearchHit[] {
    const dim = this.dim;
    const fromFile = this.vectorFile !== undefined;
    // From a file, the rows are read in file order (sequential reads), one at a time.
    if (fromFile) rows = Int32Array.from(rows).sort();
    const row = fromFile ? new Float32Array(dim) : undefined;
    const rowBytes = row ? new Uint8Array(row.buffer) : undefined;
    const v = row ?? this.vectors;
    const top: SearchHit[] = [];
    let worst = -Infinity;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (rowBytes) readSync(this.vectorFile!, rowBytes, 0, dim * 4, r * dim * 4);
      const o = row ? 0 : r * dim;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let d = 0;
      for (; d + 3 < dim; d += 4) {
        s0 += q[d] * v[o + d];
        s1 += q[d + 1] * v[o + d + 1];
        s2 += q[d + 2] * v[o + d + 2];
        s3 += q[d + 3] * v[o + d + 3];
      }
      for (; d < dim; d++) s0 += q[d] * v[o + d];
      const score = s0 + s1 + s2 + s3;
      if (top.length < k) {
        top.push({ row: r, score });
        if (top.length === k) {
          top.sort((a, b) => b.score - a.score);
          worst = top[k - 1].score;
        }
      } else if (score > worst) {
        let j = k - 1;
        while (j > 0 && top[j - 1].score < score) {
          top[j] = top[j - 1];
          j--;
        }
        top[j] = { row: r, score };
        worst = top[k - 1].score;
      }
    }
    return top.sort((a, b) => b.score - a.score);
  }
}

/** Writes the signs of `y` as bits at `out[at…]`; returns the estimator's scale ||y||² / Σ|y|. */
function packSigns(y: Float32Array, out: Uint8Array, at: number): number {
  let sq = 0;
  let abs = 0;
  for (let d = 0; d < y.length; d += 8) {
    let byte = 0;
    for (let b = 0; b < 8; b++) {
      const v = y[d + b];
      if (v > 0) byte |= 1 << b;
      sq += v * v;
      abs += Math.abs(v);
    }
    out[at + (d >> 3)] = byte;
  }
  return abs > 0 ? sq / abs : 0;
}

/**
 * Scales `count` rows of `rows` to length 1 in place and (with `sum`) adds each value, as stored,
 * to `sum`: in WebAssembly a block of rows a call where the dimension allows, else the loop.
 */
export function normaliseRows(rows: Float32Array, count: number, dim: number, sum?: Float64Array): void {
  const k = dim % 4 === 0 ? loadRotation() : null;
  if (!k) {
    for (let r = 0; r < count; r++) normalise(rows, r * dim, dim);
    if (sum) addRows(sum, rows, count, dim);
    return;
  }
  const block = rowsPerCall(count, dim);
  // The sums, then a block of rows, from the start of the kernel's memory (the rotation's signs are copied in again next time).
  const rowsAt = dim * 8;
  const memory = memoryOf(k.memory, rowsAt + block * dim * 4);
  k.signs = undefined;
  const sums = new Float64Array(memory, 0, dim);
  sums.set(sum ?? new Float64Array(dim));
  for (let at = 0; at < count; at += block) {
    const n = Math.min(block, count - at);
    const view = new Float32Array(memory, rowsAt, n * dim);
    view.set(rows.subarray(at * dim, (at + n) * dim));
    k.normalise(rowsAt, n, dim, 0);
    rows.set(view, at * dim);
  }
  sum?.set(sums);
}

/** Adds each of `count` rows of `rows` to `sum`, value by value. */
export function addRows(sum: Float64Array, rows: Float32Array, count: number, dim: number): void {
  for (let o = 0; o < count * dim; o += dim) for (let d = 0; d < dim; d++) sum[d] += rows[o + d];
}

function normalise(v: Float32Array, offset: number, dim: number): void {
  let s = 0;
  for (let d = 0; d < dim; d++) s += v[offset + d] * v[offset + d];
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let d = 0; d < dim; d++) v[offset + d] *= inv;
}
