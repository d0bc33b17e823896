import * as vscode from 'vscode';

/**
 * The editor tabs the chat opened to show a proposal or a restore, found again to close them once
 * the decision is made: a diff whose side is one of our documents (`scheme`, its id in the path or
 * the query), or a multi-file diff (`vscode.changes`), known by its title or, where VS Code exposes
 * it (`TabInputTextMultiDiff`, not yet in the typings this extension builds against), by its files.
 */
export function tabsShowing(scheme: string, id: string, title?: string): vscode.Tab[] {
  const ours = (uri: vscode.Uri | undefined) => !!uri && uri.scheme === scheme && (uri.path.startsWith(`/${id}/`) || uri.query === id);
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => {
      if (t.input instanceof vscode.TabInputTextDiff) return ours(t.input.modified) || ours(t.input.original);
      const diffs: unknown = (t.input as { textDiffs?: unknown } | undefined)?.textDiffs;
      if (Array.isArray(diffs) && (diffs as { original?: vscode.Uri; modified?: vscode.Uri }[]).some((d) => ours(d.modified) || ours(d.original))) return true;
      return title !== undefined && t.label === title;
    });
}

/** Closes the tabs `tabsShowing` finds (a tab the person closed meanwhile is no error). */
export async function closeTabsShowing(scheme: string, id: string, title?: string): Promise<void> {
  const tabs = tabsShowing(scheme, id, title);
  if (tabs.length) await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
}
