import * as vscode from 'vscode';
import type { PathGuard } from '../../tools/pathGuard';
import { ToolError } from '../../tools/pathGuard';
import { int, str } from '../../tools/workspaceTools';
import { identifierAt, locationsText, NAVIGATION_LIMITS } from '../core/definitions';
import { atLeast, bySeverity, PROBLEM_LIMITS, problemLine, type Diagnosis, type Severity } from '../core/problems';
import { diagnosisOf, LineReader, VisiblePaths } from './visible';

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
  /** `warm`: readies the language server for a file before it is asked (see `ProblemWatch.warm`). */
  constructor(
    private readonly guard: () => PathGuard,
    private readonly warm: (uri: vscode.Uri) => Promise<void> = () => Promise.resolve(),
  ) {}

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
      throw new ToolError(`"${symbol}" does not appear in ${p.display}${line !== undefined ? ` at line ${line}` : ''}. Check the spelling, or leave out the path to search the workspace.`);
    }
    const found = (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', symbol)) ?? [];
    const exact = found.filter((s) => s.name === symbol || s.name.replace(/\(.*$/, '') === symbol);
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
    throw new ToolError(`No symbol named "${symbol}" was found in the workspace${found.length ? ` (the search found ${found.slice(0, 5).map((s) => s.name).join(', ')})` : ''}. Give the path of a file where it appears.`);
  }

  /** Readies the language server for a file (the project loaded) before a question that spans files. */
  ready(uri: vscode.Uri): Promise<void> {
    return this.warm(uri);
  }

  async definitions(args: Record<string, unknown>): Promise<string> {
    const spot = await this.locate(args);
    const raw = (await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>('vscode.executeDefinitionProvider', spot.uri, spot.position)) ?? [];
    const targets = raw.map((l) => ('targetUri' in l ? { uri: l.targetUri, range: l.targetSelectionRange ?? l.targetRange } : { uri: l.uri, range: l.range }));
    if (targets.length === 0) return `No definition found for "${String(args.symbol)}" at ${spot.display}:${spot.position.line + 1} (no language server knows it).`;
    const { places, hidden } = await this.places(targets);
    return locationsText(`Definition of ${String(args.symbol)}`, places, NAVIGATION_LIMITS.definitions, hidden);
  }

  async references(args: Record<string, unknown>): Promise<string> {
    const spot = await this.locate(args);
    await this.warm(spot.uri);
    const raw = (await vscode.commands.executeCommand<vscode.Location[] | undefined>('vscode.executeReferenceProvider', spot.uri, spot.position)) ?? [];
    if (raw.length === 0) return `No references found for "${String(args.symbol)}" at ${spot.display}:${spot.position.line + 1} (no language server knows it).`;
    const { places, hidden } = await this.places(raw.map((l) => ({ uri: l.uri, range: l.range })));
    return locationsText(`References to ${String(args.symbol)}`, places, NAVIGATION_LIMITS.references, hidden);
  }

  async workspaceSymbols(args: Record<string, unknown>): Promise<string> {
    const query = str(args, 'query')!;
    const found = (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', query)) ?? [];
    const paths = new VisiblePaths(this.guard());
    const out: string[] = [];
    let hidden = 0;
    for (const s of found) {
      const display = await paths.of(s.location.uri);
      if (!display) {
        hidden++;
        continue;
      }
      if (out.length < NAVIGATION_LIMITS.workspaceSymbols) out.push(`${vscode.SymbolKind[s.kind].toLowerCase()} ${s.name}${s.containerName ? ` (in ${s.containerName})` : ''} — ${display}:${s.location.range.start.line + 1}`);
    }
    if (out.length === 0) return `No symbol matches "${query}"${hidden ? ` in the files the chat reads (${hidden} elsewhere)` : ''}.`;
    const total = found.length - hidden;
    return [`${total} symbol${total === 1 ? '' : 's'} match "${query}"${total > out.length ? ` (first ${out.length} shown)` : ''}:`, ...out, ...(hidden ? [`${hidden} more in files the chat does not read were left out.`] : [])].join('\n');
  }

  async documentSymbols(args: Record<string, unknown>): Promise<string> {
    const guard = this.guard();
    const p = await guard.resolve(str(args, 'path')!);
    if (await guard.isIgnored(p, false)) throw new ToolError(`"${p.display}" is ignored in this workspace; the chat does not read it.`);
    const uri = vscode.Uri.file(p.abs);
    const raw = (await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>('vscode.executeDocumentSymbolProvider', uri)) ?? [];
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
    return [`${p.display}: ${out.length} symbol${out.length === 1 ? '' : 's'}${out.length >= NAVIGATION_LIMITS.documentSymbols ? ' (limit reached)' : ''}`, ...out].join('\n');
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

  private async places(targets: { uri: vscode.Uri; range: vscode.Range }[]): Promise<{ places: { path: string; line: number; text?: string }[]; hidden: number }> {
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
