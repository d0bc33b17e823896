/**
 * The sandbox's cost and what it saves (`npm run bench -- sandbox`):
 * - the time a command takes in and out of it (p50/p95 of `true`, `git status`, `node -e 0`);
 * - the questions a scripted 10-step task asks the person with and without it, through the
 *   runtime's one command flow (`runCommandCall`), and whether any command ran outside unasked.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AUTO_APPROVAL } from '../src/runtime/core/autoApproval';
import { runCommandCall, type CommandRunners, type SandboxState } from '../src/runtime/core/commandCall';
import { CappedOutput } from '../src/runtime/core/output';
import { runProcess } from '../src/runtime/core/processRun';
import { boundaryFor, probeSandbox, runSandboxed, runSandboxedCommand } from '../src/runtime/core/sandbox/sandboxedRun';
import { DEFAULT_DENY, type CommandPolicy } from '../src/tools/commandPolicy';
import { PathGuard } from '../src/tools/pathGuard';

export interface SandboxBench {
  runs: number;
  overhead: { command: string; outside: { p50: number; p95: number }; inside: { p50: number; p95: number } }[];
  task: { setup: string; questions: number; asked: string[]; ranOutside: number; ranOutsideUnasked: number; failed: string[] }[];
}

const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function project(): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'mg-sandbox-bench-'));
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'scripts'));
  writeFileSync(join(root, 'package.json'), `${JSON.stringify({ name: 'sample', private: true, scripts: { test: 'node test.js' } }, null, 2)}\n`);
  writeFileSync(join(root, 'test.js'), "require('assert').equal(require('./src/sum.js')(2, 3), 5); console.log('1 passing');\n");
  writeFileSync(join(root, 'src', 'sum.js'), '// TODO: check the types\nmodule.exports = (a, b) => a + b;\n');
  writeFileSync(join(root, 'scripts', 'check.js'), "console.log('checked', require('fs').readdirSync('src').length, 'files');\n");
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], { cwd: root });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'start');
  writeFileSync(join(root, 'src', 'sum.js'), '// TODO: check the types\nmodule.exports = (a, b) => Number(a) + Number(b);\n');
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A scripted agent's ten commands on a small project: reading, testing, building, one that needs the network. */
const TASK: { command: string; network?: string[] }[] = [
  { command: 'ls -la' },
  { command: 'cat package.json' },
  { command: 'npm test' },
  { command: 'git status' },
  { command: 'git diff' },
  { command: 'grep -rn TODO src' },
  { command: 'node scripts/check.js' },
  { command: 'mkdir -p out && echo built > out/result.txt' },
  { command: 'curl -fsS -o /dev/null https://registry.npmjs.org/left-pad', network: ['registry.npmjs.org'] },
  { command: 'rm out/result.txt' },
];

export async function runSandboxBench(runs = 20): Promise<SandboxBench> {
  const support = await probeSandbox();
  if (!support.available) throw new Error(`no sandbox here: ${support.reason}`);
  const p = project();
  try {
    const guard = new PathGuard([{ name: 'sample', path: p.root }], [], []);
    const folder = await guard.resolve('.');
    const boundary = await boundaryFor(guard, folder, { home: homedir(), profile: [] });
    const overhead: SandboxBench['overhead'] = [];
    for (const command of ['true', 'git status', 'node -e 0']) {
      const times = { outside: [] as number[], inside: [] as number[] };
      for (let i = 0; i < runs; i++) {
        let t = performance.now();
        await runProcess(command, { cwd: p.root, shell: SHELL, timeoutMs: 30_000, onData: () => undefined });
        times.outside.push(performance.now() - t);
        t = performance.now();
        await runSandboxed(command, { support, boundary, allowHosts: [], shell: SHELL, timeoutMs: 30_000, onData: () => undefined });
        times.inside.push(performance.now() - t);
      }
      const stat = (xs: number[]) => {
        const s = [...xs].sort((a, b) => a - b);
        return { p50: percentile(s, 50), p95: percentile(s, 95) };
      };
      overhead.push({ command, outside: stat(times.outside), inside: stat(times.inside) });
    }

    const task: SandboxBench['task'] = [];
    const setups: { setup: string; sandbox: SandboxState; policy: CommandPolicy }[] = [
      {
        setup: 'no sandbox, empty allow list (the default)',
        sandbox: { on: false, runUnasked: false, allowedHosts: [] },
        policy: { allow: [], deny: DEFAULT_DENY },
      },
      {
        setup: 'no sandbox, reads allowed (ls, cat, git status, git diff, grep)',
        sandbox: { on: false, runUnasked: false, allowedHosts: [] },
        policy: { allow: ['ls', 'cat', 'git status', 'git diff', 'grep'], deny: DEFAULT_DENY },
      },
      {
        setup: 'sandbox on (the default where it works)',
        sandbox: { on: true, runUnasked: true, allowedHosts: [] },
        policy: { allow: [], deny: DEFAULT_DENY },
      },
    ];
    for (const s of setups) {
      const asked: string[] = [];
      const failed: string[] = [];
      let ranOutside = 0;
      let ranOutsideUnasked = 0;
      let askedThis = false;
      const runners: CommandRunners = {
        timeoutSeconds: 60,
        where: () => 'the workspace root',
        ask: (q) => {
          asked.push(q.network?.length ? `${q.line} (network: ${q.network.join(', ')})` : q.line);
          askedThis = true;
          return Promise.resolve({ accepted: true });
        },
        outside: async (line, f) => {
          ranOutside++;
          if (!askedThis) ranOutsideUnasked++;
          const out = new CappedOutput();
          const started = Date.now();
          const r = await runProcess(line, { cwd: f.abs, shell: SHELL, timeoutMs: 60_000, onData: (t) => out.append(t) });
          return { exitCode: r.exitCode, output: out.text(), via: 'process', ms: Date.now() - started };
        },
        inSandbox: async (line, f, hosts) =>
          runSandboxedCommand(line, {
            support,
            boundary: await boundaryFor(guard, f, { home: homedir(), profile: [] }),
            allowHosts: hosts,
            shell: SHELL,
            timeoutMs: 60_000,
            onData: () => undefined,
          }),
      };
      for (const step of TASK) {
        askedThis = false;
        const r = await runCommandCall(JSON.stringify(step), guard, s.policy, { auto: DEFAULT_AUTO_APPROVAL, paused: false }, s.sandbox, runners);
        if (r.isError) failed.push(step.command);
      }
      task.push({ setup: s.setup, questions: asked.length, asked, ranOutside, ranOutsideUnasked, failed });
    }
    return { runs, overhead, task };
  } finally {
    p.cleanup();
  }
}

export function sandboxBenchText(b: SandboxBench): string[] {
  const ms = (x: number) => `${x.toFixed(1).padStart(6)} ms`;
  const lines = [`\nCommands in the sandbox (bubblewrap; ${b.runs} runs each, p50 / p95)`];
  for (const o of b.overhead)
    lines.push(
      `  ${o.command.padEnd(12)} outside ${ms(o.outside.p50)} / ${ms(o.outside.p95)}   inside ${ms(o.inside.p50)} / ${ms(o.inside.p95)}   overhead p50 ${ms(o.inside.p50 - o.outside.p50)}`,
    );
  lines.push('\nQuestions asked in a scripted 10-step task (every answer yes)');
  for (const t of b.task)
    lines.push(
      `  ${t.setup.padEnd(66)} ${String(t.questions).padStart(2)} questions; ran outside ${t.ranOutside} (${t.ranOutsideUnasked} unasked)${t.failed.length ? `; failed: ${t.failed.join(' | ')}` : ''}`,
    );
  const none = b.task[0];
  const sandboxed = b.task[b.task.length - 1];
  const fewer = none.questions ? 1 - sandboxed.questions / none.questions : 0;
  lines.push(
    `  => ${(fewer * 100).toFixed(0)}% fewer questions than the default without it (goal ≥ 80%: ${fewer >= 0.8 ? 'met' : 'NOT met'}); commands run outside the sandbox unasked with it on: ${sandboxed.ranOutsideUnasked} (goal 0: ${sandboxed.ranOutsideUnasked === 0 && sandboxed.ranOutside === 0 ? 'met' : 'NOT met'})`,
  );
  lines.push(`  asked with the sandbox: ${sandboxed.asked.join('; ') || 'nothing'}`);
  return lines;
}
