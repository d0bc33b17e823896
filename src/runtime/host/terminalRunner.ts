import * as vscode from 'vscode';
import { CappedOutput, stripAnsi, type CommandOutcome } from '../core/output';
import { existsSync } from 'node:fs';
import { runProcess } from '../core/processRun';

export interface RunInTerminalOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  /** How long to wait for a new terminal's shell integration before running the line as a process. */
  shellIntegrationWaitMs?: number;
  /** Each piece of output as it comes (the benchmark times the first one). */
  onData?: (text: string) => void;
}

const NAME = 'Model Gateway agent';

/** A pseudoterminal that shows the runs of `mirrored`, one at a time. */
interface Mirror {
  title: string;
  terminal: vscode.Terminal;
  /** Text for the terminal (kept until VS Code opens it). */
  show: (text: string) => void;
  /** Ends the run it shows now (closing the terminal, Ctrl+C in it). */
  stop?: AbortController;
  /** Runs it has shown (a blank line goes between two). */
  runs: number;
  /** The person closed it (or we did): not taken again. */
  closed: boolean;
}

/**
 * Runs the agent's commands where the person sees them: in a VS Code terminal. With shell
 * integration (VS Code 1.93+, a supported shell) the line goes to a real shell and its output and
 * exit code come back from the integration; where it does not activate in time, the line runs as
 * a process whose output is written into a terminal of its own. Either way Stop and the timeout
 * end the command (Ctrl+C, then closing the terminal; the process group for the fallback).
 */
export class AgentTerminals implements vscode.Disposable {
  /** Our shell terminals that ran a command and are free again, by the folder they started in. */
  private readonly idle = new Map<vscode.Terminal, string>();
  private readonly disposables: vscode.Disposable[] = [];
  /** How the last command ran (the tests and the log say which path a VS Code took). */
  lastRun: { via: CommandOutcome['via']; ms: number; firstOutputMs?: number } | undefined;
  /** Our mirror terminals (the sandbox's runs, the fallback's) whose run has ended. */
  private readonly idleMirrors = new Set<Mirror>();
  /** Terminals whose shell integration never came: not waited for again in this session. */
  private integrationFailed = false;

  constructor() {
    this.disposables.push(
      vscode.window.onDidCloseTerminal((t) => {
        this.idle.delete(t);
        for (const m of this.idleMirrors) if (m.terminal === t) this.idleMirrors.delete(m);
      }),
    );
  }

  async run(line: string, cwd: string, o: RunInTerminalOptions): Promise<CommandOutcome> {
    const started = Date.now();
    const output = new CappedOutput();
    let firstOutputMs: number | undefined;
    const onData = (text: string) => {
      output.append(text);
      if (firstOutputMs === undefined && /\S/.test(text)) firstOutputMs = Date.now() - started;
      o.onData?.(text);
    };
    const hasApi = typeof vscode.window.onDidChangeTerminalShellIntegration === 'function';
    if (hasApi && !this.integrationFailed && !o.signal?.aborted) {
      const terminal = await this.shellTerminal(cwd, o.shellIntegrationWaitMs ?? 5000);
      if (terminal) {
        const r = await this.runWithIntegration(terminal, line, o, onData);
        this.lastRun = { via: 'shell-integration', ms: Date.now() - started, ...(firstOutputMs !== undefined ? { firstOutputMs } : {}) };
        return { ...r, output: output.text(), ...this.lastRun };
      }
    }
    const r = await this.runAsProcess(line, cwd, o, onData);
    this.lastRun = { via: 'process', ms: Date.now() - started, ...(firstOutputMs !== undefined ? { firstOutputMs } : {}) };
    return { ...r, output: output.text(), ...this.lastRun };
  }

  /** An idle terminal of ours in this folder with shell integration, or a new one once its integration is up. */
  private async shellTerminal(cwd: string, waitMs: number): Promise<vscode.Terminal | undefined> {
    for (const [t, folder] of this.idle) {
      if (folder === cwd && t.shellIntegration && t.exitStatus === undefined && (!t.shellIntegration.cwd || t.shellIntegration.cwd.fsPath === cwd)) {
        this.idle.delete(t);
        return t;
      }
    }
    const terminal = vscode.window.createTerminal({ name: NAME, cwd, iconPath: new vscode.ThemeIcon('hubot'), isTransient: true });
    terminal.show(true);
    if (terminal.shellIntegration) return terminal;
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        sub.dispose();
        resolve(false);
      }, waitMs);
      const sub = vscode.window.onDidChangeTerminalShellIntegration((e) => {
        if (e.terminal !== terminal) return;
        clearTimeout(timer);
        sub.dispose();
        resolve(true);
      });
    });
    if (ready) return terminal;
    this.integrationFailed = true;
    terminal.dispose();
    return undefined;
  }

  private runWithIntegration(
    terminal: vscode.Terminal,
    line: string,
    o: RunInTerminalOptions,
    onData: (text: string) => void,
  ): Promise<Omit<CommandOutcome, 'output' | 'via' | 'ms'>> {
    terminal.show(true);
    const integration = terminal.shellIntegration!;
    const execution = integration.executeCommand(line);
    return new Promise((resolve) => {
      let ended: 'stopped' | 'timeout' | undefined;
      let finished = false;
      const subs: vscode.Disposable[] = [];
      const finish = (exitCode: number | undefined, keep: boolean) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        clearTimeout(closeTimer);
        o.signal?.removeEventListener('abort', onAbort);
        for (const s of subs) s.dispose();
        if (keep && terminal.exitStatus === undefined) this.idle.set(terminal, integration.cwd?.fsPath ?? '');
        // Output read after the end event is still on its way: give the reader a moment, not
        // forever (a closed terminal's stream may never end).
        const settled = () => resolve({ exitCode, ...(ended ? { ended } : {}) });
        void Promise.race([reading, new Promise((r) => setTimeout(r, 500))]).then(settled);
      };
      const reading = (async () => {
        try {
          for await (const data of execution.read()) onData(stripAnsi(data));
        } catch {
          /* the terminal went away */
        }
      })();
      let closeTimer: NodeJS.Timeout | undefined;
      const interrupt = (why: 'stopped' | 'timeout') => {
        if (finished || ended) return;
        ended = why;
        terminal.sendText('\x03', false);
        // A command that ignores Ctrl+C goes with its terminal.
        closeTimer = setTimeout(() => {
          terminal.dispose();
          finish(undefined, false);
        }, 2000);
      };
      const timer = setTimeout(() => interrupt('timeout'), o.timeoutMs);
      const onAbort = () => interrupt('stopped');
      if (o.signal?.aborted) onAbort();
      o.signal?.addEventListener('abort', onAbort, { once: true });
      subs.push(
        vscode.window.onDidEndTerminalShellExecution((e) => {
          if (e.execution === execution) finish(e.exitCode, true);
        }),
        vscode.window.onDidCloseTerminal((t) => {
          if (t === terminal) finish(undefined, false);
        }),
      );
    });
  }

  /** The fallback: the line as a process, its output mirrored into a terminal the person can watch. */
  private runAsProcess(
    line: string,
    cwd: string,
    o: RunInTerminalOptions,
    onData: (text: string) => void,
  ): Promise<Omit<CommandOutcome, 'output' | 'via' | 'ms'>> {
    return this.mirrored(line, o, onData, (signal, data) =>
      runProcess(line, {
        cwd,
        signal,
        timeoutMs: o.timeoutMs,
        shell: process.platform === 'win32' || !existsSync('/bin/bash') ? undefined : '/bin/bash',
        onData: data,
      }),
    );
  }

  /**
   * Runs a line in a terminal that shows what it prints (the sandbox's runs come here: a shell
   * terminal would run it outside). Closing the terminal or Ctrl+C in it stops it. The terminal
   * stays for the person to read and the next run with this title takes it, as the shell
   * terminals are taken again: a day of commands leaves one terminal, not one per command.
   */
  async mirrored<R extends { exitCode: number | undefined; ended?: 'stopped' | 'timeout' }>(
    line: string,
    o: { signal?: AbortSignal; title?: string },
    onData: (text: string) => void,
    start: (signal: AbortSignal, onData: (text: string) => void) => Promise<R>,
  ): Promise<R> {
    const mirror = this.mirror(o.title ?? NAME);
    const stop = new AbortController();
    mirror.stop = stop;
    try {
      mirror.terminal.show(true);
      mirror.show(`${mirror.runs++ > 0 ? '\n' : ''}\x1b[1m$ ${line}\x1b[0m\n`);
      const signal = o.signal ? AbortSignal.any([o.signal, stop.signal]) : stop.signal;
      const r = await start(signal, (d) => {
        onData(d);
        mirror.show(d);
      });
      mirror.show(
        `\n\x1b[2m${r.ended === 'timeout' ? vscode.l10n.t('Timed out') : r.ended === 'stopped' ? vscode.l10n.t('Stopped') : vscode.l10n.t('Exit code {0}', r.exitCode ?? vscode.l10n.t('unknown'))}\x1b[0m\n`,
      );
      return r;
    } finally {
      mirror.stop = undefined;
      if (!mirror.closed && mirror.terminal.exitStatus === undefined) this.idleMirrors.add(mirror);
    }
  }

  /** An idle mirror terminal with this title, or a new one. */
  private mirror(title: string): Mirror {
    for (const m of this.idleMirrors) {
      if (m.title !== title) continue;
      this.idleMirrors.delete(m);
      if (!m.closed && m.terminal.exitStatus === undefined) return m;
    }
    const write = new vscode.EventEmitter<string>();
    let opened = false;
    const pending: string[] = [];
    const pty: vscode.Pseudoterminal = {
      onDidWrite: write.event,
      open: () => {
        opened = true;
        for (const p of pending.splice(0)) write.fire(p);
      },
      close: () => {
        m.closed = true;
        m.stop?.abort();
        this.idleMirrors.delete(m);
        write.dispose();
      },
      handleInput: (data) => {
        if (data === '\x03') m.stop?.abort();
      },
    };
    const m: Mirror = {
      title,
      terminal: vscode.window.createTerminal({ name: title, pty, iconPath: new vscode.ThemeIcon('hubot'), isTransient: true }),
      runs: 0,
      closed: false,
      show: (text) => {
        if (m.closed) return;
        const crlf = text.replace(/\r?\n/g, '\r\n');
        if (opened) write.fire(crlf);
        else pending.push(crlf);
      },
    };
    return m;
  }

  dispose(): void {
    for (const t of this.idle.keys()) t.dispose();
    this.idle.clear();
    for (const m of this.idleMirrors) m.terminal.dispose();
    this.idleMirrors.clear();
    for (const d of this.disposables) d.dispose();
  }
}
