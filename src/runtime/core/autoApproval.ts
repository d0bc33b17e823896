/**
 * What runs without asking, by category. Pure: the settings come in, a yes or no goes out.
 *
 * Reads run unasked by default, edits and paid media never; a command runs unasked only when the
 * command policy says `run` (every command in the line allowed) and the terminal category is on;
 * an MCP tool when its server or the tool itself is listed. Pausing makes everything ask.
 */
import * as l10n from '@vscode/l10n';

export interface AutoApproval {
  readOnly: boolean;
  edits: boolean;
  terminal: boolean;
  /** `server` (all its tools) or `server/tool` entries. */
  mcp: string[];
  paidMedia: boolean;
}

export const DEFAULT_AUTO_APPROVAL: AutoApproval = { readOnly: true, edits: false, terminal: true, mcp: [], paidMedia: false };

export type ToolCategory =
  | { kind: 'read' }
  | { kind: 'edit' }
  | { kind: 'command'; decision: 'run' | 'ask' | 'refuse' }
  | { kind: 'tool'; server: string; tool: string }
  | { kind: 'paid' };

export function runsUnasked(category: ToolCategory, auto: AutoApproval, paused: boolean): boolean {
  if (paused) return false;
  switch (category.kind) {
    case 'read':
      return auto.readOnly;
    case 'edit':
      return auto.edits;
    case 'command':
      return auto.terminal && category.decision === 'run';
    case 'tool':
      return auto.mcp.includes(category.server) || auto.mcp.includes(`${category.server}/${category.tool}`);
    case 'paid':
      return auto.paidMedia;
  }
}

/** The panel's line about what runs unasked now (short phrases, in a fixed order). */
export function unaskedSummary(auto: AutoApproval, paused: boolean, allowedCommands: number, sandboxed = false): { paused: boolean; parts: string[] } {
  if (paused) return { paused, parts: [] };
  const parts: string[] = [];
  if (auto.readOnly) parts.push(l10n.t('reads'));
  if (auto.edits) parts.push(l10n.t('edits'));
  if (auto.terminal && sandboxed) parts.push(l10n.t('commands in the sandbox'));
  if (auto.terminal && allowedCommands > 0) parts.push(allowedCommands === 1 ? l10n.t('1 allowed command') : l10n.t('{0} allowed commands', allowedCommands));
  if (auto.mcp.length > 0) parts.push(`MCP: ${auto.mcp.join(', ')}`);
  if (auto.paidMedia) parts.push(l10n.t('paid media'));
  return { paused, parts };
}
