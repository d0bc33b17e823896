/** Renaming a symbol through the language server: the tool, its checks, and its edits applied to text. */
import type { ToolDefinition } from '../../tools/workspaceTools';

export const RENAME_SYMBOL: ToolDefinition = {
  name: 'rename_symbol',
  kind: 'write',
  description:
    'Rename a symbol everywhere it is used, through the language server (as F2 does): imports, references and the declaration change together, across files. The person sees one diff of every file and accepts or rejects it. Prefer it to editing each use by hand.',
  parameters: {
    type: 'object',
    properties: {
      symbol: { type: 'string', description: 'The identifier to rename, exactly as written in the code' },
      new_name: { type: 'string', description: 'The new identifier' },
      path: {
        type: 'string',
        description: 'A file where the symbol appears (relative to the workspace root); optional: without it the symbol is looked up in the workspace',
      },
      line: { type: 'integer', description: 'The line of that file where it appears (1-based, optional)' },
    },
    required: ['symbol', 'new_name'],
  },
};

export const RENAME_LIMITS = {
  /** A rename touching more files than this is refused: the model should narrow it, the person cannot review it. */
  files: 200,
  nameLength: 200,
};

/** Why a new name cannot be one (undefined: it can). Language servers check the language's own rules. */
export function newNameProblem(name: string): string | undefined {
  if (!name) return 'new_name is empty.';
  if (name.length > RENAME_LIMITS.nameLength) return `new_name is over ${RENAME_LIMITS.nameLength} characters.`;
  if (/[\s'"`;{}()<>[\],]/u.test(name)) return `"${name}" is not an identifier (no spaces, quotes, brackets or punctuation).`;
  return undefined;
}

/** One replacement in a text, by character offsets. */
export interface TextChange {
  start: number;
  end: number;
  newText: string;
}

/** The text with every change applied (offsets refer to the original); overlapping changes are refused. */
export function applyChanges(text: string, changes: readonly TextChange[]): string {
  const sorted = [...changes].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  let floor = Number.POSITIVE_INFINITY;
  for (const c of sorted) {
    if (c.start < 0 || c.end < c.start || c.end > text.length)
      throw new Error(`a change (${c.start}-${c.end}) lies outside the text (${text.length} characters)`);
    if (c.end > floor) throw new Error('two changes overlap');
    out = out.slice(0, c.start) + c.newText + out.slice(c.end);
    floor = c.start;
  }
  return out;
}

/** What the tool answers once the rename is written. */
export function renameDone(symbol: string, newName: string, files: readonly { path: string; changes: number }[]): string {
  const total = files.reduce((n, f) => n + f.changes, 0);
  return [
    `Renamed ${symbol} to ${newName}: ${total} change${total === 1 ? '' : 's'} in ${files.length} file${files.length === 1 ? '' : 's'}:`,
    ...files.map((f) => `  ${f.path} (${f.changes})`),
  ].join('\n');
}
