/** Line-level comparison of a file before and after an edit (pure: no `vscode`). */

/** One line of an inline diff: kept for context, removed, or added. */
export interface DiffLine {
  kind: ' ' | '-' | '+';
  text: string;
}

const PREVIEW_LINE_CHARS = 400;

/** The lines of both versions and the changed block between their common first and last lines. */
function changedBlock(before: string, after: string): { a: string[]; b: string[]; head: number; tail: number; removed: string[]; added: string[] } {
  const a = before ? before.split('\n') : [];
  const b = after ? after.split('\n') : [];
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { a, b, head, tail, removed: a.slice(head, a.length - tail), added: b.slice(head, b.length - tail) };
}

/** The changed block of a small change, with a line of context each side; undefined when larger than `max` lines. */
export function inlinePreview(before: string, after: string, max: number): { startLine: number; lines: DiffLine[] } | undefined {
  const { a, head, tail, removed, added } = changedBlock(before, after);
  if (removed.length + added.length === 0 || removed.length + added.length > max) return undefined;
  const cut = (t: string) => (t.length > PREVIEW_LINE_CHARS ? `${t.slice(0, PREVIEW_LINE_CHARS)}…` : t);
  const lines: DiffLine[] = [];
  if (head > 0) lines.push({ kind: ' ', text: cut(a[head - 1]) });
  for (const t of removed) lines.push({ kind: '-', text: cut(t) });
  for (const t of added) lines.push({ kind: '+', text: cut(t) });
  if (tail > 0) lines.push({ kind: ' ', text: cut(a[a.length - tail]) });
  return { startLine: Math.max(1, head), lines };
}

/** Lines added and removed by a change (the block between the common first and last lines). */
export function lineDelta(before: string, after: string): { added: number; removed: number } {
  const { added, removed } = changedBlock(before, after);
  return { added: added.length, removed: removed.length };
}
