import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { PathGuard } from '../../tools/pathGuard';
import { ToolError } from '../../tools/pathGuard';
import { int, str, type WordMatch } from '../../tools/workspaceTools';
import { identifierAt, locationsText, NAVIGATION_LIMITS, partialNote, sameKindGlob, unreportedFiles } from '../core/definitions';
import { atLeast, bySeverity, PROBLEM_LIMITS, problemLine, type Diagnosis, type Severity } from '../core/problems';
import { diagnosisOf, LineReader, VisiblePaths } from './visible';

/** Files opened at most so that a language server loads them, for one answer. */
const LOAD_LIMIT = 20;

/** Where a symbol named by the model is: a file and a position on its name. */
export interface SymbolSpot {
  uri: vscode.Uri;
  position: vscode.Position;
  display: string;
}

/**
 * The editor's language features for the model, each result through the path guard: nothing from
 * a file outside the workspace, ignored, or holding secrets (such results are counted, not shown).
 */
export class Navigation {
  /**
   * `warm`: readies the language server for a file before it is asked (see `ProblemWatch.warm`).
   * `words`: where a name appears as a whole word in the files the chat reads (a text search), to
   * name the places a server whose project does not cover the workspace did not report.
   */
  constructor(
    private readonly guard: () => PathGuard,
    private readonly warm: (uri: vscode.Uri) => Promise<void> = () => Promise.resolve(),
    private readonly words: (word: string, glob: string | undefined, limit: number) => Promise<WordMatch[]> = () => Promise.resolve([]),
  ) {}

  /**
   * Why a language server's answer about this file may not cover the workspace, when it is known:
   * tsserver without a tsconfig.json or jsconfig.json above the file builds an inferred project
   * from the open files and what they import.
   */
  coverageGap(uri: vscode.Uri): string | undefined {
    if (uri.scheme !== 'file' || !/\.[cm]?[jt]sx?$/i.test(uri.fsPath)) return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath;
    for (let dir = dirname(uri.fsPath); ; dir = dirname(dir)) {
      if (existsSync(join(dir, 'tsconfig.json')) || existsSync(join(dir, 'jsconfig.json'))) return undefined;
      if (!folder || dir === folder || dirname(dir) === dir) break;
    }
    return 'no tsconfig.json or jsconfig.json covers this file, so the TypeScript server knows only the files open in the editor and what they import';
  }

  /**
   * A server's answer about `name` checked against the text: the files where the name appears that
   * the answer does not name. When there are such files, they are opened (so the server loads
   * them) and `ask` runs again, once. What is still missed is returned, with why the answer may be
   * partial; files missed while the server's project covers the workspace are its own verdict
   * (other symbols of the same name) and are not returned. `first`: the answer already had.
   */
  async crossCheck<T>(
    name: string,
    about: vscode.Uri,
    ask: () => Promise<T>,
    reportedPaths: (answer: T) => Promise<string[]>,
    first?: { answer: T },
  ): Promise<{ answer: T; why?: string; missed: WordMatch[] }> {
    let answer = first ? first.answer : await ask();
    const why = this.coverageGap(about);
    const paths = new VisiblePaths(this.guard());
    // Each place through the guard again, as every result is: nothing from a file the chat may not read.
    const matches = (
      await Promise.all(
        (await this.words(name, sameKindGlob(about.fsPath), LOAD_LIMIT * 5)).map(async (m) =>
          (await paths.of(vscode.Uri.file(m.abs))) ? [{ ...m, path: m.display }] : [],
        ),
      )
    ).flat();
    let missed = unreportedFiles(
      (await reportedPaths(answer)).map((path) => ({ path })),
      matches,
    );
    if (missed.length === 0) return { answer, missed: [] };
    // The files the server may not have loaded: open them (not shown), then ask once more.
    const files = [...new Set(missed.map((m) => m.abs))].slice(0, LOAD_LIMIT);
    for (const f of files) await vscode.workspace.openTextDocument(vscode.Uri.file(f)).then(undefined, () => undefined);
    answer = await ask();
    missed = unreportedFiles(
      (await reportedPaths(answer)).map((path) => ({ path })),
      matches,
    );
    const unloaded = missed.filter((m) => !files.includes(m.abs));
    return { answer, ...(why ? { why } : {}), missed: why ? missed : unloaded };
  }

  /** The symbol's position: on its name in the file given (at the line given), else where the workspace's symbol search finds it. */
  async locate(args: Record<string, unknown>): Promise<SymbolSpot> {
    const symbol = str(args, 'symbol')!.trim();
    const path = str(args, 'path', false);
    const line = int(args, 'line');
    const guard = this.guard();
    if (path) {
      const p = await guard.resolve(path);
      if (await guard.isIgnored(p, false)) throw new ToolError(`"${p.display}" is ignored in this workspace; the chat does not read it.`);
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(p.abs));
      const rows = line !== undefined ? [line - 1] : [...Array(doc.lineCount).keys()];
      for (const r of rows) {
        if (r < 0 || r >= doc.lineCount) throw new ToolError(`${p.display} has ${doc.lineCount} lines; line ${r + 1} is past the end.`);
        const col = identifierAt(doc.lineAt(r).text, symbol);
        if (col >= 0) return { uri: doc.uri, position: new vscode.Position(r, col), display: p.display };
      }
      throw new ToolError(
        `"${symbol}" does not appear in ${p.display}${line !== undefined ? ` at line ${line}` : ''}. Check the spelling, or leave out the path to search the workspace.`,
      );
    }
    const lookUp = async () =>
      (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', symbol)) ?? [];
    let found = await lookUp();
    let exact = found.filter((s) => s.name === symbol || s.name.replace(/\(.*$/, '') === symbol);
    // No server knows it yet (none started: no file of its language was opened): start one with a
    // file where the name appears as a word, and look again; else take that place itself.
    const inText = exact.length ? [] : await this.words(symbol, undefined, 50);
    if (inText.length) {
      await this.warm(vscode.Uri.file(inText[0].abs));
      found = await lookUp();
      exact = found.filter((s) => s.name === symbol || s.name.replace(/\(.*$/, '') === symbol);
      const first = inText.find((m) => identifierAt(m.text, symbol) >= 0);
      if (!exact.length && first) {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(first.abs));
        const col = first.line - 1 < doc.lineCount ? identifierAt(doc.lineAt(first.line - 1).text, symbol) : -1;
        if (col >= 0) return { uri: doc.uri, position: new vscode.Position(first.line - 1, col), display: first.display };
      }
    }
    const paths = new VisiblePaths(guard);
    for (const s of exact) {
      const display = await paths.of(s.location.uri);
      if (!display) continue;
      const doc = await vscode.workspace.openTextDocument(s.location.uri);
      for (let r = s.location.range.start.line; r <= Math.min(s.location.range.end.line, doc.lineCount - 1); r++) {
        const col = identifierAt(doc.lineAt(r).text, symbol);
        if (col >= 0) return { uri: doc.uri, position: new vscode.Position(r, col), display };
      }
    }
    throw new ToolError(
      `No symbol named "${symbol}" was found in the workspace${
        found.length
          ? ` (the search found ${found
              .slice(0, 5)
              .map((s) => s.name)
              .join(', ')})`
          : ''
      }. Give the path of a file where it appears.`,
    );
  }

  /** Readies the language server for a file (the project loaded) before a question that spans files. */
  ready(uri: vscode.Uri): Promise<void> {
    return this.warm(uri);
  }

  async definitions(args: Record<string, unknown>): Promise<string> {
    const spot = await this.locate(args);
    const raw =
      (await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(
        'vscode.executeDefinitionProvider',
        spot.uri,
        spot.position,
      )) ?? [];
    const targets = raw.map((l) => ('targetUri' in l ? { uri: l.targetUri, range: l.targetSelectionRange ?? l.targetRange } : { uri: l.uri, range: l.range }));
    if (targets.length === 0)
      return `No definition found for "${String(args.symbol)}" at ${spot.display}:${spot.position.line + 1} (no language server knows it).`;
    const { places, hidden } = await this.places(targets);
    return locationsText(`Definition of ${String(args.symbol)}`, places, NAVIGATION_LIMITS.definitions, hidden);
  }

  async references(args: Record<string, unknown>): Promise<string> {
    const spot = await this.locate(args);
    await this.warm(spot.uri);
    const symbol = String(args.symbol).trim();
    const ask = async () =>
      (await vscode.commands.executeCommand<vscode.Location[] | undefined>('vscode.executeReferenceProvider', spot.uri, spot.position)) ?? [];
    const paths = new VisiblePaths(this.guard());
    const {
      answer: raw,
      why,
      missed,
    } = await this.crossCheck(symbol, spot.uri, ask, async (locs) => (await Promise.all(locs.map((l) => paths.of(l.uri)))).filter((p): p is string => !!p));
    const note = partialNote({ name: symbol, why, missed: missed.map((m) => ({ path: m.display, line: m.line, text: m.text })) });
    if (raw.length === 0)
      return [`No references found for "${symbol}" at ${spot.display}:${spot.position.line + 1} (no language server knows it).`, note]
        .filter(Boolean)
        .join('\n\n');
    const { places, hidden } = await this.places(raw.map((l) => ({ uri: l.uri, range: l.range })));
    return [locationsText(`References to ${symbol}`, places, NAVIGATION_LIMITS.references, hidden), note].filter(Boolean).join('\n\n');
  }

  async workspaceSymbols(args: Record<string, unknown>): Promise<string> {
    const query = str(args, 'query')!;
    const search = async () =>
      (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', query)) ?? [];
    let found = await search();
    // A server that has not started (no file of its language opened yet) finds nothing: start it
    // with a file where the name appears, and check its answer against the text.
    const seen = (await this.words(query.trim(), undefined, 50)).filter((m) => /\.[cm]?[jt]sx?$/i.test(m.abs));
    let note = '';
    if (seen.length) {
      const about = vscode.Uri.file((seen.find((m) => identifierAt(m.text, query.trim()) >= 0) ?? seen[0]).abs);
      await this.warm(about);
      const visible = new VisiblePaths(this.guard());
      const checked = await this.crossCheck(query.trim(), about, search, async (list) =>
        (await Promise.all(list.filter((x) => x.name === query.trim()).map((x) => visible.of(x.location.uri)))).filter((p): p is string => !!p),
      );
      found = checked.answer;
      note = partialNote({ name: query.trim(), why: checked.why, missed: checked.missed.map((m) => ({ path: m.display, line: m.line, text: m.text })) });
    }
    const paths = new VisiblePaths(this.guard());
    const out: string[] = [];
    let hidden = 0;
    for (const s of found) {
      const display = await paths.of(s.location.uri);
      if (!display) {
        hidden++;
        continue;
      }
      if (out.length < NAVIGATION_LIMITS.workspaceSymbols)
        out.push(
          `${vscode.SymbolKind[s.kind].toLowerCase()} ${s.name}${s.containerName ? ` (in ${s.containerName})` : ''} — ${display}:${s.location.range.start.line + 1}`,
        );
    }
    if (out.length === 0)
      return [`No symbol matches "${query}"${hidden ? ` in the files the chat reads (${hidden} elsewhere)` : ''}.`, note].filter(Boolean).join('\n\n');
    const total = found.length - hidden;
    return [
      [
        `${total} symbol${total === 1 ? '' : 's'} match "${query}"${total > out.length ? ` (first ${out.length} shown)` : ''}:`,
        ...out,
        ...(hidden ? [`${hidden} more in files the chat does not read were left out.`] : []),
      ].join('\n'),
      note,
    ]
      .filter(Boolean)
      .join('\n\n');
  }

  async documentSymbols(args: Record<string, unknown>): Promise<string> {
    const guard = this.guard();
    const p = await guard.resolve(str(args, 'path')!);
    if (await guard.isIgnored(p, false)) throw new ToolError(`"${p.display}" is ignored in this workspace; the chat does not read it.`);
    const uri = vscode.Uri.file(p.abs);
    const raw =
      (await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>('vscode.executeDocumentSymbolProvider', uri)) ??
      [];
    if (raw.length === 0) return `No symbols in ${p.display} (no language server gives an outline of it).`;
    const out: string[] = [];
    const walk = (list: readonly (vscode.DocumentSymbol | vscode.SymbolInformation)[], depth: number) => {
      for (const s of list) {
        if (out.length >= NAVIGATION_LIMITS.documentSymbols) return;
        const range = 'range' in s ? s.range : s.location.range;
        out.push(`${'  '.repeat(depth)}${vscode.SymbolKind[s.kind].toLowerCase()} ${s.name} — lines ${range.start.line + 1}-${range.end.line + 1}`);
        if ('children' in s && s.children.length) walk(s.children, depth + 1);
      }
    };
    walk(raw, 0);
    return [
      `${p.display}: ${out.length} symbol${out.length === 1 ? '' : 's'}${out.length >= NAVIGATION_LIMITS.documentSymbols ? ' (limit reached)' : ''}`,
      ...out,
    ].join('\n');
  }

  async problems(args: Record<string, unknown>): Promise<string> {
    const severity = str(args, 'severity', false) ?? 'warning';
    if (!['error', 'warning', 'all'].includes(severity)) throw new ToolError('"severity" must be error, warning or all.');
    const floor: Severity = severity === 'all' ? 'hint' : (severity as Severity);
    const guard = this.guard();
    const path = str(args, 'path', false);
    let scope: { abs: string; display: string } | undefined;
    if (path && path !== '.') {
      const p = await guard.resolve(path);
      scope = { abs: p.abs, display: p.display };
    }
    const paths = new VisiblePaths(guard);
    const lines = new LineReader();
    const found: (Diagnosis & { uri: vscode.Uri })[] = [];
    for (const [uri, list] of vscode.languages.getDiagnostics()) {
      if (scope && uri.fsPath !== scope.abs && !uri.fsPath.startsWith(`${scope.abs}/`)) continue;
      const kept = list.filter((d) => atLeast(diagnosisOf('', d), floor));
      if (kept.length === 0) continue;
      const display = await paths.of(uri);
      if (!display) continue;
      for (const d of kept) found.push({ ...diagnosisOf(display, d), uri });
    }
    const where = scope ? scope.display : 'the workspace';
    const what = severity === 'error' ? 'errors' : severity === 'warning' ? 'errors or warnings' : 'problems';
    if (found.length === 0) return `No ${what} in ${where} (from the language servers and linters running now; a file nobody opened may not be checked yet).`;
    found.sort(bySeverity);
    const shown = found.slice(0, PROBLEM_LIMITS.listed);
    for (const d of shown) d.lineText = await lines.line(d.uri, d.line);
    const errors = found.filter((d) => d.severity === 'error').length;
    const files = new Set(found.map((d) => d.path)).size;
    return [
      `${found.length} problem${found.length === 1 ? '' : 's'} in ${where} (${errors} error${errors === 1 ? '' : 's'}) in ${files} file${files === 1 ? '' : 's'}${found.length > shown.length ? `; first ${shown.length} shown` : ''}:`,
      ...shown.map(({ uri: _u, ...d }) => problemLine(d)),
    ].join('\n');
  }

  private async places(
    targets: { uri: vscode.Uri; range: vscode.Range }[],
  ): Promise<{ places: { path: string; line: number; text?: string }[]; hidden: number }> {
    const paths = new VisiblePaths(this.guard());
    const lines = new LineReader();
    const places: { path: string; line: number; text?: string }[] = [];
    let hidden = 0;
    for (const t of targets) {
      const display = await paths.of(t.uri);
      if (!display) {
        hidden++;
        continue;
      }
      places.push({ path: display, line: t.range.start.line + 1, text: await lines.line(t.uri, t.range.start.line + 1) });
    }
    return { places, hidden };
  }
}
