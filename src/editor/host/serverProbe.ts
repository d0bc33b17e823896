import * as vscode from 'vscode';
import * as z from 'zod/mini';
import type { Diagnosis } from '../core/problems';

/** The languages VS Code's built-in TypeScript extension serves (tsserver). */
const TS_LANGUAGES = new Set(['typescript', 'typescriptreact', 'javascript', 'javascriptreact']);
const TS_EXTENSION = 'vscode.typescript-language-features';
/** The TypeScript extension's command that forwards an allowed request to tsserver (VS Code 1.74 and later). */
const TS_REQUEST = 'typescript.tsserverRequest';

/**
 * tsserver's style checks (unused names, unreachable code, fall-through, a path without a return),
 * which the TypeScript extension shows as warnings while `typescript.reportStyleChecksAsWarnings`
 * is on (its default): the answers read them the same way, so they compare with what VS Code shows.
 */
const STYLE_CHECKS = new Set([6133, 6138, 6192, 6196, 6198, 6199, 6205, 7027, 7028, 7029, 7030]);

const TsDiagnostic = z.object({
  start: z.object({ line: z.number() }),
  text: z.string(),
  category: z.string(),
  code: z.optional(z.number()),
  source: z.optional(z.string()),
});
const TsResponse = z.object({ type: z.literal('response'), success: z.boolean(), body: z.optional(z.array(TsDiagnostic)) });

/** A language server's own answer for one file: its problems now (a file with none answers `[]`). */
export type ServerAnswer = Omit<Diagnosis, 'path'>[];

/**
 * Asks a language server directly whether it has checked a file, where VS Code lets an extension
 * ask: tsserver, through the TypeScript extension's `typescript.tsserverRequest`
 * (`syntacticDiagnosticsSync` and `semanticDiagnosticsSync`, both on its allow list). The answer
 * comes once tsserver has loaded the file's project, so it tells what no diagnostics event can:
 * the TypeScript extension publishes nothing for a file without problems, and a server still
 * loading its project says nothing either. Other languages have no probe (undefined): their
 * servers (LSP) publish a report, empty or not, for every file they check.
 */
export class ServerProbe {
  /** The server's name for a language, when it can be asked. */
  serverName(languageId: string): string | undefined {
    return TS_LANGUAGES.has(languageId) && vscode.extensions.getExtension(TS_EXTENSION) ? 'TypeScript' : undefined;
  }

  /**
   * The server's problems for the document as it is now, or undefined when it cannot be asked or
   * did not answer within `timeoutMs` (still loading its project, or stopped).
   */
  async problems(doc: vscode.TextDocument, timeoutMs: number, signal?: AbortSignal): Promise<ServerAnswer | undefined> {
    if (!this.serverName(doc.languageId) || doc.uri.scheme !== 'file') return undefined;
    const source = new vscode.CancellationTokenSource();
    const stop = () => source.cancel();
    const timer = setTimeout(stop, timeoutMs);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const extension = vscode.extensions.getExtension(TS_EXTENSION);
      if (!extension) return undefined;
      // Opening a TypeScript document activates it; asking first would find no command yet.
      await Promise.race([extension.activate(), cancelled(source.token)]);
      if (source.token.isCancellationRequested) return undefined;
      const ask = async (command: string) =>
        TsResponse.safeParse(await vscode.commands.executeCommand(TS_REQUEST, command, { file: doc.uri }, undefined, source.token));
      const [syntactic, semantic] = await Promise.all([ask('syntacticDiagnosticsSync'), ask('semanticDiagnosticsSync')]);
      if (source.token.isCancellationRequested || !syntactic.success || !semantic.success || !syntactic.data.success || !semantic.data.success)
        return undefined;
      const styleAsWarning = vscode.workspace.getConfiguration('typescript', doc.uri).get<boolean>('reportStyleChecksAsWarnings', true);
      return [...(syntactic.data.body ?? []), ...(semantic.data.body ?? [])].flatMap((d) => {
        const lowered = styleAsWarning && d.code !== undefined && STYLE_CHECKS.has(d.code);
        const severity = d.category === 'error' && !lowered ? 'error' : d.category === 'error' || d.category === 'warning' ? 'warning' : undefined;
        // Suggestions (unused names, deprecations) are hints in VS Code: never reported as introduced.
        if (!severity) return [];
        return [
          { line: d.start.line, severity, message: d.text, source: d.source ?? 'ts', ...(d.code !== undefined ? { code: String(d.code) } : {}) } as const,
        ];
      });
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      source.dispose();
    }
  }
}

function cancelled(token: vscode.CancellationToken): Promise<void> {
  return new Promise((resolve) => token.onCancellationRequested(() => resolve()));
}
