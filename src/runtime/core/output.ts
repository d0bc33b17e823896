/**
 * What a command printed, as the model gets it: the first and the last part, with how much was
 * left out between them. The middle of a long build log is rarely what matters; its start (what
 * ran) and its end (the failure, the summary) are.
 */

/** Terminal control sequences (colours, cursor moves, titles, shell-integration marks). */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export class CappedOutput {
  private head = '';
  private tail = '';
  private dropped = 0;
  private total = 0;

  constructor(
    private readonly headChars = 8 * 1024,
    private readonly tailChars = 8 * 1024,
  ) {}

  append(chunk: string): void {
    this.total += chunk.length;
    if (this.head.length < this.headChars) {
      const take = chunk.slice(0, this.headChars - this.head.length);
      this.head += take;
      chunk = chunk.slice(take.length);
    }
    if (!chunk) return;
    this.tail += chunk;
    if (this.tail.length > this.tailChars) {
      const cut = this.tail.length - this.tailChars;
      this.dropped += cut;
      this.tail = this.tail.slice(cut);
    }
  }

  /** Characters seen in all. */
  get length(): number {
    return this.total;
  }

  /** The output with carriage-return redraws resolved, control sequences removed, and the cut marked. */
  text(): string {
    const clean = (s: string) => normaliseLines(stripAnsi(s));
    if (this.dropped === 0) return clean(this.head + this.tail);
    return `${clean(this.head)}\n… ${this.dropped} characters left out …\n${clean(this.tail)}`;
  }
}

/** `\r\n` → `\n`; a lone `\r` (a progress bar redrawing its line) keeps only what was drawn last. */
function normaliseLines(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => (line.includes('\r') ? (line.split('\r').filter(Boolean).at(-1) ?? '') : line))
    .join('\n');
}

/** How a finished command is reported to the model (and shown in the tool card). */
export interface CommandOutcome {
  exitCode: number | undefined;
  /** Why it ended early, if it did. */
  ended?: 'stopped' | 'timeout';
  output: string;
  /** Where it ran: a terminal with shell integration, or a process the extension started. */
  via: 'shell-integration' | 'process';
  ms: number;
}

export function describeOutcome(line: string, folder: string, o: CommandOutcome, timeoutSeconds: number): string {
  const status =
    o.ended === 'timeout'
      ? `stopped after the ${timeoutSeconds} s timeout (modelGateway.agent.commandTimeoutSeconds)`
      : o.ended === 'stopped'
        ? 'stopped by the person'
        : o.exitCode === undefined
          ? 'finished (exit code unknown)'
          : `exit code ${o.exitCode}`;
  const body = o.output.trim() ? o.output.replace(/\s+$/, '') : '(no output)';
  return `$ ${line}\n(in ${folder}; ${status}; ${(o.ms / 1000).toFixed(1)} s)\n${body}`;
}
