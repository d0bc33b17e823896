/** The workspace the index crash test rewrites: file i at step k, and what the index must hold after step k. */
export const fileName = (i: number) => `src/file${String(i).padStart(2, '0')}.ts`;

/** File i's text at a version: its length differs from one version of the file to the next. */
export function versionText(i: number, version: number): string {
  const lines = Array.from({ length: 3 + (version % 50) }, (_, n) => `export const value${n} = ${i * 1000 + n}; // file ${i}, version ${version}`);
  return `// file ${i}\n${lines.join('\n')}\n`;
}

/** The step ≤ k that last rewrote file i of `files` (step k rewrites file k % files; step 0 is the first build). */
function lastRewrite(i: number, k: number, files: number): number {
  const last = k - ((((k - i) % files) + files) % files);
  return last <= 0 ? 0 : last;
}

/** The size of every file once step `k` is done. */
export function sizesAfter(k: number, files: number): Map<string, number> {
  const sizes = new Map<string, number>();
  for (let i = 0; i < files; i++) sizes.set(fileName(i), Buffer.byteLength(versionText(i, lastRewrite(i, k, files)), 'utf8'));
  return sizes;
}

/** The sizes file i has had up to step k: any of its versions, never an empty or a partial file. */
export function sizesUpTo(i: number, k: number, files: number): Set<number> {
  const sizes = new Set([Buffer.byteLength(versionText(i, 0), 'utf8')]);
  for (let step = lastRewrite(i, k, files); step > 0; step -= files) sizes.add(Buffer.byteLength(versionText(i, step), 'utf8'));
  return sizes;
}
