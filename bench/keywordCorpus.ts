/**
 * Code-like chunks for the keyword side of the million-chunk benchmark, shaped as real code's
 * terms are: identifiers made of one to three word parts, drawn with Zipf frequencies (a few
 * names everywhere, most rare), and the language's own words (`const`, `return`, `function`,
 * `if`) in nearly every chunk, so that a query naming them reads postings as long as the index.
 * Queries: identifiers a chunk defines, phrases of mid-frequency words, and phrases with the
 * everywhere-words (the slowest case).
 */
import { rng } from './vectorData';

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'so', 'da', 'fu', 'gi', 'ha', 'je', 'xo', 'bri', 'cla', 'dro', 'ste'];

/** Samples 0..n-1 with weight 1 / (i + 1)^s. */
function zipf(r: () => number, n: number, s: number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1) ** s;
  return () => {
    const x = r() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface KeywordCorpus {
  /** Chunk `i`'s text; call in order 0, 1, 2, … (one pass of a seeded generator). */
  next(): string;
  /** `count` queries: a third identifiers defined somewhere, a third plain phrases, a third with the everywhere-words. */
  queries(count: number): string[];
}

export function keywordCorpus(seed = 21): KeywordCorpus {
  const r = rng(seed);
  const parts: string[] = [];
  const seen = new Set<string>();
  while (parts.length < 6000) {
    let p = '';
    for (let s = 0; s < 2 + Math.floor(r() * 3); s++) p += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    if (seen.has(p)) continue;
    seen.add(p);
    parts.push(p);
  }
  const part = zipf(r, parts.length, 1.0);
  const names: string[] = [];
  for (let i = 0; i < 300_000; i++) {
    const n = 1 + Math.floor(r() * 3);
    let name = parts[part()];
    for (let j = 1; j < n; j++) {
      const p = parts[part()];
      name += p[0].toUpperCase() + p.slice(1);
    }
    names.push(name);
  }
  const name = zipf(r, names.length, 0.9);
  const pick = () => names[name()];
  const defined: string[] = [];
  let made = 0;
  const next = () => {
    const fn = `${pick()}${made}`;
    if (made++ % 997 === 0) defined.push(fn);
    const lines = [`export function ${fn}(${pick()}, ${pick()}) {`];
    const statements = 6 + Math.floor(r() * 8);
    for (let s = 0; s < statements; s++) {
      const k = r();
      if (k < 0.6) lines.push(`  const ${pick()} = ${pick()}.${pick()}(${pick()});`);
      else if (k < 0.85) lines.push(`  if (${pick()} > ${Math.floor(r() * 100)}) ${pick()}.${pick()} = ${pick()};`);
      else lines.push(`  await ${pick()}(${pick()}, '${parts[part()]} ${parts[part()]}');`);
    }
    lines.push(`  return ${pick()};`, '}');
    return lines.join('\n');
  };
  const queries = (count: number) => {
    const q = rng(seed + 1);
    const mid = () => parts[20 + Math.floor(q() * 400)];
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const kind = i % 3;
      if (kind === 0 && defined.length) out.push(defined[Math.floor(q() * defined.length)]);
      else if (kind === 1) out.push(`${mid()} ${mid()} ${mid()}`);
      else out.push(`where does ${mid()} return the const ${parts[Math.floor(q() * 10)]} if ${mid()} function`);
    }
    return out;
  };
  return { next, queries };
}
