import { readFile, stat } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { PathGuard } from '../../tools/pathGuard';
import type { Diagnosis, Severity } from '../core/problems';

/**
 * A file's path as the chat shows it, when the chat may read it: inside the workspace, not a file
 * that holds secrets, not ignored. Undefined otherwise (its results are left out).
 */
export async function visiblePath(guard: PathGuard, uri: vscode.Uri): Promise<string | undefined> {
  if (uri.scheme !== 'file') return undefined;
  try {
    const p = await guard.resolve(uri.fsPath);
    if (await guard.isIgnored(p, false)) return undefined;
    return p.display;
  } catch {
    return undefined;
  }
}

/** The paths of many files at once, each checked once. */
export class VisiblePaths {
  private readonly known = new Map<string, Promise<string | undefined>>();
  constructor(private readonly guard: PathGuard) {}
  of(uri: vscode.Uri): Promise<string | undefined> {
    const k = uri.toString();
    let p = this.known.get(k);
    if (!p) this.known.set(k, (p = visiblePath(this.guard, uri)));
    return p;
  }
}

const FILE_TEXT_LIMIT = 2 * 1024 * 1024;

/** Reads lines of files: from the editor's copy when it is open (what the language server saw), else from disk. */
export class LineReader {
  private readonly files = new Map<string, Promise<string[] | undefined>>();

  line(uri: vscode.Uri, line: number): Promise<string | undefined> {
    return this.lines(uri).then((l) => l?.[line - 1]);
  }

  lines(uri: vscode.Uri): Promise<string[] | undefined> {
    const k = uri.toString();
    let p = this.files.get(k);
    if (!p) {
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === k);
      p = open
        ? Promise.resolve(open.getText().split(/\r?\n/))
        : stat(uri.fsPath).then(
            (s) => (s.size > FILE_TEXT_LIMIT ? undefined : readFile(uri.fsPath, 'utf8').then((t) => t.split(/\r?\n/))),
            () => undefined,
          );
      this.files.set(k, p);
    }
    return p;
  }
}

export function severityOf(s: vscode.DiagnosticSeverity): Severity {
  switch (s) {
    case vscode.DiagnosticSeverity.Error:
      return 'error';
    case vscode.DiagnosticSeverity.Warning:
      return 'warning';
    case vscode.DiagnosticSeverity.Information:
      return 'info';
    default:
      return 'hint';
  }
}

export function diagnosisOf(path: string, d: vscode.Diagnostic, lineText?: string): Diagnosis {
  const code = typeof d.code === 'object' ? d.code.value : d.code;
  return {
    path,
    line: d.range.start.line + 1,
    severity: severityOf(d.severity),
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code: String(code) } : {}),
    ...(lineText !== undefined ? { lineText } : {}),
  };
}
