import * as vscode from 'vscode';
import type { AgentToolbox, ToolChoice } from '../../runtime/host/toolbox';

interface ToolItem extends vscode.QuickPickItem {
  tool?: ToolChoice;
}

/**
 * *Configure Tools…*: the tools of MCP servers and other extensions, each on or off for the chat.
 * Other extensions' tools are off until turned on here; VS Code's own tools that do what ours do
 * are not listed (the placeholder says how many). The choice is kept for this workspace or for
 * all workspaces, as the person says.
 */
export async function configureTools(toolbox: AgentToolbox): Promise<void> {
  const all = toolbox.choices();
  const leftOut = toolbox.leftOut();
  const hidden = leftOut.length
    ? vscode.l10n.t(
        "{0} of VS Code's own tools are not listed: ours do the same jobs ({1}).",
        leftOut.length,
        [...new Set(leftOut.map((l) => l.ours))].join(', '),
      )
    : '';
  if (all.length === 0) {
    void vscode.window.showInformationMessage(
      [vscode.l10n.t('No MCP server or other extension offers tools now. Add MCP servers with Model Gateway: MCP Servers.'), hidden].filter(Boolean).join(' '),
    );
    return;
  }
  const items: ToolItem[] = [];
  const groups = new Map<string, ToolChoice[]>();
  for (const t of all) {
    const group = t.origin === 'extension' ? vscode.l10n.t('Other extensions (off until you turn them on)') : vscode.l10n.t('MCP server {0}', t.source);
    groups.set(group, [...(groups.get(group) ?? []), t]);
  }
  for (const [group, tools] of groups) {
    items.push({ label: group, kind: vscode.QuickPickItemKind.Separator });
    for (const t of tools) {
      items.push({
        label: t.name,
        description:
          t.chosenIn === 'workspace'
            ? vscode.l10n.t('chosen for this workspace')
            : t.chosenIn === 'global'
              ? vscode.l10n.t('chosen for all workspaces')
              : undefined,
        detail: firstSentence(t.description),
        picked: t.on,
        tool: t,
      });
    }
  }
  // What is not listed, said last (a separator's label: the placeholder and title are too short for it).
  if (hidden) items.push({ label: hidden, kind: vscode.QuickPickItemKind.Separator });
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: vscode.l10n.t('Tools the chat may use (checked: found when needed)'),
    placeHolder: vscode.l10n.t('Filter tools by name or description'),
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  if (!picked) return;
  const on = new Set(picked.map((p) => p.tool?.name).filter((n): n is string => !!n));
  const changes: Record<string, boolean> = {};
  for (const t of all) if (on.has(t.name) !== t.on) changes[t.name] = on.has(t.name);
  if (Object.keys(changes).length === 0) return;
  const workspace = vscode.l10n.t('This workspace');
  const everywhere = vscode.l10n.t('All workspaces');
  const scope = vscode.workspace.workspaceFolders?.length
    ? await vscode.window.showQuickPick([workspace, everywhere], { title: vscode.l10n.t('Keep this choice for'), ignoreFocusOut: true })
    : everywhere;
  if (!scope) return;
  await toolbox.setToolChoices(changes, scope === workspace ? 'workspace' : 'global');
}

function firstSentence(text: string): string {
  // The source is said by the group: an MCP tool's description ends with its server and name for the model.
  const one = text
    .replace(/\s*\(MCP server "[^"]*", tool "[^"]*"\)$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  const first = /^(.+?[.!?])(\s|$)/.exec(one)?.[1] ?? one;
  return first.length > 140 ? `${first.slice(0, 139)}…` : first;
}
