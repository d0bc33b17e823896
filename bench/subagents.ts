/**
 * Subagents against one context, on a scripted research task: three terms to trace through a
 * workspace, each in `rounds` dependent searches. In one context the agent works through them one
 * after another, every result staying in its context; with subagents the parent hands each term to
 * one, they run in parallel, and only their answers come back. The emulator answers with a model
 * server's latency: a fixed wait before the first byte plus the prompt's reading (prefill), which
 * grows with the context (`modelLatency`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTurn, type ToolRunner } from '../src/runtime/core/engine';
import { systemPrompt } from '../src/runtime/core/prompt';
import { newSubagentRun, parseSubagentArgs, RUN_SUBAGENT, runSubagent, Slots, subagentPrompt, subagentTools } from '../src/runtime/core/subagents';
import { emptyUsage, newId, type AssistantTurn, type SubagentRun } from '../src/common/conversation';
import { GatewayClient } from '../src/gateway';
import { TOOL_DEFINITIONS, WorkspaceTools } from '../src/tools/workspaceTools';
import { GatewayEmulator } from '../test/emulator/server';

export const RESEARCH_TERMS = ['parseLedger', 'settleInvoice', 'auditTrail'] as const;

/** A workspace where each term is defined once and used in a dozen files (search results of some size). */
export function researchWorkspace(terms: readonly string[] = RESEARCH_TERMS): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'mg-subagents-'));
  mkdirSync(join(root, 'src'), { recursive: true });
  terms.forEach((term, t) => {
    writeFileSync(
      join(root, 'src', `${term}.ts`),
      `/** ${term}: the one definition. */\nexport function ${term}(input: string): string {\n  return input.trim();\n}\n`,
    );
    for (let f = 0; f < 12; f++) {
      const lines = [`import { ${term} } from './${term}';`, ''];
      for (let l = 0; l < 6; l++) lines.push(`export const use${t}_${f}_${l} = ${term}('record ${f}-${l} of the ${term} flow, kept for the monthly report');`);
      writeFileSync(join(root, 'src', `use-${t}-${f}.ts`), `${lines.join('\n')}\n`);
    }
  });
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** The workspace's read-only tools (writes are refused: nothing here asks for one). */
export function readTools(root: string): ToolRunner {
  const tools = WorkspaceTools.forFolders([{ name: 'project', path: root }], [], { approver: { approve: () => Promise.resolve({ accepted: false }) } });
  return { definitions: TOOL_DEFINITIONS.filter((d) => d.kind === 'read'), run: (name, args, signal) => tools.run(name, args, signal) };
}

/** The parent's tools with `run_subagent`, run as the chat runs it: each subagent on the call's card, at most `slots.max` at once. */
export function withSubagents(o: {
  read: ToolRunner;
  client: GatewayClient;
  model: string;
  turn: () => AssistantTurn;
  slots: Slots;
  runs: SubagentRun[];
  maxSteps?: number;
}): ToolRunner {
  return {
    definitions: [...o.read.definitions, RUN_SUBAGENT],
    needsApproval: () => false,
    run: async (name, args, signal, callId) => {
      if (name !== RUN_SUBAGENT.name) return o.read.run(name, args, signal);
      const p = parseSubagentArgs(args);
      if ('error' in p) return { content: `Error: ${p.error}.`, isError: true };
      const record = newSubagentRun(p.label, p.task, o.model);
      const call = o
        .turn()
        .steps.flatMap((s) => s.toolCalls)
        .find((c) => c.id === callId);
      if (call) call.subagent = record;
      o.runs.push(record);
      return o.slots.run(
        () =>
          runSubagent({
            client: o.client,
            modelOptions: { model: o.model, format: 'chat', contextWindow: 128_000, cacheTtl: '5m' },
            system: subagentPrompt({ folders: ['project'] }),
            task: p.task,
            tools: { definitions: subagentTools(o.read.definitions), run: (name, args, signal) => o.read.run(name, args, signal) },
            record,
            maxSteps: o.maxSteps ?? 25,
            signal,
            onUpdate: () => undefined,
          }),
        signal,
      );
    },
  };
}

export interface ResearchResult {
  ms: number;
  turn: AssistantTurn;
  runs: SubagentRun[];
  /** The prompt of the parent's last request: the context it ends with. */
  finalPromptTokens: number;
  /** Everything the parent's requests read, and the subagents' (tokens). */
  parentInputTokens: number;
  subagentInputTokens: number;
}

/** One run of the research task, in one context or with subagents (`parallel` at once). */
export async function researchRun(o: {
  client: GatewayClient;
  root: string;
  mode: 'one-context' | 'subagents';
  rounds: number;
  parallel?: number;
  terms?: readonly string[];
  signal?: AbortSignal;
}): Promise<ResearchResult> {
  const terms = o.terms ?? RESEARCH_TERMS;
  const quoted = terms.map((t) => `"${t}"`);
  const list = `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
  const text =
    o.mode === 'subagents'
      ? `In parallel, find ${list} #substeps=${o.rounds}`
      : `Search the text ${list} in the workspace, one after another, and report where each appears #steps=${o.rounds * terms.length}`;
  const model = 'gpt-4o-mini';
  const turn: AssistantTurn = { id: newId('a'), role: 'assistant', model, format: 'chat', steps: [], status: 'streaming', usage: emptyUsage(), at: Date.now() };
  const runs: SubagentRun[] = [];
  const read = readTools(o.root);
  const tools = o.mode === 'subagents' ? withSubagents({ read, client: o.client, model, turn: () => turn, slots: new Slots(o.parallel ?? 3), runs }) : read;
  let last = 0;
  let finalPromptTokens = 0;
  const started = performance.now();
  await runTurn({
    client: o.client,
    model,
    format: 'chat',
    system: systemPrompt({ folders: ['project'], toolsEnabled: true, date: new Date('2026-11-29T00:00:00Z') }),
    history: [{ id: newId('u'), role: 'user', text, images: [], context: [], at: Date.now() }],
    turn,
    tools,
    maxSteps: 40,
    cacheTtl: '5m',
    contextWindow: 128_000,
    signal: o.signal,
    onEvent: (e) => {
      if (e.type !== 'usage') return;
      finalPromptTokens = e.usage.input - last;
      last = e.usage.input;
    },
  });
  const ms = performance.now() - started;
  return { ms, turn, runs, finalPromptTokens, parentInputTokens: turn.usage.input, subagentInputTokens: runs.reduce((n, r) => n + r.usage.input, 0) };
}

export interface SubagentBenchResult {
  rounds: number;
  latency: { firstByteMs: number; msPer1kPromptTokens: number };
  oneContext: { ms: number; finalPromptTokens: number; inputTokens: number; requests: number };
  subagents: {
    ms: number;
    finalPromptTokens: number;
    parentInputTokens: number;
    subagentInputTokens: number;
    parentRequests: number;
    subagentRequests: number[];
  };
  timeRatio: number;
  contextRatio: number;
}

/** The bench: the same task both ways against the emulator with a model server's latency. */
export async function runSubagentBench(rounds = 3, latency = { firstByteMs: 400, msPer1kPromptTokens: 120 }): Promise<SubagentBenchResult> {
  const emu = await GatewayEmulator.start();
  const ws = researchWorkspace();
  try {
    emu.inject({ fault: { kind: 'modelLatency', ...latency }, times: Infinity });
    const client = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey });
    const one = await researchRun({ client, root: ws.root, mode: 'one-context', rounds });
    const sub = await researchRun({ client, root: ws.root, mode: 'subagents', rounds });
    for (const r of [one, sub])
      if (r.turn.status !== 'done') throw new Error(`the ${r === one ? 'one-context' : 'subagent'} run ended ${r.turn.status}: ${r.turn.error?.message ?? ''}`);
    return {
      rounds,
      latency,
      oneContext: { ms: one.ms, finalPromptTokens: one.finalPromptTokens, inputTokens: one.parentInputTokens, requests: one.turn.steps.length },
      subagents: {
        ms: sub.ms,
        finalPromptTokens: sub.finalPromptTokens,
        parentInputTokens: sub.parentInputTokens,
        subagentInputTokens: sub.subagentInputTokens,
        parentRequests: sub.turn.steps.length,
        subagentRequests: sub.runs.map((r) => r.steps.length),
      },
      timeRatio: sub.ms / one.ms,
      contextRatio: sub.finalPromptTokens / one.finalPromptTokens,
    };
  } finally {
    ws.cleanup();
    await emu.close();
  }
}

export function subagentBenchText(r: SubagentBenchResult): string[] {
  const k = (n: number) => n.toLocaleString('en-US');
  return [
    `\nSubagents: 3 terms traced in ${r.rounds} searches each; the emulator waits ${r.latency.firstByteMs} ms + ${r.latency.msPer1kPromptTokens} ms per 1k prompt tokens before answering`,
    `  one context: ${(r.oneContext.ms / 1000).toFixed(1)} s, ${r.oneContext.requests} requests, ${k(r.oneContext.inputTokens)} input tokens; its last request's prompt ${k(r.oneContext.finalPromptTokens)} tokens`,
    `  3 subagents in parallel: ${(r.subagents.ms / 1000).toFixed(1)} s; parent ${r.subagents.parentRequests} requests, ${k(r.subagents.parentInputTokens)} input tokens; subagents ${r.subagents.subagentRequests.join(' + ')} requests, ${k(r.subagents.subagentInputTokens)} input tokens; the parent's last prompt ${k(r.subagents.finalPromptTokens)} tokens`,
    `  time ${r.timeRatio.toFixed(2)}× the one-context run (target ≤ 0.5: ${r.timeRatio <= 0.5 ? 'met' : 'NOT met'}); the parent's context ${(r.contextRatio * 100).toFixed(0)}% of it (target ≤ 30%: ${r.contextRatio <= 0.3 ? 'met' : 'NOT met'})`,
  ];
}
