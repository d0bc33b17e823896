import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import * as vscode from 'vscode';
import type { EditProblems } from '../../common/conversation';
import type { PathGuard } from '../../tools/pathGuard';
import { editProblemsText, editReport, SettleClock, type Diagnosis } from '../core/problems';
import { ServerProbe, type ServerAnswer } from './serverProbe';
import { diagnosisOf, LineReader, VisiblePaths } from './visible';

/** Every file's diagnostics at one moment, by URI. */
export type DiagnosticsSnapshot = Map<string, { uri: vscode.Uri; diagnostics: readonly vscode.Diagnostic[] }>;

/** What was known of the edited files right before the write. */
export interface Baseline {
  snapshot: DiagnosticsSnapshot;
  /** A server's own answer for an edited file (by URI), when it gave one before the write. */
  answers: Map<string, ServerAnswer>;
  /** Edited files whose problems before the write are known: answered, reported on before, or new. */
  known: Set<string>;
}

/** A report made after the edit's result went back (the server's first report came late). */
export type LateReport = (late: { report: EditProblems; text: string }) => void;

/** After this long without a further change to an edited file's problems, they have settled. */
const QUIET_MS = 400;
/** Once each edited file's server answered and VS Code shows the same problems, this much longer for other sources (a linter). */
const AGREED_MS = 150;
/** Once the servers answered, how long VS Code may take to show the same problems before their answers alone are used. */
const DISAGREE_MS = 1500;
/** Never wait longer than this for an edit's problems before its result goes back. */
const CEILING_MS = 10_000;
/** A write waits at most this long for the server's first answer on the file (the approval usually covered it). */
const PRE_WRITE_MS = 5000;
/** A server that had not reported in time is listened to this long more: its report updates the card. */
const LATE_MS = 120_000;
/** How long an open file may take to show what was written to disk. */
const SYNC_MS = 3000;
/** How long a cold language server may take to load its project before a rename or references (tsserver on a loaded machine: several seconds). */
const WARM_MS = 15_000;

/**
 * Problems after an edit, from the language servers VS Code already runs, and never guessed: the
 * edited files' problems before the write and after it are each known (the server answered, or
 * reported on the file) or said not to be. Before the write the file is opened so that its server
 * loads it (`prepare`, while the person looks at the diff); after it, the edited files'
 * diagnostics are waited for (`onDidChangeDiagnostics`, then a quiet spell; a server that can be
 * asked, tsserver, is asked too, since it reports nothing on a file without problems). A file no
 * server reported on in time is reported as not checked, and its first report later updates the
 * report (`onLate`).
 */
export class ProblemWatch implements vscode.Disposable {
  readonly clock = new SettleClock();
  readonly probe = new ServerProbe();
  /** URIs a language server has reported on since the window opened (an event, even an empty one). */
  private readonly reported = new Set<string>();
  /** Languages whose server has answered (an event or a probe): a silent file of a warm language is less likely a cold server. */
  private readonly warmLanguages = new Set<string>();
  /** The server's answer on files about to be edited, asked when the edit was proposed. */
  private readonly early = new Map<string, Promise<ServerAnswer | undefined>>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly guard: () => PathGuard) {
    this.disposables.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) this.reported.add(uri.toString());
      }),
    );
  }

  snapshot(): DiagnosticsSnapshot {
    const out: DiagnosticsSnapshot = new Map();
    for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) out.set(uri.toString(), { uri, diagnostics });
    return out;
  }

  /**
   * An edit of these files was proposed: each existing file is opened (not shown) so that its
   * language server loads it and its project while the person reads the diff, and the server is
   * asked for its problems. Costs nothing the write does not need anyway.
   */
  prepare(uris: readonly vscode.Uri[]): void {
    for (const uri of uris) {
      const key = uri.toString();
      if (this.early.has(key) || uri.scheme !== 'file' || !existsSync(uri.fsPath)) continue;
      const asked = Promise.resolve(vscode.workspace.openTextDocument(uri)).then(
        (doc) => this.ask(doc, WARM_MS),
        () => undefined,
      );
      this.early.set(key, asked);
      // A proposal that is never written lets go of its answer.
      setTimeout(() => this.early.get(key) === asked && this.early.delete(key), LATE_MS).unref?.();
    }
  }

  /** Right before the write: the diagnostics now, and what is known of each edited file (waits at most `PRE_WRITE_MS` for its server's first answer). */
  async beforeWrite(uris: readonly vscode.Uri[], signal?: AbortSignal): Promise<Baseline> {
    const answers = new Map<string, ServerAnswer>();
    const known = new Set<string>();
    const deadline = performance.now() + PRE_WRITE_MS;
    await Promise.all(
      uris.map(async (uri) => {
        const key = uri.toString();
        if (uri.scheme === 'file' && !existsSync(uri.fsPath)) {
          known.add(key); // A new file had no problems.
          return;
        }
        if (!this.early.has(key)) this.prepare([uri]);
        const early = this.early.get(key);
        this.early.delete(key);
        const left = Math.max(0, deadline - performance.now());
        let answer = await within(early ?? Promise.resolve(undefined), left, signal);
        // The person may have changed the file since it was asked about: ask again (a warm server answers at once).
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
        if (answer && doc?.isDirty) answer = await this.ask(doc, Math.max(500, deadline - performance.now()), signal);
        if (answer) answers.set(key, answer);
      }),
    );
    const snapshot = this.snapshot();
    for (const uri of uris) {
      const key = uri.toString();
      if (answers.has(key) || this.reported.has(key) || (snapshot.get(key)?.diagnostics.length ?? 0) > 0) known.add(key);
    }
    return { snapshot, answers, known };
  }

  /**
   * Before a language server is asked about a file: opens it (its server loads its project) and
   * waits for the server's first answer on it, bounded by the cold deadline. A server that can be
   * asked (tsserver) answers once its project is loaded; any other is waited for by its first
   * report, only when no file of its language is shown yet. A warm server costs nothing.
   */
  async warm(uri: vscode.Uri, signal?: AbortSignal): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(uri);
    if (this.probe.serverName(doc.languageId)) {
      // A file shown while its server has answered already costs nothing; otherwise its project is loaded by the answer.
      if (!(this.warmLanguages.has(doc.languageId) && isInTab(uri))) await this.ask(doc, WARM_MS, signal);
      return;
    }
    if (isInTab(uri)) return;
    const shownLanguages = new Set(
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .flatMap((t) =>
          t.input instanceof vscode.TabInputText
            ? [vscode.workspace.textDocuments.find((d) => d.uri.toString() === (t.input as vscode.TabInputText).uri.toString())?.languageId]
            : [],
        ),
    );
    if (shownLanguages.has(doc.languageId)) return;
    // A file with no problems gets no event: then the whole (longer) bound is waited, once per cold language.
    const settled = this.waitForSettle(new Set([uri.toString()]), WARM_MS, signal, (ms) => this.clock.record(doc.languageId, ms), WARM_MS);
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
    await settled;
  }

  /**
   * Waits for the problems of files just written (`content`: what was written) and reports what the
   * write changed against `before`. Opens each file in an editor tab (without taking the focus)
   * when it is in none: language servers report on the files the editor shows. An edited file that
   * no server reported on in time is named as not checked; `onLate` gets the report made once one
   * does (within two minutes).
   */
  async afterWrite(
    files: readonly { uri: vscode.Uri; content: string }[],
    before: Baseline,
    signal?: AbortSignal,
    onLate?: LateReport,
  ): Promise<{ report: EditProblems; text: string }> {
    const started = performance.now();
    const targets = new Set(files.map((f) => f.uri.toString()));
    const docs: vscode.TextDocument[] = [];
    for (const f of files) {
      const doc = await vscode.workspace.openTextDocument(f.uri);
      if (!isInTab(f.uri)) await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
      await untilSynced(doc, f.content, signal);
      docs.push(doc);
    }
    const language = docs[0]?.languageId ?? '';
    const askable = (doc: vscode.TextDocument) => !!this.probe.serverName(doc.languageId);
    const server = docs.map((d) => this.probe.serverName(d.languageId)).find(Boolean);
    // A server that can be asked ends the wait by its answer (up to the ceiling: a busy tsserver
    // took 4 s after a rename here); any other by its report, or by the deadline (longer while its
    // server, which reported on files of this kind before, is cold).
    const deadline = docs.some(askable) ? CEILING_MS : this.clock.deadlineFor(language, !this.warmLanguages.has(language) && this.reportsOn(docs));

    const answers = new Map<string, ServerAnswer>();
    const probed = Promise.all(docs.filter(askable).map((doc) => this.ask(doc, CEILING_MS, signal).then((a) => a && answers.set(doc.uri.toString(), a))));
    const agreed = () =>
      docs.every((doc) => askable(doc) && answers.has(doc.uri.toString()) && sameProblems(answers.get(doc.uri.toString())!, shownTs(doc.uri)));
    const answered = () => docs.every((doc) => answers.has(doc.uri.toString()));
    const heard = new Set<string>();
    const fallbackMs = this.clock.deadlineFor(language, !this.warmLanguages.has(language));
    const settled = await this.waitForSettle(targets, deadline, signal, (ms) => this.clock.record(language, ms), CEILING_MS, {
      heard,
      probed,
      agreed,
      answered,
      fallbackMs,
    });

    const unchecked = new Set(
      docs
        .filter((doc) => {
          const key = doc.uri.toString();
          if (answers.has(key) || heard.has(key)) return false;
          // A server that cannot be asked and had reported on the file before: its silence is news (nothing changed).
          return askable(doc) || !before.known.has(key);
        })
        .map((doc) => doc.uri.toString()),
    );
    if (unchecked.size < docs.length || heard.size > 0) this.warmLanguages.add(language);
    const result = await this.report(files, docs, before, answers, unchecked, performance.now() - started, settled, server);

    if (unchecked.size > 0 && onLate) void this.listenLate(files, docs, before, started, server, onLate);
    return result;
  }

  /** The report and its text, from VS Code's diagnostics with the servers' own answers for the edited files. */
  private async report(
    files: readonly { uri: vscode.Uri }[],
    docs: readonly vscode.TextDocument[],
    before: Baseline,
    answers: Map<string, ServerAnswer>,
    unchecked: Set<string>,
    waitedMs: number,
    settled: EditProblems['settled'],
    server: string | undefined,
  ): Promise<{ report: EditProblems; text: string }> {
    const targets = new Set(files.map((f) => f.uri.toString()));
    const after = this.snapshot();
    // Only the edited files and those whose errors grew are looked at (each path is checked on disk by the guard).
    const errors = (d: readonly vscode.Diagnostic[] | undefined) => d?.filter((x) => x.severity === vscode.DiagnosticSeverity.Error).length ?? 0;
    const relevant = new Set([
      ...targets,
      ...[...after].filter(([k, v]) => errors(v.diagnostics) > errors(before.snapshot.get(k)?.diagnostics)).map(([k]) => k),
    ]);
    const paths = new VisiblePaths(this.guard());
    const lines = new LineReader();
    const toDiagnoses = async (snap: DiagnosticsSnapshot, own: Map<string, ServerAnswer>, withLines: boolean): Promise<Map<string, Diagnosis[]>> => {
      const out = new Map<string, Diagnosis[]>();
      const keys = new Set([...[...snap.keys()].filter((k) => relevant.has(k)), ...[...own.keys()].filter((k) => targets.has(k))]);
      for (const key of keys) {
        const uri = snap.get(key)?.uri ?? vscode.Uri.parse(key);
        const path = await paths.of(uri);
        if (!path) continue;
        const answer = own.get(key);
        const shown = (snap.get(key)?.diagnostics ?? []).map((d) => diagnosisOf(path, d)).filter((d) => !answer || d.source !== 'ts');
        const list = [...shown, ...(answer ?? []).map((d) => ({ ...d, path }))];
        if (withLines && targets.has(key)) for (const d of list) d.lineText = await lines.line(uri, d.line);
        if (list.length) out.set(path, list);
      }
      return out;
    };
    const edited = (await Promise.all(files.map((f) => paths.of(f.uri)))).filter((p): p is string => !!p);
    const pathOf = async (keys: Iterable<string>) => (await Promise.all([...keys].map((k) => paths.of(vscode.Uri.parse(k))))).filter((p): p is string => !!p);
    const uncheckedBefore = docs.map((d) => d.uri.toString()).filter((k) => !before.known.has(k));
    const { report, introduced } = editReport({
      before: await toDiagnoses(before.snapshot, before.answers, false),
      after: await toDiagnoses(after, answers, true),
      edited,
      waitedMs,
      settled,
      unchecked: await pathOf(unchecked),
      uncheckedBefore: await pathOf(uncheckedBefore),
      server,
    });
    return { report, text: editProblemsText(report, introduced) };
  }

  /** Listens for the first report on files that were not checked in time, and reports again then. */
  private async listenLate(
    files: readonly { uri: vscode.Uri }[],
    docs: readonly vscode.TextDocument[],
    before: Baseline,
    started: number,
    server: string | undefined,
    onLate: LateReport,
  ): Promise<void> {
    const targets = new Set(files.map((f) => f.uri.toString()));
    const answers = new Map<string, ServerAnswer>();
    const heard = new Set<string>();
    const probed = Promise.all(
      docs.filter((doc) => this.probe.serverName(doc.languageId)).map((doc) => this.ask(doc, LATE_MS).then((a) => a && answers.set(doc.uri.toString(), a))),
    );
    const agreed = () => docs.every((doc) => answers.has(doc.uri.toString()) || heard.has(doc.uri.toString()));
    const how = await this.waitForSettle(targets, LATE_MS, undefined, () => undefined, LATE_MS, { heard, probed, agreed, answered: agreed });
    const unchecked = new Set(docs.map((d) => d.uri.toString()).filter((k) => !answers.has(k) && !heard.has(k)));
    if (unchecked.size === docs.length) return;
    this.warmLanguages.add(docs[0].languageId);
    const lateMs = performance.now() - started;
    const { report } = await this.report(files, docs, before, answers, unchecked, lateMs, how === 'timeout' ? 'unchanged' : how, server);
    const late = { ...report, lateMs: Math.round(lateMs) };
    onLate({ report: late, text: editProblemsText(late) });
  }

  /** Whether a language server has reported on some file of these files' kinds (by extension) in this window. */
  private reportsOn(docs: readonly vscode.TextDocument[]): boolean {
    const kinds = new Set(docs.map((d) => extname(d.uri.path)));
    for (const key of this.reported) if (kinds.has(extname(vscode.Uri.parse(key).path))) return true;
    return false;
  }

  /** Asks the file's server (when it can be asked) and notes its language as warm once it answered. */
  private async ask(doc: vscode.TextDocument, timeoutMs: number, signal?: AbortSignal): Promise<ServerAnswer | undefined> {
    const answer = await this.probe.problems(doc, timeoutMs, signal);
    if (answer) this.warmLanguages.add(doc.languageId);
    return answer;
  }

  /**
   * Resolves once the targets' diagnostics settled: `diagnostics` after a change and a quiet spell,
   * `unchanged` when no change came by the deadline (a server that finds nothing new says nothing).
   * With `until`: the files heard from are added to `heard`, and the wait also ends once `probed`
   * resolved and `agreed()` holds (the servers' answers and VS Code's diagnostics are the same).
   */
  private waitForSettle(
    targets: Set<string>,
    deadlineMs: number,
    signal: AbortSignal | undefined,
    onFirst: (ms: number) => void,
    ceilingMs = CEILING_MS,
    until?: { heard: Set<string>; probed: Promise<unknown>; agreed: () => boolean; answered: () => boolean; fallbackMs?: number },
  ): Promise<EditProblems['settled']> {
    const started = performance.now();
    return new Promise((resolve) => {
      let quiet: ReturnType<typeof setTimeout> | undefined;
      let heard = false;
      let probed = !until;
      let disagreeing = false;
      let done = false;
      const finish = (how: EditProblems['settled']) => {
        if (done) return;
        done = true;
        clearTimeout(quiet);
        clearTimeout(deadline);
        clearTimeout(ceiling);
        listener.dispose();
        signal?.removeEventListener('abort', aborted);
        resolve(how);
      };
      const aborted = () => finish(heard ? 'diagnostics' : 'unchanged');
      // Once the servers answered and VS Code shows what they said, only a short spell more (for
      // other sources); once they answered and VS Code does not show it yet, a little longer.
      const checkAgreed = () => {
        if (!until || !probed) return false;
        if (!until.agreed()) {
          if (until.answered() && !disagreeing) {
            disagreeing = true;
            clearTimeout(deadline);
            setTimeout(() => finish(heard ? 'diagnostics' : 'unchanged'), DISAGREE_MS);
          }
          return false;
        }
        clearTimeout(quiet);
        clearTimeout(deadline);
        quiet = setTimeout(() => finish(heard ? 'diagnostics' : 'unchanged'), AGREED_MS);
        return true;
      };
      const listener = vscode.languages.onDidChangeDiagnostics((e) => {
        const mine = e.uris.filter((u) => targets.has(u.toString()));
        if (mine.length === 0) return;
        for (const u of mine) until?.heard.add(u.toString());
        if (!heard) {
          heard = true;
          clearTimeout(deadline);
          onFirst(performance.now() - started);
        }
        if (checkAgreed()) return;
        clearTimeout(quiet);
        quiet = setTimeout(() => finish('diagnostics'), QUIET_MS);
      });
      void until?.probed.then(() => {
        probed = true;
        // A server that could not be asked after all (it failed, it did not start): wait for its report as for any other.
        if (!checkAgreed() && !until.answered() && until.fallbackMs !== undefined && !heard) {
          clearTimeout(deadline);
          deadline = setTimeout(() => finish('unchanged'), Math.max(0, until.fallbackMs - (performance.now() - started)));
        }
      });
      let deadline = setTimeout(() => finish(heard ? 'diagnostics' : 'unchanged'), deadlineMs);
      const ceiling = setTimeout(() => finish(heard ? 'diagnostics' : 'unchanged'), ceilingMs);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.early.clear();
  }
}

/** VS Code's problems from tsserver for a file, as the server's answers read them. */
function shownTs(uri: vscode.Uri): ServerAnswer {
  return vscode.languages
    .getDiagnostics(uri)
    .map((d) => diagnosisOf('', d))
    .filter((d) => d.source === 'ts' && (d.severity === 'error' || d.severity === 'warning'));
}

/** The same problems (by line, message and code; severity aside, which a setting may lower to a warning). */
function sameProblems(a: ServerAnswer, b: ServerAnswer): boolean {
  const key = (d: ServerAnswer[number]) => `${d.line}\u0000${d.code ?? ''}\u0000${d.message}`;
  const x = a.map(key).sort();
  const y = b.map(key).sort();
  return x.length === y.length && x.every((k, i) => k === y[i]);
}

function isInTab(uri: vscode.Uri): boolean {
  const k = uri.toString();
  return vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === k));
}

/** A promise's value, or undefined after `ms` or once the signal aborts. */
function within<T>(p: Promise<T | undefined>, ms: number, signal?: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    const stop = () => resolve(undefined);
    signal?.addEventListener('abort', stop, { once: true });
    void p.then(
      (v) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
        resolve(v);
      },
      () => resolve(undefined),
    );
  });
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
