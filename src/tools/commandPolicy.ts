/**
 * Which command lines the agent may run without asking. Pure: no `vscode`, no process.
 *
 * A line runs unasked only when every command in it is allowed, and the parser understood all of
 * it. What it does not follow (command and process substitution, subshells, `eval`/`exec`/`sh -c`,
 * variables in command position, environment assignments, redirections to files, here-documents,
 * shell keywords, unusual characters) makes the line `ask`; a denied command anywhere in it,
 * substitutions and `sh -c` strings included, makes it `refuse`. `deny` wins over `allow`. An
 * argument that names a place outside the workspace folders (or, without them, any absolute path,
 * `~`, `..` above the folder it runs in) or a secret file makes an allowed line `ask`.
 */

import { posix } from 'node:path';
import { lex, Unparsable, type Lexed, type Redirect, type Token, type Word } from './commandLexer';
import { isSecretPath } from './pathGuard';

export type CommandDecision = 'run' | 'ask' | 'refuse';

/** Where a line runs: its folder and the workspace folders (absolute paths), and what counts as a secret file. */
export interface CommandPlace {
  cwd: string;
  roots: readonly string[];
  /** The file tools' secret list (a path relative or absolute); the built-in list when absent. */
  isSecret?: (path: string) => boolean;
}

export interface CommandPolicy {
  /** Command prefixes matched on whole words: `npm test` allows `npm test -- --grep x`, not `npm testx`. */
  allow: string[];
  /** Command prefixes never run, even when asked (the first word is matched by its base name too: `/usr/bin/sudo`). */
  deny: string[];
}

/** Refused unless the person takes them off the list: privilege, destruction, publishing, remote code. */
export const DEFAULT_DENY = [
  'sudo',
  'su',
  'doas',
  'rm -rf',
  'rm -fr',
  'rm -r -f',
  'rm -f -r',
  'git push',
  'mkfs',
  'dd',
  'shutdown',
  'reboot',
  'halt',
  'poweroff',
  'chmod -R 777',
  'chown -R',
  'npm publish',
  'curl | sh',
];

/** Downloaders whose output piped into a shell is remote code (`curl … | sh` and the like). */
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'iwr', 'Invoke-WebRequest']);
const INTERPRETERS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'fish',
  'csh',
  'tcsh',
  'python',
  'python3',
  'node',
  'perl',
  'ruby',
  'php',
  'pwsh',
  'powershell',
  'iex',
]);
/** Commands that run another command: never run unasked; what they run is checked against the deny list. */
const WRAPPERS = new Set([
  'eval',
  'exec',
  'command',
  'builtin',
  'env',
  'nohup',
  'time',
  'nice',
  'ionice',
  'timeout',
  'xargs',
  'watch',
  'strace',
  'source',
  '.',
  'parallel',
  'script',
  'stdbuf',
  'setsid',
  'chroot',
  'busybox',
]);
/** Options with which `find` runs commands or deletes. */
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprintf', '-fls']);
const SHELL_KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'for',
  'while',
  'until',
  'do',
  'done',
  'case',
  'esac',
  'select',
  'function',
  'coproc',
  '!',
  '[[',
  ']]',
  '{',
  '}',
  'in',
]);

interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** Leading `NAME=value` words. */
  assignments: string[];
}

/** Pipelines of simple commands, split at lists and pipes; parentheses make the line `ask`. */
function commandsOf(tokens: Token[]): { pipelines: SimpleCommand[][]; subshell: boolean } {
  const pipelines: SimpleCommand[][] = [[]];
  let current: SimpleCommand = { words: [], redirects: [], assignments: [] };
  let subshell = false;
  const end = (pipe: boolean) => {
    if (current.words.length || current.redirects.length || current.assignments.length) pipelines.at(-1)!.push(current);
    current = { words: [], redirects: [], assignments: [] };
    if (!pipe && pipelines.at(-1)!.length) pipelines.push([]);
  };
  for (const t of tokens) {
    if (t.kind === 'op') {
      if (t.value === '(' || t.value === ')') {
        subshell = true;
        end(false);
      } else end(t.value === '|' || t.value === '|&');
    } else if (t.kind === 'redirect') current.redirects.push(t);
    else if (current.words.length === 0 && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(t.value)) current.assignments.push(t.value);
    else current.words.push(t);
  }
  end(false);
  return { pipelines: pipelines.filter((p) => p.length), subshell };
}

const prefixWords = (entry: string) => entry.trim().split(/\s+/).filter(Boolean);
const baseName = (w: string) => w.replace(/^.*[\\/]/, '');

function startsWith(words: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length > 0 && prefix.length <= words.length && prefix.every((p, k) => words[k] === p);
}

/** The words of what a command finally runs: wrappers and their options skipped (`nohup env X=1 timeout 5 sudo rm` → `sudo rm`). */
function effectiveWords(words: readonly string[]): string[] {
  let rest = [...words];
  for (let guard = 0; guard < 10 && rest.length; guard++) {
    const head = baseName(rest[0]);
    if (!WRAPPERS.has(head) || head === 'eval' || head === 'source' || head === '.') break;
    rest = rest.slice(1);
    while (rest.length && (rest[0].startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0]) || /^\d+[smhd]?$/.test(rest[0]))) rest = rest.slice(1);
  }
  return rest;
}

/** The deny entry a command matches, if any (its first word also by base name). */
function deniedBy(words: readonly string[], deny: readonly string[]): string | undefined {
  for (const candidate of [words, effectiveWords(words)]) {
    if (!candidate.length) continue;
    const normalised = [baseName(candidate[0]), ...candidate.slice(1)];
    for (const entry of deny) {
      const p = prefixWords(entry);
      if (p.includes('|')) continue;
      if (startsWith(candidate, p) || startsWith(normalised, p)) return entry;
    }
  }
  return undefined;
}

/** Strings a command hands to a shell: `sh -c '…'`, `eval …`, `find -exec …`, `xargs cmd`. */
function innerScripts(words: readonly string[]): string[] {
  const out: string[] = [];
  const head = baseName(words[0] ?? '');
  if (INTERPRETERS.has(head)) {
    const c = words.findIndex((w, k) => k > 0 && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w));
    if (c !== -1 && words[c + 1] !== undefined) out.push(words[c + 1]);
  }
  if (head === 'eval') out.push(words.slice(1).join(' '));
  const effective = effectiveWords(words);
  if (effective.length && effective.length < words.length) out.push(effective.map(quoteForShell).join(' '));
  const exec = words.findIndex((w) => w === '-exec' || w === '-execdir' || w === '-ok');
  if (exec !== -1)
    out.push(
      words
        .slice(exec + 1)
        .filter((w) => w !== ';' && w !== '{}' && w !== '+')
        .map(quoteForShell)
        .join(' '),
    );
  return out;
}

function quoteForShell(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** Every denied command the line would run, looking into substitutions and shell strings too. */
function findDenied(line: string, deny: readonly string[], depth = 0): string | undefined {
  if (depth > 5) return undefined;
  let lexed: Lexed;
  try {
    lexed = lex(line);
  } catch {
    // Not understood: look for a denied prefix at any word boundary after a command separator.
    const words = line.split(/[\s;&|()`$<>{}]+/).filter(Boolean);
    for (let k = 0; k < words.length; k++) {
      const hit = deniedBy(words.slice(k), deny);
      if (hit && (k === 0 || /[;&|(`{]\s*$/.test(line.slice(0, line.indexOf(words[k]))))) return hit;
    }
    return undefined;
  }
  for (const inner of lexed.nested) {
    const hit = findDenied(inner, deny, depth + 1);
    if (hit) return hit;
  }
  const { pipelines } = commandsOf(lexed.tokens);
  const pipeToShell = deny.some((d) => prefixWords(d).includes('|'));
  // `bash <(curl …)`, `sh -c "$(wget …)"`: a download handed to an interpreter another way.
  if (pipeToShell) {
    const downloads = lexed.nested.some((inner) => DOWNLOADERS.has(baseName(effectiveWords(inner.trim().split(/\s+/))[0] ?? '')));
    const interprets = pipelines.flat().some((cmd) => INTERPRETERS.has(baseName(effectiveWords(cmd.words.map((w) => w.value))[0] ?? '')));
    if (downloads && interprets) return deny.find((d) => prefixWords(d).includes('|'))!;
  }
  for (const pipeline of pipelines) {
    for (const [k, cmd] of pipeline.entries()) {
      const words = cmd.words.map((w) => w.value);
      const hit = deniedBy(words, deny);
      if (hit) return hit;
      for (const script of innerScripts(words)) {
        const inner = findDenied(script, deny, depth + 1);
        if (inner) return inner;
      }
      if (pipeToShell && k > 0) {
        const runs = effectiveWords(words);
        const into = baseName(runs[0] ?? '');
        const fed = pipeline.slice(0, k).some((p) => DOWNLOADERS.has(baseName(effectiveWords(p.words.map((w) => w.value))[0] ?? '')));
        if (fed && INTERPRETERS.has(into)) return deny.find((d) => prefixWords(d).includes('|'))!;
      }
    }
  }
  return undefined;
}

/** Why one simple command cannot run unasked, or undefined when an allow entry covers it. */
function notAllowed(cmd: SimpleCommand, allow: readonly string[][]): string | undefined {
  if (cmd.assignments.length) return `it sets ${cmd.assignments.map((a) => a.split('=')[0]).join(', ')} for the command`;
  for (const r of cmd.redirects) {
    const toNull = r.target === '/dev/null';
    const duplicate = (r.op === '>&' || r.op === '<&') && /^(\d+|-)$/.test(r.target);
    if (!toNull && !duplicate) return `it redirects ${r.op.includes('<') ? 'input from' : 'output to'} ${r.target || 'a file'}`;
  }
  if (!cmd.words.length) return 'it has no command';
  const first = cmd.words[0];
  if (first.expands) return 'its command name comes from a variable or a pattern';
  if (SHELL_KEYWORDS.has(first.value)) return `it uses the shell keyword "${first.value}"`;
  const head = baseName(first.value);
  if (WRAPPERS.has(head)) return `"${first.value}" runs another command`;
  if (INTERPRETERS.has(head) && cmd.words.some((w, k) => k > 0 && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.value)))
    return `"${first.value} -c" runs a script given as text`;
  if (head === 'find' && cmd.words.some((w) => FIND_ACTIONS.has(w.value))) return '"find" with an action runs commands or deletes files';
  const words = cmd.words.map((w) => w.value);
  if (allow.some((p) => startsWith(words, p))) return undefined;
  return `"${words.slice(0, 3).join(' ')}" is not in the allowed commands`;
}

const toPosix = (p: string) => p.replace(/\\/g, '/');
const isAbsolutePath = (p: string) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
const within = (p: string, root: string) => {
  const rel = posix.relative(toPosix(root), p);
  return rel === '' || (!rel.startsWith('..') && !posix.isAbsolute(rel));
};

/** The paths an argument may name: itself, or the value of `--name=value` / `NAME=value`. */
function argumentPaths(arg: string): string[] {
  const eq = /^(?:--?[\w.-]+|[A-Za-z_][\w]*)=(.*)$/s.exec(arg);
  if (eq) return [eq[1]];
  return arg.startsWith('-') ? [] : [arg];
}

/** Why an argument's path is out of bounds: outside the workspace, the home folder, a variable's path, a secret file. */
function placeProblem(p: string, where: CommandPlace | undefined): string | undefined {
  if (!p) return undefined;
  if (/^~/.test(p)) return 'names a place in the home folder (~)';
  if (/^\$\{?\w+\}?[\\/]/.test(p)) return 'names a path through a variable';
  if ((where?.isSecret ?? isSecretPath)(toPosix(p))) return 'names a file that may hold secrets';
  const path = toPosix(p);
  if (isAbsolutePath(p)) {
    const normal = posix.normalize(path.replace(/^[A-Za-z]:/, ''));
    return where && where.roots.some((r) => within(normal, toPosix(r).replace(/^[A-Za-z]:/, ''))) ? undefined : 'names a path outside the workspace';
  }
  if (!path.split('/').includes('..')) return undefined;
  if (!where) return posix.normalize(path).startsWith('..') ? 'climbs out of the folder it runs in (..)' : undefined;
  const resolved = posix.resolve(toPosix(where.cwd), path);
  return where.roots.some((r) => within(resolved, toPosix(r))) ? undefined : 'climbs out of the workspace (..)';
}

/**
 * Options of package managers that choose what runs or where config comes from: after an allowed
 * `npm test` they would run any code (`--node-options=--import=data:…`, `--script-shell=./x.sh`).
 */
const RUNNER_OPTIONS = /^--?(node-options|script-shell|userconfig|globalconfig|prefix|shell|require|import|loader|experimental-loader|config|c)(=|$)/;
const PACKAGE_RUNNERS = new Set(['npm', 'npx', 'pnpm', 'yarn', 'bun', 'node', 'deno']);

/** An argument of an allowed command that reaches outside the workspace or at a secret file: the line asks. */
function outsidePlace(cmd: SimpleCommand, where: CommandPlace | undefined): string | undefined {
  const runner = PACKAGE_RUNNERS.has(baseName(cmd.words[0]?.value ?? ''));
  const end = cmd.words.findIndex((w) => w.value === '--');
  for (const [k, w] of cmd.words.slice(1).entries()) {
    // A pattern or a variable in a path names what only the shell knows: `.e*` is `.env`, `${HOME%x}/…` is home.
    if (w.expands && /[*?[{]/.test(w.value)) return `the argument "${w.value}" is a pattern the shell expands (it may name any file)`;
    if (w.expands && w.value.includes('$') && /[\\/]/.test(w.value)) return `the argument "${w.value}" names a path through a variable`;
    if (runner && (end === -1 || k + 1 < end) && RUNNER_OPTIONS.test(w.value))
      return `the option "${w.value}" chooses what ${cmd.words[0].value} runs or the config it reads`;
    for (const p of argumentPaths(w.value)) {
      const why = placeProblem(p, where);
      if (why) return `the argument "${w.value}" ${why}`;
    }
  }
  return undefined;
}

/**
 * `run` when every command of the line is allowed and nothing in it escapes the analysis; `refuse`
 * when a denied command appears anywhere (deny wins); otherwise `ask`, with the reason.
 */
export function decideCommand(line: string, policy: CommandPolicy, where?: CommandPlace): { decision: CommandDecision; reason: string } {
  const denied = findDenied(line, policy.deny);
  if (denied) return { decision: 'refuse', reason: `"${denied}" is on the list of commands never run` };
  let lexed: Lexed;
  try {
    lexed = lex(line);
  } catch (err) {
    return { decision: 'ask', reason: `the line has ${err instanceof Unparsable ? err.message : 'something the policy cannot read'}` };
  }
  if (lexed.concerns.length) return { decision: 'ask', reason: `the line uses ${lexed.concerns.join(' and ')}` };
  const { pipelines, subshell } = commandsOf(lexed.tokens);
  if (subshell) return { decision: 'ask', reason: 'the line uses a subshell or a function' };
  const commands = pipelines.flat();
  if (!commands.length) return { decision: 'ask', reason: 'the line has no command' };
  const allow = policy.allow.map(prefixWords).filter((p) => p.length > 0);
  for (const cmd of commands) {
    const why = notAllowed(cmd, allow) ?? outsidePlace(cmd, where);
    if (why) return { decision: 'ask', reason: why };
  }
  return { decision: 'run', reason: commands.length > 1 ? 'every command in the line is allowed' : 'the command is allowed' };
}
