import { spawn } from 'node:child_process';

export interface ProcessRunOptions {
  cwd: string;
  /** The shell that reads the line (`/bin/sh` when absent; `cmd.exe` on Windows). */
  shell?: string;
  signal?: AbortSignal;
  timeoutMs: number;
  /** Each piece of output as it comes (stdout and stderr interleaved as the process wrote them). */
  onData(text: string): void;
  env?: NodeJS.ProcessEnv;
  /** The program and its arguments that run the line instead of the shell (the sandbox's). */
  argv?: readonly [string, ...string[]];
}

export interface ProcessRunResult {
  exitCode: number | undefined;
  ended?: 'stopped' | 'timeout';
}

/**
 * Runs one command line in a shell as its own process group, so Stop and the timeout end what it
 * started too (`npm test` runs node, node runs workers): SIGTERM to the group, SIGKILL 2 s later.
 */
export function runProcess(line: string, o: ProcessRunOptions): Promise<ProcessRunResult> {
  return new Promise((resolve) => {
    const windows = process.platform === 'win32';
    const child = o.argv
      ? // No stdin: bash takes a socket there for a remote shell's and reads ~/.bashrc (which in the read-only home fails noisily).
        spawn(o.argv[0], o.argv.slice(1), { cwd: o.cwd, env: o.env ?? process.env, detached: !windows, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] })
      : windows
        ? spawn(o.shell ?? 'cmd.exe', ['/d', '/s', '/c', line], { cwd: o.cwd, env: o.env ?? process.env, windowsHide: true })
        : spawn(o.shell ?? '/bin/sh', ['-c', line], { cwd: o.cwd, env: o.env ?? process.env, detached: true });
    let ended: ProcessRunResult['ended'];
    let killTimer: NodeJS.Timeout | undefined;
    const kill = (why: 'stopped' | 'timeout') => {
      if (ended || child.exitCode !== null) return;
      ended = why;
      const signalGroup = (sig: NodeJS.Signals) => {
        try {
          if (!windows && child.pid) process.kill(-child.pid, sig);
          else child.kill(sig);
        } catch {
          /* already gone */
        }
      };
      signalGroup('SIGTERM');
      killTimer = setTimeout(() => signalGroup('SIGKILL'), 2000);
    };
    const timer = setTimeout(() => kill('timeout'), o.timeoutMs);
    const onAbort = () => kill('stopped');
    if (o.signal?.aborted) onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (d: string) => o.onData(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => o.onData(d));
    const finish = (exitCode: number | undefined) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      o.signal?.removeEventListener('abort', onAbort);
      resolve({ exitCode, ...(ended ? { ended } : {}) });
    };
    child.on('error', (err) => {
      o.onData(`${err.message}\n`);
      finish(undefined);
    });
    child.on('close', (code) => finish(code ?? undefined));
  });
}
