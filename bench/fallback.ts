/**
 * `npm run bench -- fallback`: a 10-step agent task (ten files to read, one a step, then the
 * answer) whose first model fails 30% of its requests on loopback, 429 without `Retry-After` and
 * 503 "no available channel" mixed, as new-api answers them (`test/emulator/busy.ts`). The chain
 * is `claude-sonnet-emu` (messages) → `gpt-4o-mini` (chat completions): each fallback crosses wire
 * formats with the tool rounds in the history.
 *
 * Measured: tasks finished; the time a fallback adds (the busy answer's round trip and the switch,
 * from the failed request's start to the next model's request); requests sent to the same model
 * twice for one step (the body of a step is the same whoever sends it, less the model: compared by
 * step); and the bill: the gateway's consume log per model against our count of each model's
 * tokens and its cost at the gateway's prices.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyUsage, newId, usageParts, type AssistantTurn, type UserTurn } from '../src/common/conversation';
import { PriceBook } from '../src/common/prices';
import { GatewayClient } from '../src/gateway';
import { runTurn, type EngineFallback } from '../src/runtime/core/engine';
import { systemPrompt } from '../src/runtime/core/prompt';
import { partsCost } from '../src/runtime/host/cost';
import { TOOL_DEFINITIONS, WorkspaceTools } from '../src/tools/workspaceTools';
import { GatewayEmulator } from '../test/emulator/server';

const FIRST = 'claude-sonnet-emu';
const NEXT = 'gpt-4o-mini';
const TASKS = 10;
const FILES = 10;

export interface FallbackBenchResult {
  tasks: number;
  finished: number;
  steps: number;
  fallbacks: number;
  /** The time each fallback added, ms: p50 and p95. */
  addedMs: { p50: number; p95: number; max: number };
  /** Requests that went to the same model twice for one step. */
  sentTwice: number;
  /** The gateway's bill against ours, dollars. */
  billed: number;
  counted: number;
  /** Calls the gateway billed: each is rounded to whole quota units ($0.000002), so the two may differ by that much a call. */
  calls: number;
  /** Per model: the gateway's tokens against ours. */
  byModel: Record<string, { billedTokens: number; countedTokens: number }>;
}

const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

export async function runFallbackBench(): Promise<FallbackBenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'mg-fallback-'));
  const emu = await GatewayEmulator.start();
  const client = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey });
  try {
    for (let i = 1; i <= FILES; i++) writeFileSync(join(root, `part${i}.ts`), `export const part${i} = ${i * 7}; // part ${i} of the ledger\n`);
    const workspace = WorkspaceTools.forFolders([{ name: 'ledger', path: root }], [], { approver: { approve: () => Promise.resolve({ accepted: false }) } });
    const tools = {
      definitions: TOOL_DEFINITIONS.filter((d) => d.name === 'read_file'),
      run: (n: string, a: string, s?: AbortSignal) => workspace.run(n, a, s),
    };
    const book = new PriceBook(await client.account.usage.pricing());
    // 30% of the first model's requests: half a 429 without Retry-After, half a 503 with no channel.
    emu.faults.add({ model: FIRST, chance: 0.15, times: null, fault: { kind: 'busy', reason: 'rate-limit' } } as never);
    emu.faults.add({ model: FIRST, chance: 0.15 / 0.85, times: null, fault: { kind: 'busy', reason: 'no-channel' } } as never);
    const system = systemPrompt({ folders: ['ledger'], toolsEnabled: true, date: new Date('2026-12-08') });
    // `#steps=N`: the emulator's model calls a tool in each of N rounds before it answers.
    const question = (t: number) => `Task ${t + 1}: read the file part1.ts, then the others one per step, and add up the numbers #steps=${FILES}`;
    const added: number[] = [];
    let finished = 0;
    let steps = 0;
    let fallbacks = 0;
    let counted = 0;
    const tokens: Record<string, number> = {};
    for (let t = 0; t < TASKS; t++) {
      const turn: AssistantTurn = {
        id: newId('a'),
        role: 'assistant',
        model: FIRST,
        format: 'messages',
        steps: [],
        status: 'streaming',
        usage: emptyUsage(),
        at: Date.now(),
      };
      const q: UserTurn = { id: newId('u'), role: 'user', text: question(t), images: [], context: [], at: Date.now() };
      const fallback: EngineFallback = {
        models: [NEXT],
        settings: { rateLimitWaitMs: 0, firstTokenMs: 0 },
        optionsFor: (model) => ({ model, format: model === FIRST ? 'messages' : 'chat', cacheTtl: '5m' }),
      };
      let stepStarted = 0;
      await runTurn({
        client,
        model: FIRST,
        format: 'messages',
        cacheTtl: '5m',
        system,
        history: [q],
        turn,
        tools,
        maxSteps: FILES + 4,
        fallback,
        onEvent: (e) => {
          if (e.type === 'step') stepStarted = performance.now();
          if (e.type === 'fallback') {
            fallbacks++;
            added.push(performance.now() - stepStarted);
          }
        },
      });
      const reads = turn.steps.filter((s) => s.toolCalls.some((c) => c.name === 'read_file' && c.status === 'done')).length;
      if (turn.status === 'done' && reads >= FILES && turn.steps.at(-1)!.text) finished++;
      steps += turn.steps.length;
      counted += partsCost(book, usageParts(turn), '5m').dollars ?? NaN;
      for (const [model, u] of usageParts(turn)) tokens[model] = (tokens[model] ?? 0) + u.input + u.output;
    }
    // The same step sent twice to one model: bodies compared with the model taken out, per model.
    const seen = new Map<string, Set<string>>();
    let sentTwice = 0;
    for (const r of emu.requests.filter((x) => x.path === '/v1/messages' || x.path === '/v1/chat/completions')) {
      const body = r.body as { model: string; messages: unknown[] };
      const key = JSON.stringify(body.messages);
      const forModel = seen.get(body.model) ?? new Set<string>();
      if (forModel.has(key)) sentTwice++;
      forModel.add(key);
      seen.set(body.model, forModel);
    }
    const logs = emu.store.logs.filter((l) => l.userId === GatewayEmulator.demoUserId);
    const byModel: FallbackBenchResult['byModel'] = {};
    for (const model of [FIRST, NEXT]) {
      const billed = logs.filter((l) => l.modelName === model);
      byModel[model] = {
        billedTokens: billed.reduce((n, l) => n + l.promptTokens + l.cacheRead + l.cacheWrite + l.completionTokens, 0),
        countedTokens: tokens[model] ?? 0,
      };
    }
    return {
      tasks: TASKS,
      finished,
      steps,
      fallbacks,
      addedMs: { p50: percentile(added, 50), p95: percentile(added, 95), max: Math.max(0, ...added) },
      sentTwice,
      billed: logs.reduce((n, l) => n + l.quota, 0) / 500_000,
      calls: logs.length,
      counted,
      byModel,
    };
  } finally {
    await client.close();
    await emu.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Equal, but for the gateway's rounding of each call to whole quota units; the tokens per model exactly. */
export function billMatches(r: FallbackBenchResult): boolean {
  const tokensEqual = Object.values(r.byModel).every((m) => m.billedTokens === m.countedTokens);
  return tokensEqual && Math.abs(r.billed - r.counted) <= r.calls / 500_000 + 1e-9;
}

export function fallbackBenchText(r: FallbackBenchResult): string[] {
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return [
    `\nFallback chain: ${r.tasks} agent tasks of ${FILES} reads, ${FIRST} (messages) failing 30% of its requests (429 without Retry-After, 503 no channel) → ${NEXT} (chat completions)`,
    `  tasks finished: ${r.finished} of ${r.tasks} (target all: ${met(r.finished === r.tasks)}); ${r.steps} steps, ${r.fallbacks} fallbacks`,
    `  time a fallback added: p50 ${r.addedMs.p50.toFixed(0)} ms, p95 ${r.addedMs.p95.toFixed(0)} ms, max ${r.addedMs.max.toFixed(0)} ms (target p95 ≤ 1,000 ms: ${met(r.addedMs.p95 <= 1000)})`,
    `  requests sent twice to one model for one step: ${r.sentTwice} (target 0: ${met(r.sentTwice === 0)})`,
    `  bill: the gateway billed $${r.billed.toFixed(6)} for ${r.calls} calls, we counted $${r.counted.toFixed(6)} at each answering model's price (target equal within its rounding of each call to a quota unit, $${((r.calls * 1) / 500_000).toFixed(6)}: ${met(billMatches(r))})`,
    ...Object.entries(r.byModel).map(([m, x]) => `    ${m}: billed ${x.billedTokens} tokens, counted ${x.countedTokens}`),
  ];
}
