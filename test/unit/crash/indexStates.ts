/** The workspace the index crash test rewrites: file i at step k, and what the index must hold after step k. */
export const FILES = 60;

export const fileName = (i: number) => `src/file${String(i).padStart(2, '0')}.ts`;

/** File i's text at a version: its length differs from one version of the file to the next. */
export function versionText(i: number, version: number): string {
  const lines = Array.from({ length: 3 + (version % 50) }, (_, n) => `export const value${n} = ${i * 1000 + n}; // file ${i}, version ${version}`);
  return `// file ${i}\n${lines.join('\n')}\n`;
}

/** The size of every file once step `k` is done (step k rewrote file k % FILES; step 0 is the first build). */
export function sizesAfter(k: number): Map<string, number> {
  const sizes = new Map<string, number>();
  for (let i = 0; i < FILES; i++) {
    // The last step ≤ k that rewrote file i (none: its first version, 0).
    let last = k - (((k - i) % FILES) + FILES) % FILES;
    if (last <= 0) last = 0;
    sizes.set(fileName(i), Buffer.byteLength(versionText(i, last), 'utf8'));
  }
  return sizes;
}
