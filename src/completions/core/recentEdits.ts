import { tokensOf } from '../../runtime/core/tokens';

/**
 * Where the person edited last, in other files: a few lines around each file's latest edit, sent
 * with a completion as context (the code being written now is often used next door).
 */
export interface RecentEdit {
  /** The file's path in the workspace. */
  path: string;
  key: string;
  line: number;
  lines: string[];
}

/** A document read line by line. */
export interface LineSource {
  lineCount: number;
  lineAt(line: number): string;
}

function linesOf(text: string): LineSource {
  const all = text.split('\n');
  return { lineCount: all.length, lineAt: (n) => all[n] };
}

export class RecentEdits {
  private readonly files: RecentEdit[] = [];

  constructor(private readonly o: { files: number; radius: number } = { files: 3, radius: 10 }) {}

  /**
   * Records an edit at `line` of a file (`key` identifies it): its whole text now, or its lines
   * (an editor's document: only the lines around the edit are read, on every keystroke).
   */
  record(key: string, path: string, line: number, text: string | LineSource): void {
    const source = typeof text === 'string' ? linesOf(text) : text;
    const from = Math.max(0, line - this.o.radius);
    const lines: string[] = [];
    for (let n = from; n < Math.min(source.lineCount, line + this.o.radius + 1); n++) lines.push(source.lineAt(n));
    const at = this.files.findIndex((f) => f.key === key);
    if (at >= 0) this.files.splice(at, 1);
    this.files.unshift({ key, path, line, lines });
    this.files.length = Math.min(this.files.length, this.o.files);
  }

  forget(key: string): void {
    const at = this.files.findIndex((f) => f.key === key);
    if (at >= 0) this.files.splice(at, 1);
  }

  /** The latest edits in files other than `exceptKey`, newest first. */
  snippets(exceptKey: string): { path: string; text: string }[] {
    return this.files.filter((f) => f.key !== exceptKey && f.lines.some((l) => l.trim())).map((f) => ({ path: f.path, text: f.lines.join('\n') }));
  }
}

/** Identifiers near the cursor (the last lines of the prefix): the query for the keyword index. */
export function identifiersNear(prefix: string, lines = 8): string {
  const tail = prefix.split('\n').slice(-lines).join('\n');
  const words = tail.match(/[A-Za-z_$][\w$]{2,}/g) ?? [];
  const common = new Set([
    'const',
    'let',
    'var',
    'function',
    'return',
    'import',
    'export',
    'from',
    'await',
    'async',
    'this',
    'new',
    'true',
    'false',
    'null',
    'undefined',
    'def',
    'self',
    'class',
    'for',
    'while',
    'else',
    'elif',
    'type',
    'interface',
  ]);
  return [...new Set(words.filter((w) => !common.has(w)))].slice(-12).join(' ');
}

/** Snippets cut to a token budget in all, whole lines only. */
export function withinBudget(snippets: { path: string; text: string }[], budgetTokens: number): { path: string; text: string }[] {
  let left = budgetTokens;
  const out: { path: string; text: string }[] = [];
  for (const s of snippets) {
    if (left <= 0) break;
    const kept: string[] = [];
    for (const line of s.text.split('\n')) {
      const cost = tokensOf(line) + 1;
      if (cost > left) break;
      kept.push(line);
      left -= cost;
    }
    if (kept.some((l) => l.trim())) out.push({ path: s.path, text: kept.join('\n') });
  }
  return out;
}
