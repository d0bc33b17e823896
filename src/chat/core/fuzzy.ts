/**
 * Ranks workspace paths for an `@` mention as the quick-open box does: the query's characters in
 * order, preferring matches in the file name, at word starts and in runs. Pure, for unit tests.
 */

/** The score of `path` for `query` (higher is better), or undefined when it does not match. */
export function fuzzyScore(query: string, path: string): number | undefined {
  const q = query.toLowerCase().replace(/\s+/g, '');
  if (!q) return 0;
  const p = path.toLowerCase();
  const nameStart = path.lastIndexOf('/') + 1;
  // The whole query inside the file name beats everything else.
  const inName = p.indexOf(q, nameStart);
  if (inName >= 0) return 1000 - (inName - nameStart) * 5 - (path.length - nameStart - q.length);
  let score = 0;
  let from = 0;
  let run = 0;
  for (const ch of q) {
    const at = p.indexOf(ch, from);
    if (at < 0) return undefined;
    const wordStart = at === 0 || '/._-'.includes(p[at - 1]) || (path[at] !== p[at] && path[at - 1] === p[at - 1]);
    run = at === from ? run + 1 : 0;
    score += 1 + run * 3 + (wordStart ? 6 : 0) + (at >= nameStart ? 4 : 0);
    from = at + 1;
  }
  return score - path.length * 0.05;
}

/** The best `limit` paths for the query, best first (ties: shorter path, then by name). */
export function rankPaths(query: string, paths: readonly string[], limit = 20): string[] {
  const scored: { path: string; score: number }[] = [];
  for (const path of paths) {
    const score = fuzzyScore(query, path);
    if (score !== undefined) scored.push({ path, score });
  }
  scored.sort((a, b) => b.score - a.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}
