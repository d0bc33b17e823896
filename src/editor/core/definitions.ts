/** The tools that read what the editor knows, as offered to the model. */
import type { ToolDefinition } from '../../tools/workspaceTools';

export const NAVIGATION_LIMITS = {
  references: 100,
  definitions: 20,
  workspaceSymbols: 50,
  documentSymbols: 300,
  lineText: 200,
};

const symbolTarget = {
  symbol: { type: 'string', description: 'The identifier, exactly as written in the code (e.g. "parseConfig" or "UserService")' },
  path: {
    type: 'string',
    description: 'A file where the symbol appears (relative to the workspace root); optional: without it the symbol is looked up in the workspace',
  },
  line: { type: 'integer', description: 'The line of that file where it appears (1-based, optional)' },
};

export const GET_PROBLEMS: ToolDefinition = {
  name: 'get_problems',
  kind: 'read',
  description:
    "The problems (errors and warnings) VS Code's language servers and linters report now: for one file, a folder, or the whole workspace. Use it to check the code compiles after changes, or to find what to fix.",
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'A file or folder relative to the workspace root; omit for the whole workspace' },
      severity: {
        type: 'string',
        enum: ['error', 'warning', 'all'],
        description: 'error: errors only; warning (default): errors and warnings; all: also information and hints',
      },
    },
    required: [],
  },
};

export const FIND_DEFINITION: ToolDefinition = {
  name: 'find_definition',
  kind: 'read',
  description: "Where a symbol is defined, from the language server (go to definition). Returns path:line and the line's text.",
  parameters: { type: 'object', properties: symbolTarget, required: ['symbol'] },
};

export const FIND_REFERENCES: ToolDefinition = {
  name: 'find_references',
  kind: 'read',
  description:
    "Every place a symbol is used, from the language server (find all references): path:line and the line's text, grouped by file. Better than a text search: it follows the language's scoping and imports.",
  parameters: { type: 'object', properties: symbolTarget, required: ['symbol'] },
};

export const WORKSPACE_SYMBOLS: ToolDefinition = {
  name: 'workspace_symbols',
  kind: 'read',
  description:
    "Find classes, functions, variables… by name across the workspace (the language servers' symbol search; fuzzy). Returns kind, name, container and path:line.",
  parameters: { type: 'object', properties: { query: { type: 'string', description: 'A name or part of one' } }, required: ['query'] },
};

export const DOCUMENT_SYMBOLS: ToolDefinition = {
  name: 'document_symbols',
  kind: 'read',
  description: 'The outline of a file: its classes, functions, methods… with their lines, nested. Cheaper than reading a large file to find one function.',
  parameters: { type: 'object', properties: { path: { type: 'string', description: 'The file, relative to the workspace root' } }, required: ['path'] },
};

export const EDITOR_READ_TOOLS = [GET_PROBLEMS, FIND_DEFINITION, FIND_REFERENCES, WORKSPACE_SYMBOLS, DOCUMENT_SYMBOLS];

/** A word in a line, as an identifier (not inside a longer one): its column, or -1. */
export function identifierAt(text: string, symbol: string, from = 0): number {
  if (!symbol) return -1;
  let at = text.indexOf(symbol, from);
  while (at !== -1) {
    const before = at > 0 ? text[at - 1] : '';
    const after = text[at + symbol.length] ?? '';
    if (!/[\p{L}\p{N}_$]/u.test(before) && !/[\p{L}\p{N}_$]/u.test(after)) return at;
    at = text.indexOf(symbol, at + 1);
  }
  return -1;
}

/** Places in files, grouped by file in first-seen order: `path:line: text`. */
export function locationsText(title: string, places: readonly { path: string; line: number; text?: string }[], limit: number, hidden: number): string {
  const seen = new Set<string>();
  const unique = places.filter((p) => {
    const k = `${p.path}:${p.line}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const shown = unique.slice(0, limit);
  const files = [...new Set(shown.map((p) => p.path))];
  const fileCount = new Set(unique.map((p) => p.path)).size;
  const out = [`${title}: ${unique.length} in ${fileCount} file${fileCount === 1 ? '' : 's'}${unique.length > limit ? ` (first ${limit} shown)` : ''}`];
  for (const f of files) {
    out.push('');
    for (const p of shown.filter((x) => x.path === f)) out.push(`${p.path}:${p.line}: ${(p.text ?? '').trim().slice(0, NAVIGATION_LIMITS.lineText)}`);
  }
  if (hidden) out.push('', `${hidden} more in files the chat does not read (outside the workspace, ignored, or holding secrets) were left out.`);
  return out.join('\n');
}

/** Files of one kind, for a text search beside a language server: TypeScript's and JavaScript's together. */
const SCRIPT_KINDS = ['ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs'];

/** A glob for the files a server of this file's kind reads (`*.{ts,tsx,…}`), or undefined for a file without an extension. */
export function sameKindGlob(path: string): string | undefined {
  const ext = /\.([\w-]+)$/.exec(path)?.[1]?.toLowerCase();
  if (!ext) return undefined;
  return SCRIPT_KINDS.includes(ext) ? `*.{${SCRIPT_KINDS.join(',')}}` : `*.${ext}`;
}

/** The text matches in files the server's answer does not name at all (matches in files it named are its own business: comments, other symbols). */
export function unreportedFiles<T extends { path: string }>(reported: readonly { path: string }[], matches: readonly T[]): T[] {
  const named = new Set(reported.map((r) => r.path));
  return matches.filter((m) => !named.has(m.path));
}

/**
 * What a navigation result adds when it may be partial: why (the server's project does not cover
 * the workspace), and where the name appears in files the server did not report, capped.
 */
export function partialNote(o: { name: string; why?: string; missed: readonly { path: string; line: number; text: string }[]; limit?: number }): string {
  if (o.missed.length === 0) return '';
  const limit = o.limit ?? 20;
  const files = new Set(o.missed.map((m) => m.path)).size;
  const head = `May be partial${o.why ? `: ${o.why}` : ''}. "${o.name}" also appears in ${files} file${files === 1 ? '' : 's'} the language server did not report (uses it missed, or other symbols, comments or strings of the same name; read them to tell):`;
  const lines = o.missed.slice(0, limit).map((m) => `${m.path}:${m.line}: ${m.text.trim().slice(0, NAVIGATION_LIMITS.lineText)}`);
  return [head, ...lines, ...(o.missed.length > limit ? [`… and ${o.missed.length - limit} more (search_text lists them).`] : [])].join('\n');
}
