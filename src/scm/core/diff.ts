/**
 * A change as the model is shown it: a unified diff (`git diff`) split per file, the files that
 * must not leave the machine (secret, ignored or excluded) and generated ones (lock files,
 * minified bundles) reduced to their name and size, then cut to a token budget, whole hunks
 * first. Pure: the host gets the diff from the Git extension and says which paths are withheld.
 */
import { tokensOf } from '../../chat/core/tokens';

export interface FileDiff {
  /** The file's path after the change (before it, for a deletion), relative to the repository. */
  path: string;
  /** The file's whole diff, from its `diff --git` line. */
  text: string;
  added: number;
  removed: number;
  binary: boolean;
}

/** The files of a unified diff, in its order. */
export function splitDiff(diff: string): FileDiff[] {
  const out: FileDiff[] = [];
  const starts = [...diff.matchAll(/^diff --git a\/(.+?) b\/(.+)$/gm)];
  starts.forEach((m, i) => {
    const text = diff.slice(m.index, starts[i + 1]?.index ?? diff.length).replace(/\n+$/, '\n');
    const deleted = /^\+\+\+ \/dev\/null$/m.test(text);
    let added = 0;
    let removed = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith('+') && !line.startsWith('+++')) added++;
      else if (line.startsWith('-') && !line.startsWith('---')) removed++;
    }
    out.push({ path: deleted ? m[1] : m[2], text, added, removed, binary: /^Binary files /m.test(text) });
  });
  return out;
}

/** Files whose diff says nothing a reader wants: lock files, minified or generated bundles, maps. */
const GENERATED = /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|go\.sum|composer\.lock|Gemfile\.lock)$|\.min\.(js|css)$|\.map$/;

export type Left = 'secret' | 'excluded' | 'generated' | 'binary' | 'budget';

export interface BoundedDiff {
  /** The diff the model reads: the files that fit, then a line per file left out. */
  text: string;
  /** Files shown whole or in part (their paths). */
  shown: string[];
  /** Files shown only in part (cut to the budget). */
  cut: string[];
  /** Files not shown, and why. */
  left: { path: string; why: Left }[];
  tokens: number;
}

/**
 * The diff within `maxTokens`: every file that may be shown gets an equal share first (so one
 * large file cannot push out the others), then what is left goes in order. A file cut short ends
 * on a whole line with a note. Withheld files (`withheld(path)`) are named only, never their lines.
 */
export function boundedDiff(files: readonly FileDiff[], maxTokens: number, withheld: (path: string) => 'secret' | 'excluded' | undefined): BoundedDiff {
  const left: { path: string; why: Left }[] = [];
  const showable: FileDiff[] = [];
  for (const f of files) {
    const why = withheld(f.path) ?? (f.binary ? 'binary' : GENERATED.test(f.path) ? 'generated' : undefined);
    if (why) left.push({ path: f.path, why });
    else showable.push(f);
  }
  const costs = showable.map((f) => tokensOf(f.text));
  const total = costs.reduce((a, b) => a + b, 0);
  const allowance = new Map<FileDiff, number>();
  if (total <= maxTokens) showable.forEach((f, i) => allowance.set(f, costs[i]));
  else {
    // Equal shares, the unused part of small files passed on to the larger ones.
    let room = maxTokens;
    const order = showable.map((f, i) => ({ f, cost: costs[i] })).sort((a, b) => a.cost - b.cost);
    order.forEach(({ f, cost }, i) => {
      const share = Math.floor(room / (order.length - i));
      const take = Math.min(cost, share);
      allowance.set(f, take);
      room -= take;
    });
  }
  const parts: string[] = [];
  const shown: string[] = [];
  const cut: string[] = [];
  let tokens = 0;
  for (const f of showable) {
    const budget = allowance.get(f) ?? 0;
    if (budget < 20) {
      left.push({ path: f.path, why: 'budget' });
      continue;
    }
    const full = tokensOf(f.text);
    if (full <= budget) {
      parts.push(f.text);
      tokens += full;
    } else {
      const kept: string[] = [];
      let used = 0;
      for (const line of f.text.split('\n')) {
        const cost = tokensOf(line) + 1;
        if (used + cost > budget - 12) break;
        kept.push(line);
        used += cost;
      }
      parts.push(`${kept.join('\n')}\n[… the rest of this file's diff left out: ${f.added} lines added and ${f.removed} removed in all]\n`);
      tokens += used + 12;
      cut.push(f.path);
    }
    shown.push(f.path);
  }
  if (left.length) {
    const words: Record<Left, string> = { secret: 'a secret file, not shown', excluded: 'ignored or excluded, not shown', generated: 'generated, not shown', binary: 'binary', budget: 'not shown: the change is too large' };
    const lines = left.map((l) => `- ${l.path} (${words[l.why]})`);
    parts.push(`Also changed:\n${lines.join('\n')}\n`);
    tokens += tokensOf(lines.join('\n'));
  }
  return { text: parts.join(''), shown, cut, left, tokens };
}
