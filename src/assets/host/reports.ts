import * as vscode from 'vscode';

export const REPORT_SCHEME = 'model-gateway-report';

/**
 * Read-only Markdown documents for results that are read rather than kept (moderation reports,
 * image descriptions): closing one never asks to save.
 */
export class ReportDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, this);
  private counter = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.path) ?? '';
  }

  /** Shows the markdown as a new read-only document; returns its URI. */
  async open(name: string, markdown: string): Promise<vscode.Uri> {
    const safe = name.replace(/[^\w.-]+/g, '-').slice(0, 60);
    const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${++this.counter}-${safe}.md` });
    this.contents.set(uri.path, markdown);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    // Shown rendered (the built-in markdown preview); the source stays open behind it.
    await vscode.window.showTextDocument(doc, { preview: true });
    await vscode.commands.executeCommand('markdown.showPreview', uri).then(undefined, () => undefined);
    return uri;
  }

  dispose(): void {
    this.registration.dispose();
  }
}
