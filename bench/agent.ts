// The agent's overheads: from the approval to a command's first output line, and an MCP round trip over stdio.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CappedOutput } from '../src/runtime/core/output';
import { runProcess } from '../src/runtime/core/processRun';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export interface AgentBenchResult {
  firstLineMs: number;
  firstLineRuns: number;
  mcpRoundTripMs: number;
  mcpCalls: number;
}

/**
 * Approval → first output line: the moment the person says Run to the first line the command
 * prints reaching the extension (bash started in the workspace, `echo`, read back through the
 * capped output), the process path the extension takes where shell integration is absent. The
 * terminal path adds VS Code's own terminal round trip, which the integration run reports.
 */
async function firstLine(runs: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-agent-'));
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const approvedAt = performance.now();
      let firstAt = 0;
      const out = new CappedOutput();
      await runProcess('echo "first line"; sleep 0.05; echo "second"', {
        cwd: dir,
        shell: '/bin/bash',
        timeoutMs: 10_000,
        onData: (d) => {
          out.append(d);
          if (!firstAt && out.text().includes('\n')) firstAt = performance.now();
        },
      });
      times.push(firstAt - approvedAt);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return median(times);
}

/** The everything server's echo over stdio through the official SDK, as the extension calls it: the median of `calls`. */
async function mcpRoundTrip(calls: number): Promise<number> {
  const server = join(__dirname, '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  const client = new Client({ name: 'model-gateway-bench', version: '0.1.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [server, 'stdio'], stderr: 'ignore' }));
  try {
    for (let i = 0; i < 5; i++) await client.callTool({ name: 'echo', arguments: { message: 'warm up' } });
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      const r = await client.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
      times.push(performance.now() - t);
      if (!JSON.stringify(r.content).includes(`call ${i}`)) throw new Error('the echo did not come back');
    }
    return median(times);
  } finally {
    await client.close();
  }
}

/**
 * The integration launcher running `bench/inhost/<name>.test.ts` instead of the suite (the newest
 * VS Code unless MODEL_GATEWAY_VSCODE says), with what it printed.
 */
export function runInHost(name: string, timeoutMs: number): { ok: boolean; out: string } {
  const root = join(__dirname, '..');
  const r = spawnSync(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(root, 'test', 'integration', 'launch.ts')], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, MG_INHOST_BENCH: name, MODEL_GATEWAY_VSCODE: process.env.MODEL_GATEWAY_VSCODE ?? 'newest' },
    timeout: timeoutMs,
    maxBuffer: 1 << 26,
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/**
 * An accepted edit to its problems reported, measured inside a real VS Code with tsserver: the
 * integration launcher runs `bench/inhost/` (code-server, the emulator, the chat with edits
 * auto-approved) and prints the metrics the in-host benchmark recorded.
 */
export function runProblemsBench(): { vscode: string; edits: number; medianMs: number; p95Ms: number; maxMs: number } | { error: string } {
  const { out } = runInHost('problems', 900_000);
  const metric = (name: string) => Number(new RegExp(`metric ${name}: ([\\d.]+)`).exec(out)?.[1] ?? NaN);
  const edits = metric('problemsEdits');
  if (!Number.isFinite(edits)) return { error: `the in-host run printed no figures:\n${out.slice(-1500)}` };
  return {
    vscode: /VS Code ([\d.]+)\)/.exec(out)?.[1] ?? '?',
    edits,
    medianMs: metric('problemsMedianMs'),
    p95Ms: metric('problemsP95Ms'),
    maxMs: metric('problemsMaxMs'),
  };
}

export interface ColdProblemsResult {
  vscode: string;
  runs: number;
  /** Windows where no tsserver ran before the question. */
  coldWindows: number;
  /** What the first report said, and what it said in the end (after a late report). */
  firstSaid: { error: number; unchecked: number; clean: number };
  finalSaid: { error: number; unchecked: number; clean: number };
  /** From the question to the error known (first report, or the late one), per run. */
  knownMs: number[];
  /** From the write to the first report. */
  writeToReportMs: number[];
  failures: string[];
}

/**
 * The first edit of a fresh window, `runs` times: each a new code-server (tsserver not started),
 * the edit written unasked (`bench/inhost/coldProblems.test.ts`).
 */
export function runColdProblemsBench(runs = 20): ColdProblemsResult {
  const out: ColdProblemsResult = {
    vscode: '?',
    runs: 0,
    coldWindows: 0,
    firstSaid: { error: 0, unchecked: 0, clean: 0 },
    finalSaid: { error: 0, unchecked: 0, clean: 0 },
    knownMs: [],
    writeToReportMs: [],
    failures: [],
  };
  const said = ['', 'error', 'unchecked', 'clean'] as const;
  for (let i = 0; i < runs; i++) {
    const { out: text } = runInHost('coldProblems', 300_000);
    const metric = (name: string) => Number(new RegExp(`metric ${name}: (-?[\\d.]+)`).exec(text)?.[1] ?? NaN);
    const first = said[metric('coldFirstSaid')];
    const final = said[metric('coldFinalSaid')];
    if (!first || !final) {
      out.failures.push(text.slice(-1200));
      continue;
    }
    out.vscode = /VS Code ([\d.]+)\)/.exec(text)?.[1] ?? out.vscode;
    out.runs++;
    if (metric('coldTsserversBefore') === 0) out.coldWindows++;
    out.firstSaid[first]++;
    out.finalSaid[final]++;
    if (Number.isFinite(metric('coldQuestionToKnownMs'))) out.knownMs.push(metric('coldQuestionToKnownMs'));
    out.writeToReportMs.push(metric('coldWriteToReportMs'));
    console.log(
      `  cold run ${i + 1}/${runs}: first ${first}, final ${final}, question → known ${metric('coldQuestionToKnownMs').toFixed(0)} ms, write → first report ${metric('coldWriteToReportMs').toFixed(0)} ms`,
    );
  }
  return out;
}

export async function runAgentBench(): Promise<AgentBenchResult> {
  const firstLineRuns = 20;
  const mcpCalls = 50;
  return { firstLineMs: await firstLine(firstLineRuns), firstLineRuns, mcpRoundTripMs: await mcpRoundTrip(mcpCalls), mcpCalls };
}
