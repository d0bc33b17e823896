/**
 * Prompt caching in each wire format against the emulator (messages: explicit cache_control
 * breakpoints; chat completions and responses: the automatic prefix cache) (its cache follows the spec's state
 * table): a 10-step tool conversation, and a 40-step session on a 32,000-token window where
 * budgeting (stubs, condensing) has to keep the prefix stable for the cache to pay.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { emptyUsage, newId, type AssistantTurn, type Condensation, type WireFormat } from '../src/common/conversation';
import { runTurn } from '../src/runtime/core/engine';
import { familyFactor } from '../src/runtime/core/tokens';
import { systemPrompt } from '../src/runtime/core/prompt';
import { GatewayClient } from '../src/gateway';
import { TOOL_DEFINITIONS, WorkspaceTools } from '../src/tools/workspaceTools';
import { GatewayEmulator } from '../test/emulator/server';
import { PriceBook } from '../src/common/prices';

export interface CacheBenchResult {
  steps: number;
  requests: number;
  inputTokens: number;
  cacheRead: number;
  cacheWrite: number;
  share: number;
  savedDollarsAt3PerM: number;
}

/** The model each wire format is measured with (the emulator's cache rules per format). */
export const CACHE_BENCH_MODELS: Record<WireFormat, string> = {
  messages: 'claude-sonnet-emu',
  chat: 'gpt-4o-mini',
  responses: 'gpt-5-codex-emu',
  gemini: 'gemini-3-pro-emu',
};

export async function runCacheBench(format: WireFormat = 'messages'): Promise<CacheBenchResult> {
  const model = CACHE_BENCH_MODELS[format];
  const root = mkdtempSync(join(tmpdir(), 'mg-cache-bench-'));
  mkdirSync(join(root, 'src'));
  for (let i = 0; i < 10; i++)
    writeFileSync(join(root, 'src', `m${i}.ts`), Array.from({ length: 12 }, (_, j) => `export const v${i}_${j} = ${i * 100 + j};`).join('\n') + '\n');
  const emu = await GatewayEmulator.start();
  const client = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey });
  const tools = WorkspaceTools.forFolders([{ name: 'bench', path: root }], [], { approver: { approve: () => Promise.resolve({ accepted: true }) } });
  const turn: AssistantTurn = { id: newId('a'), role: 'assistant', model, format, steps: [], status: 'streaming', usage: emptyUsage(), at: Date.now() };
  let requests = 0;
  try {
    await runTurn({
      client,
      model,
      format,
      system: systemPrompt({ folders: ['bench'], toolsEnabled: true }),
      history: [
        {
          id: newId('u'),
          role: 'user',
          text: `Use read_file on each of these, one per step: ${Array.from({ length: 10 }, (_, i) => `src/m${i}.ts`).join(', ')} #steps=10`,
          images: [],
          context: [],
          at: Date.now(),
        },
      ],
      turn,
      tools: { definitions: TOOL_DEFINITIONS, run: (n, a, s) => tools.run(n, a, s) },
      maxSteps: 20,
      cacheTtl: '5m',
      onEvent: (e) => {
        if (e.type === 'usage') requests++;
      },
    });
  } finally {
    await client.close();
    await emu.close();
    rmSync(root, { recursive: true, force: true });
  }
  const u = turn.usage;
  return {
    steps: turn.steps.filter((s) => s.toolCalls.length > 0).length,
    requests,
    inputTokens: u.input,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    share: u.cacheRead / u.input,
    savedDollarsAt3PerM: new PriceBook(undefined, { [turn.model]: { input: 3, output: 15 } }).cost(turn.model, u).savedDollars ?? 0,
  };
}

export interface LongSessionRun {
  model: string;
  window?: number;
  requests: number;
  toolSteps: number;
  error?: string;
  inputTokens: number;
  cacheRead: number;
  cacheWrite: number;
  share: number;
  /** Input cost at $3 per million tokens: cache reads at 0.1×, 5-minute cache writes at 1.25×. */
  inputDollarsAt3PerM: number;
  condensations: number;
  stubbed: number;
}

export interface LongSessionBenchResult {
  files: number;
  fileTokensApprox: number;
  budgeted: LongSessionRun;
  unbudgetedSameWindow: LongSessionRun;
  unbudgetedLargeWindow: LongSessionRun;
}

/** 40 of this repository's own source files (2–16 KB, in path order): what an agent really reads. */
function realFiles(root: string): string[] {
  const src = join(__dirname, '..', 'src');
  const all: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts') && statSync(p).size >= 2_000 && statSync(p).size <= 16_000) all.push(p);
    }
  };
  walk(src);
  const picked = all.slice(0, 40);
  for (const p of picked) {
    const to = join(root, relative(src, p));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(p, to);
  }
  return picked.map((p) => relative(src, p));
}

async function longRun(emu: GatewayEmulator, root: string, files: string[], model: string, window: number | undefined): Promise<LongSessionRun> {
  const key = emu.store.addKey({ userId: emu.store.addUser({ username: `long-${model}-${window ?? 0}` }).id, name: 'bench', unlimitedQuota: true });
  const client = new GatewayClient({ baseUrl: emu.url, apiKey: key.secret });
  const tools = WorkspaceTools.forFolders([{ name: 'bench', path: root }], [], { approver: { approve: () => Promise.resolve({ accepted: true }) } });
  const turn: AssistantTurn = {
    id: newId('a'),
    role: 'assistant',
    model,
    format: 'messages',
    steps: [],
    status: 'streaming',
    usage: emptyUsage(),
    at: Date.now(),
  };
  let requests = 0;
  const condensations: Condensation[] = [];
  try {
    await runTurn({
      client,
      model,
      format: 'messages',
      system: systemPrompt({ folders: ['bench'], toolsEnabled: true }),
      history: [
        {
          id: newId('u'),
          role: 'user',
          text: `Use read_file on each of these, one per step: ${files.join(', ')} #steps=40`,
          images: [],
          context: [],
          at: Date.now(),
        },
      ],
      turn,
      tools: { definitions: TOOL_DEFINITIONS, run: (n, a, sig) => tools.run(n, a, sig) },
      maxSteps: 45,
      cacheTtl: '5m',
      ...(window ? { contextWindow: window, tokenScale: familyFactor(model) } : {}),
      onEvent: (e) => {
        if (e.type === 'usage') requests++;
        if (e.type === 'condensed') condensations.push(e.condensation);
      },
    });
  } finally {
    await client.close();
  }
  const u = turn.usage;
  return {
    model,
    window,
    requests: requests + condensations.length,
    toolSteps: turn.steps.filter((s) => s.toolCalls.length > 0).length,
    error: turn.error ? `${turn.error.kind}: ${turn.error.message.slice(0, 100)}` : undefined,
    inputTokens: u.input,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    share: u.input ? u.cacheRead / u.input : 0,
    inputDollarsAt3PerM: ((u.input - u.cacheRead - u.cacheWrite + u.cacheRead * 0.1 + u.cacheWrite * 1.25) * 3) / 1e6,
    condensations: condensations.length,
    stubbed: turn.steps.flatMap((s) => s.toolCalls).filter((c) => c.stubbed).length,
  };
}

/**
 * The 40-step session: one question, 40 tool steps each reading one real source file. On the
 * 32,000-token model with budgeting; then without budgeting on the same model (the gateway's
 * refusal ends it) and on a 200,000-token model (what it costs when nothing is fitted).
 */
export async function runLongSessionBench(): Promise<LongSessionBenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'mg-long-bench-'));
  const emu = await GatewayEmulator.start();
  try {
    const files = realFiles(root);
    const bytes = files.reduce((n, f) => n + statSync(join(root, f)).size, 0);
    return {
      files: files.length,
      fileTokensApprox: Math.round(bytes / 4),
      budgeted: await longRun(emu, root, files, 'claude-small-context-emu', 32_000),
      unbudgetedSameWindow: await longRun(emu, root, files, 'claude-small-context-emu', undefined),
      unbudgetedLargeWindow: await longRun(emu, root, files, 'claude-sonnet-emu', undefined),
    };
  } finally {
    await emu.close();
    rmSync(root, { recursive: true, force: true });
  }
}
