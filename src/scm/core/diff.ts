/**
 * A change as the model is shown it: a diff per file (`changes.ts` asks git for each file alone),
 * the files that must not leave the machine (secret, ignored or excluded) and generated ones (lock
 * files, minified bundles) reduced to their name, then cut to a token budget, whole hunks first.
 * Pure: the diff text of a withheld file is never read, so there is none to leak.
 */
import { tokensOf } from '../../runtime/core/tokens';

export type Withheld = 'secret' | 'excluded';

export interface FileDiff {
  /** The file's path after the change (before it, for a deletion), relative to the repository. */
  path: string;
  /** A rename's (or copy's) old path. */
  from?: string;
  /** The file's whole diff, from its `diff --git` line; empty for a withheld file. */
  text: string;
  added: number;
  removed: number;
  binary: boolean;
  /** Why its content stays on the machine (the path guard's verdict on either of its paths). */
  withheld?: Withheld;
}

/** A file's entry from git's diff of that file alone: its lines counted in its hunks. */
export function fileDiffOf(path: string, text: string, from?: string): FileDiff {
  let added = 0;
  let removed = 0;
  let inHunk = false;
  let binary = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (/^diff --(git|cc|combined) /.test(line)) inHunk = false;
    else if (!inHunk && (line.startsWith('Binary files ') || line === 'GIT binary patch')) binary = true;
    else if (inHunk && line.startsWith('+')) added++;
    else if (inHunk && line.startsWith('-')) removed++;
  }
  return { path, from, text: text.replace(/\n+$/, '\n'), added, removed, binary };
}

/**
 * How a file is named to the model: `old → new` for a rename; a name holding a control character,
 * a quote or a backslash as a JSON string (a line break in a name cannot start a line of its own).
 */
export function shownName(f: Pick<FileDiff, 'path' | 'from'>): string {
  const one = (p: string) => {
    const quoted = JSON.stringify(p);
    return quoted.slice(1, -1) === p ? p : quoted;
  };
  return f.from !== undefined && f.from !== f.path ? `${one(f.from)} → ${one(f.path)}` : one(f.path);
}

/** Files whose diff says nothing a reader wants: lock files, minified or generated bundles, maps. */
const GENERATED =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|go\.sum|composer\.lock|Gemfile\.lock)$|\.min\.(js|css)$|\.map$/;

export type Left = 'secret' | 'excluded' | 'generated' | 'binary' | 'budget';

export interface BoundedDiff {
  /** The diff the model reads: the files that fit, then a line per file left out. */
  text: string;
  /** Files shown whole or in part (their paths). */
  shown: string[];
  /** Files shown only in part (cut to the budget). */
  cut: string[];
  /** Files not shown, and why (`name`: as the model is told it). */
  left: { path: string; why: Left; name: string }[];
  tokens: number;
}

/**
 * The diff within `maxTokens`: every file that may be shown gets an equal share first (so one
 * large file cannot push out the others), then what is left goes in order. A file cut short ends
 * on a whole line with a note. Withheld files (`f.withheld`) are named only, never their lines.
 */
export function boundedDiff(files: readonly FileDiff[], maxTokens: number): BoundedDiff {
  const left: { path: string; why: Left; name: string }[] = [];
  const showable: FileDiff[] = [];
  for (const f of files) {
    const why = f.withheld ?? (f.binary ? 'binary' : GENERATED.test(f.path) ? 'generated' : undefined);
    if (why) left.push({ path: f.path, why, name: shownName(f) });
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
      left.push({ path: f.path, why: 'budget', name: shownName(f) });
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
    const words: Record<Left, string> = {
      secret: 'a secret file, not shown',
      excluded: 'ignored or excluded, not shown',
      generated: 'generated, not shown',
      binary: 'binary',
      budget: 'not shown: the change is too large',
    };
    const lines = left.map((l) => `- ${l.name} (${words[l.why]})`);
    parts.push(`Also changed:\n${lines.join('\n')}\n`);
    tokens += tokensOf(lines.join('\n'));
  }
  return { text: parts.join(''), shown, cut, left, tokens };
}
