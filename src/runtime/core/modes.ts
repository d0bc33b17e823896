/**
 * Chat modes: which tools a request carries and what the system prompt adds. Ask and Plan carry
 * read-only tools only (no edit, command or MCP tool reaches the request); Agent carries
 * everything. A custom agent (`.agent.md`) restricts the tools to those it names.
 */
import * as l10n from '@vscode/l10n';
import type { ToolDefinition } from '../../tools/workspaceTools';
import { UPDATE_PLAN } from './plan';

export type BuiltInMode = 'agent' | 'ask' | 'plan';

export interface ModeInfo {
  id: string;
  name: string;
  description: string;
}

/** The built-in modes, named in the display language (asked when the panel is drawn, after it is set). */
export const builtInModes = (): readonly ModeInfo[] => [
  { id: 'agent', name: l10n.t('Agent'), description: l10n.t('Reads, edits files and runs commands (edits and commands after your approval)') },
  { id: 'ask', name: l10n.t('Ask'), description: l10n.t('Answers questions; reads the workspace, changes nothing') },
  { id: 'plan', name: l10n.t('Plan'), description: l10n.t('Investigates read-only and proposes a plan; Approve carries it out in Agent mode') },
];

function isBuiltInMode(id: string): id is BuiltInMode {
  return id === 'agent' || id === 'ask' || id === 'plan';
}

/** The mode a stored id names; Agent for none or one not known. */
export function modeOf(id: string | undefined): BuiltInMode {
  return id !== undefined && isBuiltInMode(id) ? id : 'agent';
}

/** The tools a request of this mode carries. */
export function toolsForMode(mode: BuiltInMode, definitions: readonly ToolDefinition[]): ToolDefinition[] {
  if (mode === 'agent') return [...definitions];
  return definitions.filter((d) => d.kind === 'read' && (mode === 'plan' || d.name !== UPDATE_PLAN.name));
}

/** What the system prompt says of the mode (nothing for Agent: the tools section says it all). */
export function modePrompt(mode: BuiltInMode): string {
  switch (mode) {
    case 'agent':
      return '';
    case 'ask':
      return [
        'Mode: Ask. Answer the question. You can read and search the workspace but not change it: you have no tool that edits files or runs commands.',
        'If the answer needs a change, show it as code the person can apply themselves.',
      ].join('\n');
    case 'plan':
      return [
        'Mode: Plan. Investigate with the read-only tools, then write a plan with update_plan: concrete steps (files, functions, what changes in each, how to check it), every item pending.',
        'Do not change anything: you have no tool that edits files or runs commands. End your answer with a short summary of the plan; the person approves it, and then it is carried out in Agent mode.',
      ].join('\n');
  }
}
