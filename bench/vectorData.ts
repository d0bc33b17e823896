/**
 * Synthetic embedding sets for the vector benchmark and tests.
 *
 * - easy: 500 clustered centroids plus noise; queries are noisy copies of stored vectors (top-1
 *   cosine near 0.95). Fast to search well, and not what real questions look like.
 * - hard: shaped like real text embeddings of code queried in natural language. Variance follows
 *   a power law over directions (a few coordinates carry most of it: real embeddings have such
 *   "rogue dimensions"), every vector shares an offset, documents mix one or two of 2,000 topics, and queries mix two or
 *   three topics with heavy noise, so similarities are low and close together (top-1 cosine about
 *   0.38, top-10 about 0.31, top-1,000 about 0.23, as measured on real code search).
 */
import type { EmbedFn } from '../src/search/core/semanticIndex';
export type VectorShape = 'easy' | 'hard' | 'hard-steep' | 'hard-rotated' | 'hard-flat';

export interface VectorSet {
  data: Float32Array;
  queries: Float32Array[];
}

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function gaussian(r: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
}

/** In-place fast Walsh–Hadamard transform (length a power of two), scaled to stay orthonormal. */
function fwht(v: Float32Array, off: number, n: number): void {
  for (let h = 1; h < n; h <<= 1) {
    for (let i = 0; i < n; i += h << 1) {
      for (let j = i; j < i + h; j++) {
        const a = v[off + j];
        const b = v[off + j + h];
        v[off + j] = a + b;
        v[off + j + h] = a - b;
      }
    }
  }
  const s = 1 / Math.sqrt(n);
  for (let i = 0; i < n; i++) v[off + i] *= s;
}

/** A fixed random orthogonal map (signs, Hadamard, signs, Hadamard): puts the spectrum in a random basis. */
function mixer(dim: number, seed: number): (v: Float32Array, off: number) => void {
  const r = rng(seed);
  const s1 = Float32Array.from({ length: dim }, () => (r() < 0.5 ? -1 : 1));
  const s2 = Float32Array.from({ length: dim }, () => (r() < 0.5 ? -1 : 1));
  return (v, off) => {
    for (let d = 0; d < dim; d++) v[off + d] *= s1[d];
    fwht(v, off, dim);
    for (let d = 0; d < dim; d++) v[off + d] *= s2[d];
    fwht(v, off, dim);
  };
}

function easySet(n: number, dim: number, seed: number, queries: number): VectorSet {
  const r = rng(seed);
  const g = gaussian(r);
  const centroids = new Float32Array(500 * dim).map(g);
  const data = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(r() * 500);
    for (let d = 0; d < dim; d++) data[i * dim + d] = centroids[c * dim + d] + 0.6 * g();
  }
  const qs = Array.from({ length: queries }, () => {
    const i = Math.floor(r() * n);
    return Float32Array.from(data.subarray(i * dim, (i + 1) * dim), (v) => v + 0.3 * g());
  });
  return { data, queries: qs };
}

interface HardShape {
  /** Variance of direction k ∝ (k+1)^-exponent (0: isotropic). */
  exponent: number;
  /** The shared offset, relative to the spread. */
  offset: number;
  queryNoise: number;
  /** Put the spectrum in a random basis; otherwise the strong directions are coordinate axes (the "rogue dimensions" real embeddings have). */
  rotated?: boolean;
}

const HARD_SHAPES: Record<Exclude<VectorShape, 'easy'>, HardShape> = {
  // Tuned to real code search: top-1 cosine 0.36, top-10 0.31, top-1% 0.25 (seed 1, 20,000 vectors).
  hard: { exponent: 0.8, offset: 0.45, queryNoise: 2.3 },
  // Variance even more concentrated, a larger offset.
  'hard-steep': { exponent: 1.1, offset: 0.7, queryNoise: 2.6 },
  // The same spectrum in a random basis (kinder to sign codes).
  'hard-rotated': { exponent: 0.8, offset: 0.45, queryNoise: 2.3, rotated: true },
  // The same topics and noise, isotropic and without offset: what the anisotropy itself costs.
  'hard-flat': { exponent: 0, offset: 0, queryNoise: 2.3 },
};

const TOPICS = 2_000;

/** What every hard set is drawn around: the per-direction scale (a power law), the topics, the offset. */
function hardModel(shape: HardShape, dim: number, seed: number) {
  const r = rng(seed);
  const g = gaussian(r);
  const scale = Float32Array.from({ length: dim }, (_, k) => (k + 1) ** (-shape.exponent / 2));
  const centroids = new Float32Array(TOPICS * dim);
  for (let t = 0; t < TOPICS; t++) for (let d = 0; d < dim; d++) centroids[t * dim + d] = g() * scale[d];
  const offset = new Float32Array(dim);
  for (let d = 0; d < dim; d++) offset[d] = g() * scale[d] * shape.offset;
  return { r, g, scale, centroids, offset, mix: mixer(dim, seed ^ 0x5bd1e995) };
}

/** Adds `parts` random topics to a point, with weights summing to 1 (the first ones heavier). */
function addTopics(out: Float32Array, off: number, parts: number, r: () => number, centroids: Float32Array, dim: number): void {
  let w = 1;
  for (let p = 0; p < parts; p++) {
    const t = Math.floor(r() * TOPICS);
    const weight = p === parts - 1 ? w : w * (0.5 + 0.3 * r());
    w -= weight;
    for (let d = 0; d < dim; d++) out[off + d] += weight * centroids[t * dim + d];
  }
}

function hardSet(n: number, dim: number, seed: number, queries: number, shape: HardShape): VectorSet {
  const { r, g, scale, centroids, offset, mix } = hardModel(shape, dim, seed);
  const data = new Float32Array(n * dim);
  const point = (out: Float32Array, off: number, parts: number, noise: number) => {
    addTopics(out, off, parts, r, centroids, dim);
    for (let d = 0; d < dim; d++) out[off + d] += offset[d] + noise * g() * scale[d];
    if (shape.rotated) mix(out, off);
  };
  for (let i = 0; i < n; i++) point(data, i * dim, 1 + (r() < 0.4 ? 1 : 0), 0.75);
  const qs = Array.from({ length: queries }, () => {
    const q = new Float32Array(dim);
    point(q, 0, 2 + (r() < 0.5 ? 1 : 0), shape.queryNoise);
    return q;
  });
  return { data, queries: qs };
}

export function vectorSet(shape: VectorShape, n: number, dim: number, seed: number, queries = 30): VectorSet {
  if (shape === 'easy') return easySet(n, dim, seed, queries);
  return hardSet(n, dim, seed, queries, HARD_SHAPES[shape]);
}

/**
 * The hard shapes as a stream, for sets too large for one array (a million rows of 1,024 floats
 * is 4 GB): the same topics, offset and spectrum as `vectorSet`; document noise drawn from a
 * table of a million Gaussian values at random offsets (Box–Muller for a billion values would
 * take a minute), queries drawn exactly.
 */
export function hardStream(
  shapeName: Exclude<VectorShape, 'easy'>,
  dim: number,
  seed: number,
): { fill(out: Float32Array, rows: number): void; query(): Float32Array } {
  const shape = HARD_SHAPES[shapeName];
  const { r, g, scale, centroids, offset, mix } = hardModel(shape, dim, seed);
  const rDocs = r;
  const table = Float32Array.from({ length: 1 << 20 }, g);
  // Queries draw from their own generator: the same in every pass, unrelated to the rows' draws.
  const rq = rng(seed ^ 0x2545f491);
  const gq = gaussian(rq);
  const point = (out: Float32Array, off: number, parts: number, noise: number, exact: boolean) => {
    const r = exact ? rq : rDocs;
    addTopics(out, off, parts, r, centroids, dim);
    const start = Math.floor(r() * (table.length - dim));
    for (let d = 0; d < dim; d++) out[off + d] += offset[d] + noise * (exact ? gq() : table[start + d]) * scale[d];
    if (shape.rotated) mix(out, off);
  };
  return {
    fill(out, rows) {
      out.fill(0, 0, rows * dim);
      for (let i = 0; i < rows; i++) point(out, i * dim, 1 + (rDocs() < 0.4 ? 1 : 0), 0.75, false);
    },
    query() {
      const q = new Float32Array(dim);
      point(q, 0, 2 + (rq() < 0.5 ? 1 : 0), shape.queryNoise, true);
      return q;
    },
  };
}

/**
 * A local stand-in for a gateway's embeddings (random unit vectors: what is measured is the
 * index, not the gateway). `embed` answers as the client hands a gateway's answers over: batches
 * of 128, each on its own turn of the event loop, its vectors views of one buffer. `unit` draws
 * one more vector from the same sequence (a query).
 */
export function standInEmbeddings(dim: number, seed: number): { embed: EmbedFn; unit: (v?: Float32Array) => Float32Array } {
  const r = rng(seed);
  const unit = (v: Float32Array = new Float32Array(dim)): Float32Array => {
    let s = 0;
    for (let d = 0; d < dim; d++) s += (v[d] = r() - 0.5) ** 2;
    const inv = 1 / Math.sqrt(s);
    for (let d = 0; d < dim; d++) v[d] *= inv;
    return v;
  };
  const embed: EmbedFn = async (texts) => {
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += 128) {
      await new Promise((res) => setImmediate(res));
      const n = Math.min(texts.length, i + 128) - i;
      const pool = new Float32Array(n * dim);
      for (let j = 0; j < n; j++) vectors.push(unit(pool.subarray(j * dim, (j + 1) * dim)));
    }
    return { vectors, requests: Math.ceil(texts.length / 128) };
  };
  return { embed, unit };
}
