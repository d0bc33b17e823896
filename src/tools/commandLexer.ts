/**
 * A command line split into words, operators and redirections the way a POSIX shell would, as far
 * as the command policy (`commandPolicy.ts`) needs to see every command in it. Pure.
 */

export interface Word {
  kind: 'word';
  value: string;
  /** Holds an unquoted or double-quoted `$` expansion, or an unquoted glob character. */
  expands: boolean;
}
interface Operator {
  kind: 'op';
  value: string;
}
export interface Redirect {
  kind: 'redirect';
  op: string;
  target: string;
}
export type Token = Word | Operator | Redirect;

export interface Lexed {
  tokens: Token[];
  /** Texts run by command or process substitution, checked against the deny list too. */
  nested: string[];
  /** Why the line cannot run unasked even if every command is allowed. */
  concerns: string[];
}

/** What the lexer cannot read (its message names it: "an unclosed quote"). */
export class Unparsable extends Error {}

/** Control characters (tab and newline aside) and the blanks and marks a terminal may not show. */
function isUnusual(c: string): boolean {
  const code = c.charCodeAt(0);
  if (code === 9 || code === 10) return false;
  return (
    code < 32 ||
    (code >= 0x7f && code <= 0xa0) ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200f) ||
    (code >= 0x2028 && code <= 0x202f) ||
    code === 0x205f ||
    code === 0x2060 ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

const SEPARATORS = ['&&', '||', ';;', '|&', ';', '|', '&', '\n'];

/** Splits a line the way a POSIX shell would, as far as needed to see every command in it. */
export function lex(line: string): Lexed {
  return new Lexer(line).run();
}

/** One line's lexing: where it is in the line, and the word it is reading. */
class Lexer {
  private readonly tokens: Token[] = [];
  private readonly nested: string[] = [];
  private readonly concerns = new Set<string>();
  private i = 0;
  private word: { value: string; expands: boolean; started: boolean } = { value: '', expands: false, started: false };

  constructor(private readonly line: string) {}

  run(): Lexed {
    const line = this.line;
    while (this.i < line.length) {
      const c = line[this.i];
      // Characters a terminal may hide or a shell may read differently: not analysed.
      if (isUnusual(c)) throw new Unparsable('an unusual character');
      if (c === ' ' || c === '\t') {
        this.flush();
        this.i++;
        continue;
      }
      if (c === '#' && !this.word.started) {
        // A comment runs nothing in bash, but interactive zsh (macOS's terminal) runs it as words
        // unless interactivecomments is set: the line asks. Skip to the end of the line.
        this.concerns.add('a comment (#), which zsh runs as words');
        const nl = line.indexOf('\n', this.i);
        this.i = nl === -1 ? line.length : nl;
        continue;
      }
      if (c === '\\') {
        if (line[this.i + 1] === '\n') {
          this.i += 2;
          continue;
        }
        if (this.i + 1 >= line.length) throw new Unparsable('a trailing backslash');
        this.word.value += line[this.i + 1];
        this.word.started = true;
        this.i += 2;
        continue;
      }
      if (c === "'") {
        const end = line.indexOf("'", this.i + 1);
        if (end === -1) throw new Unparsable('an unclosed quote');
        this.word.value += line.slice(this.i + 1, end);
        this.word.started = true;
        this.i = end + 1;
        continue;
      }
      if (c === '"') {
        this.doubleQuoted();
        continue;
      }
      if (c === '$') {
        this.dollar();
        continue;
      }
      if (c === '`') {
        this.i++;
        this.nested.push(this.readBackticks());
        this.concerns.add('command substitution');
        this.word.expands = true;
        this.word.started = true;
        continue;
      }
      if ((c === '<' || c === '>') && line[this.i + 1] === '(') {
        this.i += 2;
        this.nested.push(this.readParens());
        this.concerns.add('process substitution');
        this.word.value += `${c}(…)`;
        this.word.expands = true;
        this.word.started = true;
        continue;
      }
      if (this.redirection()) continue;
      if (c === '(' || c === ')') {
        this.flush();
        this.tokens.push({ kind: 'op', value: c });
        this.i++;
        continue;
      }
      const sep = SEPARATORS.find((s) => line.startsWith(s, this.i));
      if (sep) {
        if (sep === ';;') throw new Unparsable('";;" outside a case statement');
        this.flush();
        this.tokens.push({ kind: 'op', value: sep === '\n' ? ';' : sep });
        this.i += sep.length;
        continue;
      }
      // A pattern (`*.ts`) or a brace expansion (`{a,b}`): what it names is known only when it runs.
      if ('*?[{'.includes(c)) this.word.expands = true;
      this.word.value += c;
      this.word.started = true;
      this.i++;
    }
    this.flush();
    return { tokens: this.tokens, nested: this.nested, concerns: [...this.concerns] };
  }

  private flush(): void {
    if (this.word.started) this.tokens.push({ kind: 'word', value: this.word.value, expands: this.word.expands });
    this.word = { value: '', expands: false, started: false };
  }

  /** Reads `$(…)` from just after `$(`, with nesting and quotes; returns the inner text. */
  private readParens(): string {
    const line = this.line;
    let depth = 1;
    const start = this.i;
    while (this.i < line.length) {
      const c = line[this.i];
      if (c === '\\') this.i += 2;
      else if (c === "'") {
        const end = line.indexOf("'", this.i + 1);
        if (end === -1) throw new Unparsable('an unclosed quote');
        this.i = end + 1;
      } else if (c === '"') {
        this.i++;
        while (this.i < line.length && line[this.i] !== '"') this.i += line[this.i] === '\\' ? 2 : 1;
        if (this.i >= line.length) throw new Unparsable('an unclosed quote');
        this.i++;
      } else if (c === '(') {
        depth++;
        this.i++;
      } else if (c === ')') {
        depth--;
        this.i++;
        if (depth === 0) return line.slice(start, this.i - 1);
      } else this.i++;
    }
    throw new Unparsable('an unclosed "$("');
  }

  private readBackticks(): string {
    const end = this.line.indexOf('`', this.i);
    if (end === -1) throw new Unparsable('an unclosed backtick');
    const inner = this.line.slice(this.i, end);
    this.i = end + 1;
    return inner;
  }

  /** After a `$`: substitution, or a variable expansion. */
  private dollar(): void {
    const next = this.line[this.i + 1];
    if (next === '(') {
      this.i += 2;
      const inner = this.readParens();
      this.nested.push(inner.startsWith('(') ? inner.slice(1, -1) : inner);
      this.concerns.add('command substitution');
      this.word.value += '$(…)';
      this.word.expands = true;
      this.word.started = true;
      return;
    }
    this.word.value += '$';
    this.word.started = true;
    this.i++;
    if (next === '{' || next === "'" || next === '"' || (next !== undefined && /[A-Za-z0-9_@*#?$!-]/.test(next))) this.word.expands = true;
  }

  /** A double-quoted part of a word, from its opening quote: escapes, expansions and substitutions in it. */
  private doubleQuoted(): void {
    const line = this.line;
    this.word.started = true;
    this.i++;
    for (;;) {
      if (this.i >= line.length) throw new Unparsable('an unclosed quote');
      const d = line[this.i];
      if (d === '"') {
        this.i++;
        break;
      }
      if (d === '\\' && this.i + 1 < line.length && '"\\$`\n'.includes(line[this.i + 1])) {
        this.word.value += line[this.i + 1];
        this.i += 2;
      } else if (d === '$') this.dollar();
      else if (d === '`') {
        this.i++;
        this.nested.push(this.readBackticks());
        this.concerns.add('command substitution');
        this.word.expands = true;
      } else {
        this.word.value += d;
        this.i++;
      }
    }
  }

  /** A redirection here (an optional descriptor number, then the operator, then its target) read as a token; false when there is none. */
  private redirection(): boolean {
    const line = this.line;
    const redirect = /^(\d*|&)(>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)/.exec(line.slice(this.i));
    if (!(redirect && (redirect[1] === '' || !this.word.started))) return false;
    this.flush();
    this.i += redirect[0].length;
    while (line[this.i] === ' ' || line[this.i] === '\t') this.i++;
    const op = redirect[2];
    // The target is one word: lex it alone by reading up to the next blank or operator.
    const targetStart = this.i;
    while (this.i < line.length && !/[\s;&|<>()]/.test(line[this.i])) {
      if (line[this.i] === "'" || line[this.i] === '"') {
        const end = line.indexOf(line[this.i], this.i + 1);
        if (end === -1) throw new Unparsable('an unclosed quote');
        this.i = end + 1;
      } else this.i++;
    }
    const target = line.slice(targetStart, this.i).replace(/^['"]|['"]$/g, '');
    if (op.startsWith('<<') && op !== '<<<') throw new Unparsable('a here-document');
    this.tokens.push({ kind: 'redirect', op, target });
    return true;
  }
}
