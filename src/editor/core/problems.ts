/**
 * Problems (language servers' diagnostics) as the agent reads them: which ones an edit introduced,
 * and the text the model gets. Pure: the host turns VS Code's diagnostics into `Diagnosis`.
 */
import type { EditProblems, ProblemRecord } from '../../common/conversation';

export type Severity = 'error' | 'warning' | 'info' | 'hint';

export interface Diagnosis {
  path: string;
  /** 1-based. */
  line: number;
  severity: Severity;
  message: string;
  source?: string;
  code?: string;
  /** The line's text, when the host read it. */
  lineText?: string;
}

export const PROBLEM_LIMITS = {
  /** Problems an edit's result names at most (the count of the rest is given). */
  perEdit: 10,
  /** Other files named at most. */
  elsewhere: 5,
  /** Problems `get_problems` lists at most. */
  listed: 100,
  lineText: 200,
};

const RANK: Record<Severity, number> = { error: 0, warning: 1, info: 2, hint: 3 };

/** At least this severe (`warning` keeps errors and warnings). */
export function atLeast(d: Pick<Diagnosis, 'severity'>, floor: Severity): boolean {
  return RANK[d.severity] <= RANK[floor];
}

/** Errors first, then warnings…; within a severity by path and line. */
export function bySeverity(a: Diagnosis, b: Diagnosis): number {
  return RANK[a.severity] - RANK[b.severity] || a.path.localeCompare(b.path) || a.line - b.line;
}

/**
 * The same problem before and after an edit: same severity, source, code and message. Lines are
 * left out on purpose: an edit above a problem moves it, and it is not new for that.
 */
function keyOf(d: Diagnosis): string {
  return `${d.severity}\u0000${d.source ?? ''}\u0000${d.code ?? ''}\u0000${d.message}`;
}

/**
 * The problems in `after` that `before` did not have, as a multiset: a message that was there once
 * and now twice counts once as new (the later occurrence, by line). Errors and warnings only.
 */
export function introducedBy(before: readonly Diagnosis[], after: readonly Diagnosis[]): Diagnosis[] {
  const left = new Map<string, number>();
  for (const d of before) left.set(keyOf(d), (left.get(keyOf(d)) ?? 0) + 1);
  const fresh: Diagnosis[] = [];
  for (const d of [...after].sort((a, b) => a.line - b.line)) {
    const k = keyOf(d);
    const n = left.get(k) ?? 0;
    if (n > 0) left.set(k, n - 1);
    else if (atLeast(d, 'warning')) fresh.push(d);
  }
  return fresh.sort(bySeverity);
}

/** How many of `before`'s errors and warnings are gone in `after`. */
export function fixedBy(before: readonly Diagnosis[], after: readonly Diagnosis[]): number {
  return introducedBy(after, before).length;
}

export function toRecord(d: Diagnosis): ProblemRecord {
  return {
    path: d.path,
    line: d.line,
    severity: d.severity === 'error' ? 'error' : 'warning',
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    ...(d.code ? { code: d.code } : {}),
  };
}

/** `src/a.ts:4: error: Cannot find name 'x'. (ts 2304)`, and the line's text below it when known. */
export function problemLine(d: Diagnosis | ProblemRecord): string {
  const origin = d.source || d.code ? ` (${[d.source, d.code].filter(Boolean).join(' ')})` : '';
  const text = 'lineText' in d && d.lineText !== undefined ? `\n    ${d.lineText.trim().slice(0, PROBLEM_LIMITS.lineText)}` : '';
  return `${d.path}:${d.line}: ${d.severity}: ${d.message.replace(/\s*\n\s*/g, ' ')}${origin}${text}`;
}

/** "the TypeScript server", or "no language server" when none is named. */
function serverPhrase(server: string | undefined): string {
  return server ? `the ${server} server` : 'no language server';
}

/** What the model reads after an edit's own result line. */
export function editProblemsText(p: EditProblems, lines: readonly Diagnosis[] = []): string {
  const seconds = Math.max(1, Math.round(p.waitedMs / 1000));
  const unchecked = p.unchecked ?? [];
  if (p.settled === 'timeout') {
    const files = unchecked.length ? unchecked.join(', ') : 'this file';
    const who = p.server ? `${serverPhrase(p.server)} had not reported on ${files}` : `no language server reported on ${files}`;
    return `Problems: not checked: ${who} after ${seconds} s. Whether this edit introduced problems is not known; a late report will be added here, or run get_problems later to check.`;
  }
  const out: string[] = [];
  const late =
    p.lateMs !== undefined
      ? ` (checked ${Math.max(1, Math.round(p.lateMs / 1000))} s after the edit, when ${p.server ? serverPhrase(p.server) : 'its language server'} first reported)`
      : '';
  const older = p.uncheckedBefore?.length
    ? ` ${p.uncheckedBefore.join(', ')} had not been checked before the edit, so some of these may be older than it.`
    : '';
  if (p.introduced.length === 0) out.push(`Problems: this edit introduced none${p.fixed ? ` and fixed ${p.fixed}` : ''}${late}.`);
  else {
    const total = p.introduced.length + p.more;
    out.push(`Problems this edit introduced (${total}${p.fixed ? `; it fixed ${p.fixed}` : ''})${late}; fix them before going on:${older}`);
    // The lines' texts, where the host read them, go with the problems they belong to.
    for (const r of p.introduced) out.push(problemLine(lines.find((l) => l.path === r.path && l.line === r.line && l.message === r.message) ?? r));
    if (p.more) out.push(`… and ${p.more} more (get_problems lists them).`);
  }
  if (p.elsewhere.length) out.push(`Other open files now have more errors: ${p.elsewhere.map((e) => `${e.path} (${e.errors})`).join(', ')}.`);
  if (unchecked.length)
    out.push(
      `Not checked: ${p.server ? `${serverPhrase(p.server)} had not reported` : 'no language server reported'} on ${unchecked.join(', ')} after ${seconds} s.`,
    );
  return out.join('\n');
}

/**
 * The report of an edit: what it introduced (capped), what it fixed, which other files got worse.
 * An edited file in `unchecked` (nothing known after the edit) adds nothing; one in
 * `uncheckedBefore` (nothing known before it) counts every problem it has now. When every edited
 * file is unchecked the report says `timeout`, never "no new problems".
 */
export function editReport(o: {
  before: ReadonlyMap<string, readonly Diagnosis[]>;
  after: ReadonlyMap<string, readonly Diagnosis[]>;
  edited: readonly string[];
  waitedMs: number;
  settled: EditProblems['settled'];
  unchecked?: readonly string[];
  uncheckedBefore?: readonly string[];
  server?: string;
}): { report: EditProblems; introduced: Diagnosis[] } {
  const unchecked = o.edited.filter((p) => o.unchecked?.includes(p));
  const uncheckedBefore = o.edited.filter((p) => o.uncheckedBefore?.includes(p) && !unchecked.includes(p));
  const introduced: Diagnosis[] = [];
  let fixed = 0;
  for (const path of o.edited) {
    if (unchecked.includes(path)) continue;
    const b = uncheckedBefore.includes(path) ? [] : (o.before.get(path) ?? []);
    const a = o.after.get(path) ?? [];
    introduced.push(...introducedBy(b, a));
    fixed += fixedBy(b, a);
  }
  introduced.sort(bySeverity);
  const elsewhere: { path: string; errors: number }[] = [];
  for (const [path, a] of o.after) {
    if (o.edited.includes(path)) continue;
    const added = introducedBy(o.before.get(path) ?? [], a).filter((d) => d.severity === 'error').length;
    if (added > 0) elsewhere.push({ path, errors: added });
  }
  elsewhere.sort((x, y) => y.errors - x.errors || x.path.localeCompare(y.path));
  const shown = introduced.slice(0, PROBLEM_LIMITS.perEdit);
  const settled: EditProblems['settled'] =
    o.edited.length > 0 && unchecked.length === o.edited.length ? 'timeout' : o.settled === 'timeout' ? 'unchanged' : o.settled;
  return {
    report: {
      introduced: shown.map(toRecord),
      more: introduced.length - shown.length,
      fixed,
      elsewhere: elsewhere.slice(0, PROBLEM_LIMITS.elsewhere),
      waitedMs: Math.round(o.waitedMs),
      settled,
      ...(unchecked.length ? { unchecked } : {}),
      ...(uncheckedBefore.length ? { uncheckedBefore } : {}),
      ...(o.server ? { server: o.server } : {}),
    },
    introduced: shown,
  };
}

/**
 * How long to wait for a language server's first word on an edited file. Language servers say
 * nothing when an edit changes no problem, so the wait for that case ends at a deadline: twice the
 * slowest of the recent first answers for that language, at least `floorMs`; longer when the file
 * was not open (its server may have a project to load).
 */
export class SettleClock {
  private readonly seen = new Map<string, number[]>();

  constructor(
    private readonly floorMs = 1000,
    private readonly coldMs = 6000,
    private readonly ceilingMs = 6000,
  ) {}

  deadlineFor(language: string, cold: boolean): number {
    if (cold) return this.coldMs;
    const recent = this.seen.get(language);
    if (!recent?.length) return Math.max(this.floorMs, 2500);
    return Math.min(this.ceilingMs, Math.max(this.floorMs, 2 * Math.max(...recent)));
  }

  /** A first answer came after `ms`. */
  record(language: string, ms: number): void {
    const recent = this.seen.get(language) ?? [];
    recent.push(ms);
    if (recent.length > 20) recent.shift();
    this.seen.set(language, recent);
  }
}
