import { spawn } from 'node:child_process';
import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import picomatch from 'picomatch';
import type { CommandPlacement, ImageAttachment } from '../common/conversation';
import { PathGuard, ToolError, type ResolvedPath, type WorkspaceFolderPath } from './pathGuard';

/** A tool as offered to the model; the same definition serves both wire formats. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, unknown>; required: string[] };
  /** Writes need the person's approval and run one at a time; reads run at once, in parallel. */
  kind: 'read' | 'write';
}

export interface ToolResult {
  content: string;
  isError: boolean;
  /** Images the tool returned (named in `content` too): shown in the card, and sent to a model that takes images. */
  images?: ImageAttachment[];
  /** A command: where it ran (the card says so). */
  placement?: CommandPlacement;
}

/** A proposed change, shown as a diff for the person to accept or reject. */
export interface ProposedEdit {
  kind: 'create' | 'edit';
  path: ResolvedPath;
  before: string;
  after: string;
}

export interface Approver {
  approve(edit: ProposedEdit, signal?: AbortSignal): Promise<{ accepted: boolean; note?: string }>;
  /** One decision for edits of several files that belong together (a rename): all are written, or none. */
  approveAll?(edits: readonly ProposedEdit[], title: string, signal?: AbortSignal): Promise<{ accepted: boolean; note?: string }>;
}

/** A place where a word appears: the path as tools show it, on disk, the 1-based line and its text. */
export interface WordMatch {
  display: string;
  abs: string;
  line: number;
  text: string;
}

export const LIMITS = {
  readBytes: 256 * 1024,
  readLines: 2000,
  listEntries: 500,
  findResults: 200,
  searchResults: 100,
  searchOutputBytes: 64 * 1024,
  fileForSearchBytes: 1024 * 1024,
};

export const TOOL_DEFINITIONS: ToolDefinition[] = [
  {
    name: 'read_file',
    kind: 'read',
    description: `Read a text file of the workspace. Returns numbered lines. Large files: read a range with start_line and end_line (at most ${LIMITS.readLines} lines or ${LIMITS.readBytes / 1024} KB at a time).`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path relative to the workspace root, e.g. "src/index.ts"' },
        start_line: { type: 'integer', description: 'First line to read (1-based, optional)' },
        end_line: { type: 'integer', description: 'Last line to read (inclusive, optional)' },
      },
      required: ['path'],
    },
  },
  {
    name: 'list_dir',
    kind: 'read',
    description: 'List the files and folders in a workspace folder (folders end with "/"). Ignored files are left out.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Folder path relative to the workspace root; "." for the root' } },
      required: ['path'],
    },
  },
  {
    name: 'find_files',
    kind: 'read',
    description: 'Find files whose path matches a glob, e.g. "**/*.test.ts" or "src/**/config*". Ignored files are left out.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Glob pattern relative to the workspace root' },
        max_results: { type: 'integer', description: `At most this many paths (default and limit ${LIMITS.findResults})` },
      },
      required: ['pattern'],
    },
  },
  {
    name: 'search_text',
    kind: 'read',
    description: 'Search the text of the workspace files (ripgrep). Returns "path:line: text" matches. Ignored files are left out.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Text to find (or a regular expression when is_regex is true)' },
        is_regex: { type: 'boolean', description: 'Treat query as a regular expression (default false)' },
        glob: { type: 'string', description: 'Only search files matching this glob, e.g. "**/*.ts" (optional)' },
      },
      required: ['query'],
    },
  },
  {
    name: 'create_file',
    kind: 'write',
    description: 'Propose a new file. The person sees a diff and accepts or rejects it; the result says which. Fails if the file exists (use replace_in_file).',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the new file, relative to the workspace root' },
        content: { type: 'string', description: 'The whole content of the file' },
      },
      required: ['path', 'content'],
    },
  },
  {
    name: 'replace_in_file',
    kind: 'write',
    description:
      'Propose replacing one exact occurrence of old_string with new_string in a file. old_string must match exactly once (include surrounding lines to make it unique). The person accepts or rejects the diff.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path relative to the workspace root' },
        old_string: { type: 'string', description: 'The exact text to replace (whitespace matters)' },
        new_string: { type: 'string', description: 'The replacement text' },
      },
      required: ['path', 'old_string', 'new_string'],
    },
  },
];

/** Walks the workspace folders, skipping ignored folders early; yields files relative to their folder. */
export async function* walkWorkspace(guard: PathGuard): AsyncGenerator<{ folder: WorkspaceFolderPath; rel: string; abs: string }> {
  for (const folder of guard.folders) {
    const queue: string[] = [''];
    while (queue.length > 0) {
      const relDir = queue.shift()!;
      const absDir = join(folder.path, relDir);
      const entries = await readdir(absDir, { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        const rel = relDir ? `${relDir}/${e.name}` : e.name;
        const abs = join(absDir, e.name);
        if (e.isSymbolicLink()) continue;
        if (await guard.isIgnored({ folder, rel, abs }, e.isDirectory())) continue;
        if (e.isDirectory()) queue.push(rel);
        else if (e.isFile()) yield { folder, rel, abs };
      }
    }
  }
}

function parseArgs(args: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof args !== 'string') return args;
  if (!args.trim()) return {};
  try {
    const v = JSON.parse(args) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new ToolError(`The arguments are not a JSON object: ${args.slice(0, 200)}`);
}

/** A string argument; a missing required one is a `ToolError` the model reads. */
export function str(args: Record<string, unknown>, name: string, required = true): string | undefined {
  const v = args[name];
  if (v === undefined || v === null) {
    if (required) throw new ToolError(`Missing the "${name}" argument.`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ToolError(`"${name}" must be a string.`);
  return v;
}

/** A whole-number argument from 1, when given. */
export function int(args: Record<string, unknown>, name: string): number | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new ToolError(`"${name}" must be a whole number from 1.`);
  return n;
}

/** Whether a file looks binary (a NUL byte in its first 8 KB). */
export async function isBinary(abs: string): Promise<boolean> {
  const fh = await open(abs, 'r');
  try {
    const buf = Buffer.alloc(8000);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).includes(0);
  } finally {
    await fh.close();
  }
}

export interface WorkspaceToolsOptions {
  approver: Approver;
  /** Told after an accepted write reached the disk (checkpoints, undo). */
  onWritten?: (edit: ProposedEdit) => void;
  /** ripgrep's path; VS Code ships one. Falls back to a built-in search when absent. */
  rgPath?: string;
  /**
   * Writes an accepted change to an existing file some other way (the editor's open copy, saved, so
   * the editor and its language servers see it at once); false: not handled, it is written here.
   */
  writeExisting?: (abs: string, content: string) => Promise<boolean>;
}

/** Runs the workspace tools for the model, confined by the path guard. */
export class WorkspaceTools {
  constructor(
    readonly guard: PathGuard,
    private readonly options: WorkspaceToolsOptions,
  ) {}

  static forFolders(folders: WorkspaceFolderPath[], excludeGlobs: string[], options: WorkspaceToolsOptions): WorkspaceTools {
    return new WorkspaceTools(new PathGuard(folders, excludeGlobs), options);
  }

  /** Runs a tool; failures come back as error text for the model (the spec's rule), never thrown. */
  async run(name: string, rawArgs: string | Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
    try {
      const args = parseArgs(rawArgs);
      switch (name) {
        case 'read_file':
          return ok(await this.readFile(str(args, 'path')!, int(args, 'start_line'), int(args, 'end_line')));
        case 'list_dir':
          return ok(await this.listDir(str(args, 'path', false) ?? '.'));
        case 'find_files':
          return ok(await this.findFiles(str(args, 'pattern')!, int(args, 'max_results')));
        case 'search_text':
          return ok(await this.searchText(str(args, 'query')!, args.is_regex === true, str(args, 'glob', false), signal));
        case 'create_file':
          return await this.createFile(str(args, 'path')!, str(args, 'content')!, signal);
        case 'replace_in_file':
          return await this.replaceInFile(str(args, 'path')!, str(args, 'old_string')!, str(args, 'new_string')!, signal);
        default:
          return { content: `Error: there is no tool named "${name}". Available: ${TOOL_DEFINITIONS.map((t) => t.name).join(', ')}.`, isError: true };
      }
    } catch (err) {
      const message = err instanceof ToolError ? err.message : `${(err as Error)?.message ?? String(err)}`;
      return { content: `Error: ${message}`, isError: true };
    }
  }

  async readFile(path: string, start?: number, end?: number): Promise<string> {
    const p = await this.guard.resolve(path);
    const s = await stat(p.abs);
    if (s.isDirectory()) throw new ToolError(`"${p.display}" is a folder; use list_dir.`);
    if (await isBinary(p.abs)) throw new ToolError(`"${p.display}" is a binary file; only text files can be read.`);
    const ranged = start !== undefined || end !== undefined;
    if (!ranged && s.size > LIMITS.readBytes) {
      throw new ToolError(
        `"${p.display}" is ${(s.size / 1024).toFixed(0)} KB, over the ${LIMITS.readBytes / 1024} KB limit. Read part of it with start_line and end_line, or use search_text.`,
      );
    }
    if (s.size > 20 * 1024 * 1024) throw new ToolError(`"${p.display}" is over 20 MB; use search_text to find the part you need.`);
    const lines = (await readFile(p.abs, 'utf8')).split(/\r?\n/);
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const from = Math.max(1, start ?? 1);
    const to = Math.min(lines.length, end ?? lines.length, from + LIMITS.readLines - 1);
    if (from > lines.length) throw new ToolError(`"${p.display}" has ${lines.length} lines; start_line ${from} is past the end.`);
    let body = '';
    for (let i = from; i <= to; i++) {
      const line = `${String(i).padStart(5)}  ${lines[i - 1]}\n`;
      if (body.length + line.length > LIMITS.readBytes) break;
      body += line;
    }
    const shownTo = from + body.split('\n').length - 2;
    const more = shownTo < lines.length ? ` (more: read from line ${shownTo + 1})` : '';
    return `${p.display} — lines ${from}-${shownTo} of ${lines.length}${more}\n${body}`;
  }

  async listDir(path: string): Promise<string> {
    const p = await this.guard.resolve(path || '.');
    const entries = await readdir(p.abs, { withFileTypes: true }).catch(() => {
      throw new ToolError(`"${p.display}" is not a folder; use read_file for files.`);
    });
    const shown: string[] = [];
    for (const e of entries.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || a.name.localeCompare(b.name))) {
      const rel = p.rel ? `${p.rel}/${e.name}` : e.name;
      if (await this.guard.isIgnored({ folder: p.folder, rel, abs: join(p.abs, e.name) }, e.isDirectory())) continue;
      shown.push(e.isDirectory() ? `${e.name}/` : e.name);
      if (shown.length >= LIMITS.listEntries) break;
    }
    const head = `${p.display === '.' ? 'workspace root' : p.display}: ${shown.length} entries${shown.length >= LIMITS.listEntries ? ' (limit reached)' : ''}`;
    return [head, ...shown].join('\n');
  }

  private walk() {
    return walkWorkspace(this.guard);
  }

  async findFiles(pattern: string, max?: number): Promise<string> {
    const limit = Math.min(max ?? LIMITS.findResults, LIMITS.findResults);
    const glob = pattern.replace(/\\/g, '/').replace(/^\.\//, '');
    const match = picomatch(glob.includes('/') ? glob : [glob, `**/${glob}`], { dot: true });
    const found: string[] = [];
    for await (const f of this.walk()) {
      if (match(f.rel) || match(this.guard.display(f.folder, f.rel))) {
        found.push(this.guard.display(f.folder, f.rel));
        if (found.length >= limit) break;
      }
    }
    if (found.length === 0) return `No file matches "${pattern}".`;
    return [
      `${found.length} file${found.length === 1 ? '' : 's'} match "${pattern}"${found.length >= limit ? ' (limit reached; narrow the pattern)' : ''}:`,
      ...found,
    ].join('\n');
  }

  async searchText(query: string, isRegex: boolean, glob: string | undefined, signal?: AbortSignal): Promise<string> {
    if (!query) throw new ToolError('The query is empty.');
    let regex: RegExp | undefined;
    if (isRegex) {
      try {
        regex = new RegExp(query);
      } catch (err) {
        throw new ToolError(`The regular expression is invalid: ${(err as Error).message}`);
      }
    }
    const matches = this.options.rgPath ? await this.ripgrep(query, isRegex, glob, signal) : await this.builtInSearch(query, regex, glob);
    if (matches.length === 0) return `No match for ${isRegex ? `/${query}/` : `"${query}"`}${glob ? ` in ${glob}` : ''}.`;
    let out = `${matches.length >= LIMITS.searchResults ? `First ${LIMITS.searchResults}` : matches.length} match${matches.length === 1 ? '' : 'es'}:\n`;
    for (const m of matches) {
      if (out.length + m.length > LIMITS.searchOutputBytes) {
        out += '(output limit reached; narrow the search)\n';
        break;
      }
      out += `${m}\n`;
    }
    return out;
  }

  /**
   * Where a name appears as a whole word (`a.greet(` yes, `greeting` no), in the files the chat may
   * read, as `{ display, abs, line, text }`: for the language tools, to name the places a language
   * server did not report. At most `limit` places.
   */
  async findWord(word: string, glob: string | undefined, limit: number, signal?: AbortSignal): Promise<WordMatch[]> {
    if (!/^[\p{L}\p{N}_$]+$/u.test(word)) return [];
    const lines = this.options.rgPath
      ? await this.ripgrep(word, false, glob, signal, true)
      : await this.builtInSearch(word, new RegExp(`(?<![\\p{L}\\p{N}_$])${word.replace(/\$/g, '\\$')}(?![\\p{L}\\p{N}_$])`, 'u'), glob);
    const out: WordMatch[] = [];
    for (const line of lines.slice(0, limit)) {
      const m = /^(.*?):(\d+): (.*)$/.exec(line);
      if (!m) continue;
      const p = await this.guard.resolve(m[1]).catch(() => undefined);
      if (p) out.push({ display: p.display, abs: p.abs, line: Number(m[2]), text: m[3] });
    }
    return out;
  }

  private async builtInSearch(query: string, regex: RegExp | undefined, glob: string | undefined): Promise<string[]> {
    const only = glob ? picomatch(glob.includes('/') ? glob : [glob, `**/${glob}`], { dot: true }) : undefined;
    const out: string[] = [];
    for await (const f of this.walk()) {
      if (only && !only(f.rel)) continue;
      const s = await stat(f.abs);
      if (s.size > LIMITS.fileForSearchBytes || (await isBinary(f.abs))) continue;
      const lines = (await readFile(f.abs, 'utf8')).split(/\r?\n/);
      for (let i = 0; i < lines.length; i++) {
        if (regex ? regex.test(lines[i]) : lines[i].includes(query)) {
          out.push(`${this.guard.display(f.folder, f.rel)}:${i + 1}: ${lines[i].trim().slice(0, 300)}`);
          if (out.length >= LIMITS.searchResults) return out;
        }
      }
    }
    return out;
  }

  private async ripgrep(query: string, isRegex: boolean, glob: string | undefined, signal?: AbortSignal, word = false): Promise<string[]> {
    const out: string[] = [];
    for (const folder of this.guard.folders) {
      const args = [
        '--line-number',
        '--no-heading',
        '--color',
        'never',
        '--max-filesize',
        '1M',
        '--max-columns',
        '300',
        '--max-count',
        '20',
        '--hidden',
        '--glob',
        '!.git',
      ];
      if (word) args.push('--word-regexp');
      if (glob) args.push('--glob', glob);
      // The query is bound to its option (`--regexp=…`): one that starts with `-` cannot become an
      // option of ripgrep's (`-L` to follow links out, `-u` to read ignored files, `--pre`).
      if (!isRegex) args.push('--fixed-strings');
      args.push('--no-config', '--no-follow', `--regexp=${query}`, '--', '.');
      const lines = await new Promise<string[]>((resolvePromise, reject) => {
        const child = spawn(this.options.rgPath!, args, { cwd: folder.path, signal });
        let buf = '';
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString('utf8');
          if (buf.length > LIMITS.searchOutputBytes * 4) child.kill();
        });
        child.on('error', reject);
        child.on('close', () => resolvePromise(buf.split('\n').filter(Boolean)));
      });
      // ripgrep honours .gitignore; each file it names passes the guard as a tool's path does
      // (links followed to their real target, secret files, exclude settings, nested rules).
      const allowed = new Map<string, Promise<boolean>>();
      const passes = (rel: string) => {
        let p = allowed.get(rel);
        if (!p) {
          p = this.guard.resolve(join(folder.path, rel)).then(
            () => true,
            () => false,
          );
          allowed.set(rel, p);
        }
        return p;
      };
      for (const line of lines) {
        const m = /^\.?\/?([^:]+):(\d+):(.*)$/.exec(line);
        if (!m) continue;
        if (!(await passes(m[1]))) continue;
        out.push(`${this.guard.display(folder, m[1])}:${m[2]}: ${m[3].trim()}`);
        if (out.length >= LIMITS.searchResults) return out;
      }
    }
    return out;
  }

  private async applyIfApproved(edit: ProposedEdit, signal: AbortSignal | undefined, done: string): Promise<ToolResult> {
    const decision = await this.options.approver.approve(edit, signal);
    if (!decision.accepted) {
      return {
        content: `The person rejected the ${edit.kind === 'create' ? 'new file' : 'edit to'} ${edit.path.display}; nothing was written.${decision.note ? ` Their note: ${decision.note}` : ''}`,
        isError: true,
      };
    }
    await this.stillThere(edit);
    await this.write(edit);
    return { content: done, isError: false };
  }

  /**
   * Edits of several existing files as one change (a rename): one decision for all. Every file is
   * checked again after the approval and before any is written, so none is written when one moved
   * or changed meanwhile.
   */
  async applyAllIfApproved(edits: readonly ProposedEdit[], title: string, signal: AbortSignal | undefined, done: string): Promise<ToolResult> {
    const approveAll = this.options.approver.approveAll?.bind(this.options.approver);
    if (!approveAll) throw new ToolError('Changes to several files at once cannot be approved here; nothing was written.');
    const decision = await approveAll(edits, title, signal);
    if (!decision.accepted)
      return {
        content: `The person rejected the change to ${edits.length} file${edits.length === 1 ? '' : 's'} (${title}); nothing was written.${decision.note ? ` Their note: ${decision.note}` : ''}`,
        isError: true,
      };
    for (const edit of edits) {
      await this.stillThere(edit);
      if ((await readFile(edit.path.abs, 'utf8').catch(() => undefined)) !== edit.before)
        throw new ToolError(`${edit.path.display} changed while waiting for approval; nothing was written. Propose the change again.`);
    }
    for (const edit of edits) await this.write(edit);
    return { content: done, isError: false };
  }

  /** The approval took time: resolve again, so a link planted or swapped meanwhile cannot redirect the write. */
  private async stillThere(edit: ProposedEdit): Promise<void> {
    const again = await this.guard.resolve(edit.path.display, { allowMissing: edit.kind === 'create' });
    if (again.abs !== edit.path.abs)
      throw new ToolError(`"${edit.path.display}" changed on disk while waiting for approval; nothing was written. Propose the change again.`);
  }

  /** Writes an accepted edit (never through a link at the last component: `stillThere` resolved it). */
  private async write(edit: ProposedEdit): Promise<void> {
    await mkdir(dirname(edit.path.abs), { recursive: true });
    try {
      if (edit.kind === 'edit' && (await this.options.writeExisting?.(edit.path.abs, edit.after))) {
        this.options.onWritten?.(edit);
        return;
      }
      await writeFile(edit.path.abs, edit.after, { encoding: 'utf8', flag: edit.kind === 'create' ? 'wx' : 'w' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST')
        throw new ToolError(`"${edit.path.display}" appeared while waiting for approval; nothing was written. Use replace_in_file.`);
      throw err;
    }
    this.options.onWritten?.(edit);
  }

  async createFile(path: string, content: string, signal?: AbortSignal): Promise<ToolResult> {
    const p = await this.guard.resolve(path, { allowMissing: true });
    if (
      await stat(p.abs).then(
        () => true,
        () => false,
      )
    )
      throw new ToolError(`"${p.display}" already exists; use replace_in_file to change it.`);
    const lines = content.split('\n').length;
    return this.applyIfApproved(
      { kind: 'create', path: p, before: '', after: content },
      signal,
      `Created ${p.display} (${lines} line${lines === 1 ? '' : 's'}).`,
    );
  }

  /** Proposes a whole new content for an existing file (the chat's *Apply to file*), through the same approval. */
  async proposeContent(path: string, after: string, signal?: AbortSignal): Promise<ToolResult> {
    const p = await this.guard.resolve(path);
    if (await isBinary(p.abs)) throw new ToolError(`"${p.display}" is a binary file.`);
    const before = await readFile(p.abs, 'utf8');
    if (before === after) return ok(`${p.display} already has this content; nothing to apply.`);
    return this.applyIfApproved({ kind: 'edit', path: p, before, after }, signal, `Applied the code to ${p.display}.`);
  }

  async replaceInFile(path: string, oldString: string, newString: string, signal?: AbortSignal): Promise<ToolResult> {
    const p = await this.guard.resolve(path);
    if (!oldString) throw new ToolError('old_string is empty; give the exact text to replace.');
    if (await isBinary(p.abs)) throw new ToolError(`"${p.display}" is a binary file.`);
    const before = await readFile(p.abs, 'utf8');
    const count = before.split(oldString).length - 1;
    if (count === 0) throw new ToolError(`old_string was not found in ${p.display}. Read the file again and copy the text exactly (whitespace matters).`);
    if (count > 1) throw new ToolError(`old_string occurs ${count} times in ${p.display}; include more surrounding lines so it matches once.`);
    const at = before.indexOf(oldString);
    const after = before.slice(0, at) + newString + before.slice(at + oldString.length);
    return this.applyIfApproved({ kind: 'edit', path: p, before, after }, signal, `Replaced 1 occurrence in ${p.display}.`);
  }
}

function ok(content: string): ToolResult {
  return { content, isError: false };
}
