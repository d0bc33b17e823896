import * as vscode from 'vscode';
import type { EditProblems } from '../../common/conversation';
import type { PathGuard } from '../../tools/pathGuard';
import { editProblemsText, editReport, SettleClock, type Diagnosis } from '../core/problems';
import { diagnosisOf, LineReader, VisiblePaths } from './visible';

/** Every file's diagnostics at one moment, by URI. */
export type DiagnosticsSnapshot = Map<string, { uri: vscode.Uri; diagnostics: readonly vscode.Diagnostic[] }>;

/** After this long without a further change to an edited file's problems, they have settled. */
const QUIET_MS = 400;
/** Never wait longer than this for an edit's problems. */
const CEILING_MS = 10_000;
/** How long an open file may take to show what was written to disk. */
const SYNC_MS = 3000;
/** How long a cold language server may take to load its project before a rename or references (tsserver on a loaded machine: several seconds). */
const WARM_MS = 15_000;

/**
 * Problems after an edit, from the language servers VS Code already runs: the diagnostics before
 * the write, then the edited files' diagnostics once they settle (`onDidChangeDiagnostics` for those
 * files, then a quiet spell; no fixed sleep), and what changed.
 */
export class ProblemWatch {
  readonly clock = new SettleClock();

  constructor(private readonly guard: () => PathGuard) {}

  snapshot(): DiagnosticsSnapshot {
    const out: DiagnosticsSnapshot = new Map();
    for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) out.set(uri.toString(), { uri, diagnostics });
    return out;
  }

  /**
   * Before a language server is asked about a file: when no file of its language is shown yet, the
   * server may still be loading its project and answer from the files it has open only (tsserver's
   * partial "syntax" server does: a rename would change one file of three). Then the file is shown
   * (without taking the focus) and its first diagnostics, which come once the project is loaded,
   * are waited for (bounded by the cold deadline). A language already shown costs nothing.
   */
  async warm(uri: vscode.Uri, signal?: AbortSignal): Promise<void> {
    if (isInTab(uri)) return;
    const doc = await vscode.workspace.openTextDocument(uri);
    const shownLanguages = new Set(
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).flatMap((t) => (t.input instanceof vscode.TabInputText ? [vscode.workspace.textDocuments.find((d) => d.uri.toString() === (t.input as vscode.TabInputText).uri.toString())?.languageId] : [])),
    );
    if (shownLanguages.has(doc.languageId)) return;
    // A file with no problems gets no event: then the whole (longer) bound is waited, once per cold language.
    const settled = this.waitForSettle(new Set([uri.toString()]), WARM_MS, signal, (ms) => this.clock.record(doc.languageId, ms), WARM_MS);
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
    await settled;
  }

  /**
   * Waits for the problems of files just written (`content`: what was written) to settle and
   * reports what the write changed against `before`. Opens each file in an editor tab (without
   * taking the focus) when it is in none: language servers report on the files the editor shows.
   */
  async afterWrite(files: readonly { uri: vscode.Uri; content: string }[], before: DiagnosticsSnapshot, signal?: AbortSignal): Promise<{ report: EditProblems; text: string }> {
    const started = performance.now();
    const targets = new Set(files.map((f) => f.uri.toString()));
    let cold = false;
    let language = '';
    for (const f of files) {
      const inTab = isInTab(f.uri);
      const doc = await vscode.workspace.openTextDocument(f.uri);
      language ||= doc.languageId;
      if (!inTab) {
        cold ||= !vscode.workspace.textDocuments.some((d) => d !== doc && d.languageId === doc.languageId);
        await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
      }
      await untilSynced(doc, f.content, signal);
    }
    const settled = await this.waitForSettle(targets, this.clock.deadlineFor(language, cold), signal, (ms) => this.clock.record(language, ms));
    const waitedMs = performance.now() - started;

    const after = this.snapshot();
    // Only the edited files and those whose errors grew are looked at (each path is checked on disk by the guard).
    const errors = (d: readonly vscode.Diagnostic[] | undefined) => d?.filter((x) => x.severity === vscode.DiagnosticSeverity.Error).length ?? 0;
    const relevant = new Set([...targets, ...[...after].filter(([k, v]) => errors(v.diagnostics) > errors(before.get(k)?.diagnostics)).map(([k]) => k)]);
    const paths = new VisiblePaths(this.guard());
    const lines = new LineReader();
    const toDiagnoses = async (snap: DiagnosticsSnapshot, withLines: boolean): Promise<Map<string, Diagnosis[]>> => {
      const out = new Map<string, Diagnosis[]>();
      for (const [key, { uri, diagnostics }] of snap) {
        if (diagnostics.length === 0 || !relevant.has(key)) continue;
        const path = await paths.of(uri);
        if (!path) continue;
        const list: Diagnosis[] = [];
        for (const d of diagnostics) list.push(diagnosisOf(path, d, withLines && targets.has(uri.toString()) ? await lines.line(uri, d.range.start.line + 1) : undefined));
        out.set(path, list);
      }
      return out;
    };
    const edited = (await Promise.all(files.map((f) => paths.of(f.uri)))).filter((p): p is string => !!p);
    const { report, introduced } = editReport({ before: await toDiagnoses(before, false), after: await toDiagnoses(after, true), edited, waitedMs, settled });
    return { report, text: editProblemsText(report, introduced) };
  }

  /**
   * Resolves once the targets' diagnostics settled: `diagnostics` after a change and a quiet spell,
   * `unchanged` when no change came by the deadline (a server that finds nothing new says nothing).
   */
  private waitForSettle(targets: Set<string>, deadlineMs: number, signal: AbortSignal | undefined, onFirst: (ms: number) => void, ceilingMs = CEILING_MS): Promise<EditProblems['settled']> {
    const started = performance.now();
    return new Promise((resolve) => {
      let quiet: ReturnType<typeof setTimeout> | undefined;
      let heard = false;
      const finish = (how: EditProblems['settled']) => {
        clearTimeout(quiet);
        clearTimeout(deadline);
        clearTimeout(ceiling);
        listener.dispose();
        signal?.removeEventListener('abort', aborted);
        resolve(how);
      };
      const aborted = () => finish(heard ? 'diagnostics' : 'unchanged');
      const listener = vscode.languages.onDidChangeDiagnostics((e) => {
        if (!e.uris.some((u) => targets.has(u.toString()))) return;
        if (!heard) {
          heard = true;
          clearTimeout(deadline);
          onFirst(performance.now() - started);
        }
        clearTimeout(quiet);
        quiet = setTimeout(() => finish('diagnostics'), QUIET_MS);
      });
      const deadline = setTimeout(() => finish('unchanged'), deadlineMs);
      const ceiling = setTimeout(() => finish(heard ? 'diagnostics' : 'unchanged'), ceilingMs);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

}

function isInTab(uri: vscode.Uri): boolean {
  const k = uri.toString();
  return vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === k));
}

/** Waits until an open document shows what was written to its file (VS Code reloads it from disk). */
async function untilSynced(doc: vscode.TextDocument, content: string, signal?: AbortSignal): Promise<void> {
  const same = () => doc.getText() === content || doc.getText().replace(/\r\n/g, '\n') === content.replace(/\r\n/g, '\n');
  if (same() || doc.isDirty) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    };
    const sub = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc && same()) done();
    });
    const timer = setTimeout(done, SYNC_MS);
    signal?.addEventListener('abort', done, { once: true });
  });
}
