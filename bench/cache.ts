/**
 * Prompt caching in the messages format: a 10-step tool-using conversation against the emulator
 * (its cache follows the spec's state table), and the share of input tokens read from the cache.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyUsage, newId, type AssistantTurn } from '../src/chat/conversation';
import { runTurn } from '../src/chat/engine';
import { systemPrompt } from '../src/chat/prompt';
import { GatewayClient } from '../src/gateway';
import { TOOL_DEFINITIONS, WorkspaceTools } from '../src/tools/workspaceTools';
import { GatewayEmulator } from '../test/emulator/server';

export interface CacheBenchResult {
  steps: number;
  requests: number;
  inputTokens: number;
  cacheRead: number;
  cacheWrite: number;
  share: number;
  savedDollarsAt3PerM: number;
}

export async function runCacheBench(): Promise<CacheBenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'mg-cache-bench-'));
  mkdirSync(join(root, 'src'));
  for (let i = 0; i < 10; i++) writeFileSync(join(root, 'src', `m${i}.ts`), Array.from({ length: 12 }, (_, j) => `export const v${i}_${j} = ${i * 100 + j};`).join('\n') + '\n');
  const emu = await GatewayEmulator.start();
  const client = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey });
  const tools = WorkspaceTools.forFolders([{ name: 'bench', path: root }], [], { approver: { approve: () => Promise.resolve({ accepted: true }) } });
  const turn: AssistantTurn = { id: newId('a'), role: 'assistant', model: 'claude-sonnet-emu', format: 'messages', steps: [], status: 'streaming', usage: emptyUsage(), at: Date.now() };
  let requests = 0;
  try {
    await runTurn({
      client,
      model: 'claude-sonnet-emu',
      format: 'messages',
      system: systemPrompt({ folders: ['bench'], toolsEnabled: true }),
      history: [{ id: newId('u'), role: 'user', text: `Use read_file on each of these, one per step: ${Array.from({ length: 10 }, (_, i) => `src/m${i}.ts`).join(', ')} #steps=10`, images: [], context: [], at: Date.now() }],
      turn,
      tools: { definitions: TOOL_DEFINITIONS, run: (n, a, s) => tools.run(n, a, s) },
      maxSteps: 20,
      cacheTtl: '5m',
      inputPricePerMTok: 3,
      onEvent: (e) => {
        if (e.type === 'usage') requests++;
      },
    });
  } finally {
    await client.close();
    await emu.close();
  }
  const u = turn.usage;
  return {
    steps: turn.steps.filter((s) => s.toolCalls.length > 0).length,
    requests,
    inputTokens: u.input,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    share: u.cacheRead / u.input,
    savedDollarsAt3PerM: turn.savedDollars ?? 0,
  };
}
