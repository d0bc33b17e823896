import { mkdtempSync } from 'node:fs';
import { SemanticIndex } from '../src/search/core/semanticIndex';
const marks: [string, number][] = [];
(globalThis as any).__mark = (l: string) => marks.push([l, performance.now()]);
let last = performance.now();
const gaps: [number, number][] = [];
setInterval(() => { const n = performance.now(); if (n - last > 20) gaps.push([last, n - last]); last = n; }, 1).unref();
async function main() {
  await new Promise((r) => setTimeout(r, 20));
  const idx = new SemanticIndex({ folders: [{ name: 'bench', path: mkdtempSync('/tmp/x') }], excludes: [], storeDir: '/tmp/mg-update-store-MnHi6U', model: 'bench', embed: null as never });
  const t0 = performance.now(); marks.push(['start', t0]);
  await idx.load();
  marks.push(['end', performance.now()]);
  for (const [l, t] of marks) console.log(l, (t - t0).toFixed(0));
  for (const [at, g] of gaps) console.log('GAP at', (at - t0).toFixed(0), 'for', g.toFixed(0));
  await idx.close();
}
main();
