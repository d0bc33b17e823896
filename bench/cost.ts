/**
 * What a question costs, as a gateway bills it: fixed tasks through the real chat engine against
 * the emulator in each wire format, with the tools offered as the extension offers them now (a
 * core for the mode and `find_tools`) and as it did before (every tool with every request; and on
 * VS Code 1.139.1, also Copilot's 38 tools, read from the cached code-server's Copilot package).
 *
 * Per task: requests, input tokens billed (the emulator's count) and counted with o200k (the
 * OpenAI family's tokenizer, over what the request carried), cache reads, output tokens, and
 * dollars at the emulator's prices with the cache and without it; and the first request's input
 * split into system prompt, rules, tool definitions and history.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { runTurn } from '../src/runtime/core/engine';
import { modePrompt, toolsForMode, type BuiltInMode } from '../src/runtime/core/modes';
import { UPDATE_PLAN } from '../src/runtime/core/plan';
import { MEMORY_TOOL } from '../src/runtime/core/memory';
import { RUN_SUBAGENT } from '../src/runtime/core/subagents';
import { systemPrompt } from '../src/runtime/core/prompt';
import { tokensOf } from '../src/runtime/core/tokens';
import { offeredRunner, ToolOffer } from '../src/runtime/core/toolOffer';
import { emptyUsage, newId, type AssistantTurn, type WireFormat } from '../src/common/conversation';
import { PriceBook } from '../src/common/prices';
import { RUN_COMMAND_TOOL } from '../src/runtime/core/commandDefinition';
import { MEDIA_TOOL_DEFINITIONS } from '../src/assets/core/mediaDefinitions';
import { EDITOR_READ_TOOLS } from '../src/editor/core/definitions';
import { RENAME_SYMBOL } from '../src/editor/core/rename';
import { RUN_TASK } from '../src/editor/core/tasks';
import { GatewayClient } from '../src/gateway';
import { definitionOf, qualifiedName } from '../src/mcp/core/tools';
import { TOOL_DEFINITIONS, WorkspaceTools, type ToolDefinition, type ToolResult } from '../src/tools/workspaceTools';
import { GatewayEmulator } from '../test/emulator/server';
import { CACHE_BENCH_MODELS } from './cache';

export type Policy = 'now' | 'before' | 'before-1.139';

export interface TaskRun {
  task: string;
  format: WireFormat;
  policy: Policy;
  requests: number;
  toolCalls: number;
  status: string;
  /** Input tokens as the emulator billed them (every request of the task). */
  input: number;
  /** The same requests counted with o200k (messages and tools as sent). */
  inputO200k: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  dollars: number;
  dollarsNoCache: number;
  /** What the input alone cost, with the cache as billed and as if there were none. */
  inputDollars: number;
  inputDollarsNoCache: number;
  first: { billed: number; o200k: number; system: number; rules: number; tools: number; history: number; toolCount: number };
}

export interface CostBenchResult {
  runs: TaskRun[];
  repeats: number;
  /** Whether every repeat billed the same (the emulator is deterministic); o200k counts are medians. */
  stable: boolean;
  copilotTools: number;
  mcpTools: number;
}

const RULES = [
  'Project rules (AGENTS.md):',
  '- TypeScript strict mode; no `any`.',
  '- Tests live beside the code as *.test.ts and run with `npm test`.',
  '- Keep functions small; name things for what they do.',
].join('\n');

interface Task {
  name: string;
  mode: BuiltInMode;
  prompt: string;
  mcp?: boolean;
}

const TASKS: Task[] = [
  { name: 'plain question (Agent)', mode: 'agent', prompt: 'How do I reverse a string in TypeScript?' },
  { name: 'plain question (Ask)', mode: 'ask', prompt: 'How do I reverse a string in TypeScript?' },
  { name: 'one-file question', mode: 'agent', prompt: 'Read the file src/cart.ts and explain what it does.' },
  { name: 'fix the errors (3 problems)', mode: 'agent', prompt: 'Fix the errors in the project.' },
  { name: 'rename', mode: 'agent', prompt: 'Rename cartTotal to orderTotal' },
  {
    name: '10-step agent task',
    mode: 'agent',
    prompt: `Use read_file on each of these, one per step: ${Array.from({ length: 10 }, (_, i) => `src/m${i}.ts`).join(', ')} #steps=10`,
  },
  {
    name: '10-step task, 3 MCP servers',
    mode: 'agent',
    prompt: `Use read_file on each of these, one per step: ${Array.from({ length: 10 }, (_, i) => `src/m${i}.ts`).join(', ')} #steps=10`,
    mcp: true,
  },
];

/** Three misspelled names the "language server" of the bench reports, as TypeScript would. */
const TYPOS: [file: string, wrong: string, right: string][] = [
  ['src/cart.ts', 'totl', 'total'],
  ['src/price.ts', 'amont', 'amount'],
  ['src/tax.ts', 'rat', 'rate'],
];

function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'mg-cost-bench-'));
  mkdirSync(join(root, 'src'));
  for (let i = 0; i < 10; i++)
    writeFileSync(join(root, 'src', `m${i}.ts`), Array.from({ length: 12 }, (_, j) => `export const v${i}_${j} = ${i * 100 + j};`).join('\n') + '\n');
  writeFileSync(
    join(root, 'src', 'cart.ts'),
    "import { price } from './price';\n\nexport function cartTotal(items: number[]): number {\n  let total = 0;\n  for (const i of items) total += price(i);\n  return totl;\n}\n",
  );
  writeFileSync(join(root, 'src', 'price.ts'), 'export function price(amount: number): number {\n  return amont * 1.0;\n}\n');
  writeFileSync(join(root, 'src', 'tax.ts'), 'export function tax(value: number, rate = 0.2): number {\n  return value * rat;\n}\n');
  writeFileSync(join(root, 'README.md'), '# Shop\n\nA small cart library.\n');
  return root;
}

/** The bench's stand-in for a language server: the seeded misspellings still in the files, in TypeScript's words. */
function problems(root: string): string {
  const lines: string[] = [];
  for (const [file, wrong, right] of TYPOS) {
    const text = readFileSync(join(root, file), 'utf8').split('\n');
    text.forEach((l, i) => {
      if (new RegExp(`\\b${wrong}\\b`).test(l))
        lines.push(`${file}:${i + 1}: error: Cannot find name '${wrong}'. Did you mean '${right}'? (ts 2552)\n    ${l}`);
    });
  }
  return lines.length ? `${lines.length} problem${lines.length === 1 ? '' : 's'}:\n${lines.join('\n')}` : 'No errors in the workspace.';
}

/** The tools of three MCP servers: the reference "everything" and "filesystem" servers (listed live), and an issue tracker's. */
async function mcpTools(): Promise<ToolDefinition[]> {
  const defs: ToolDefinition[] = [];
  const taken = new Set<string>();
  const dir = mkdtempSync(join(tmpdir(), 'mg-cost-fs-'));
  try {
    for (const [server, pkg, args] of [
      ['everything', 'server-everything', ['stdio']],
      ['filesystem', 'server-filesystem', [dir]],
    ] as const) {
      const client = new Client({ name: 'model-gateway-bench', version: '0.1.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [join(__dirname, '..', 'node_modules', '@modelcontextprotocol', pkg, 'dist', 'index.js'), ...args],
          stderr: 'ignore',
        }),
      );
      try {
        for (const t of (await client.listTools()).tools) {
          const name = qualifiedName(server, t.name, taken);
          taken.add(name);
          defs.push(definitionOf(server, t, name));
        }
      } finally {
        await client.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // A third server shaped like an issue tracker's (names and schemas of the usual size), to reach 50.
  const verbs = ['list', 'get', 'create', 'update', 'close', 'search', 'comment_on', 'label', 'assign', 'lock', 'unlock', 'reopen'];
  const things = ['issue', 'pull_request'];
  for (const thing of things) {
    for (const verb of verbs) {
      if (defs.length >= 50) break;
      const name = qualifiedName('tracker', `${verb}_${thing}`, taken);
      taken.add(name);
      defs.push(
        definitionOf(
          'tracker',
          {
            name: `${verb}_${thing}`,
            description: `${verb.replace('_', ' ')} a ${thing.replace('_', ' ')} in a repository of the tracker. Returns the ${thing.replace('_', ' ')} as JSON with its number, title, state, author, labels and timestamps.`,
            inputSchema: {
              type: 'object',
              properties: {
                owner: { type: 'string', description: 'Repository owner (user or organisation)' },
                repo: { type: 'string', description: 'Repository name' },
                number: { type: 'integer', description: `The ${thing.replace('_', ' ')} number` },
                body: { type: 'string', description: 'Text in Markdown, where the action takes one' },
              },
              required: ['owner', 'repo'],
            },
          },
          name,
        ),
      );
    }
  }
  return defs;
}

/** Copilot's 38 tools as VS Code 1.139.1 registers them (from the cached code-server), as our chat offered them before. */
function copilotTools(): ToolDefinition[] {
  const pkg = join(
    homedir(),
    '.cache',
    'model-gateway',
    'code-server-4.139.1',
    'node_modules',
    'code-server',
    'lib',
    'vscode',
    'extensions',
    'copilot',
    'package.json',
  );
  if (!existsSync(pkg)) return [];
  const tools =
    (JSON.parse(readFileSync(pkg, 'utf8')) as { contributes?: { languageModelTools?: { name: string; modelDescription?: string; inputSchema?: unknown }[] } })
      .contributes?.languageModelTools ?? [];
  const taken = new Set<string>();
  return tools.map((t) => {
    const name = qualifiedName('vscode', t.name, taken);
    taken.add(name);
    return definitionOf('vscode', { name: t.name, description: t.modelDescription, inputSchema: t.inputSchema ?? { type: 'object', properties: {} } }, name);
  });
}

function o200k(body: unknown): number {
  const b = body as { messages?: unknown; input?: unknown; instructions?: unknown; system?: unknown; tools?: unknown };
  const parts = [b.system, b.instructions, b.messages, b.input, b.tools]
    .filter((p) => p !== undefined)
    .map((p) => (typeof p === 'string' ? p : JSON.stringify(p)));
  return parts.reduce((n, p) => n + encode(p).length, 0);
}

/** One task in an emulator of its own: no prompt cache warmed by another task or an earlier repeat. */
async function runTask(
  book: PriceBook,
  task: Task,
  format: WireFormat,
  policy: Policy,
  extra: { mcp: ToolDefinition[]; copilot: ToolDefinition[] },
): Promise<TaskRun> {
  const emu = await GatewayEmulator.start();
  try {
    return await runTaskIn(emu, book, task, format, policy, extra);
  } finally {
    await emu.close();
  }
}

async function runTaskIn(
  emu: GatewayEmulator,
  book: PriceBook,
  task: Task,
  format: WireFormat,
  policy: Policy,
  extra: { mcp: ToolDefinition[]; copilot: ToolDefinition[] },
): Promise<TaskRun> {
  const model = CACHE_BENCH_MODELS[format];
  const root = workspace();
  const key = emu.store.addKey({ userId: emu.store.addUser({ username: `cost-${newId('u')}` }).id, name: 'bench', unlimitedQuota: true });
  const client = new GatewayClient({ baseUrl: emu.url, apiKey: key.key });
  const files = WorkspaceTools.forFolders([{ name: 'shop', path: root }], [], {
    approver: { approve: () => Promise.resolve({ accepted: true }), approveAll: () => Promise.resolve({ accepted: true }) },
  });
  const ours = [
    ...TOOL_DEFINITIONS,
    RENAME_SYMBOL,
    UPDATE_PLAN,
    RUN_SUBAGENT,
    MEMORY_TOOL,
    RUN_COMMAND_TOOL,
    ...EDITOR_READ_TOOLS,
    RUN_TASK,
    ...MEDIA_TOOL_DEFINITIONS,
  ];
  const all = toolsForMode(task.mode, [...ours, ...(task.mcp ? extra.mcp : []), ...(policy === 'before-1.139' ? extra.copilot : [])]);
  const offer = new ToolOffer({ all, mode: task.mode, defer: policy === 'now' });
  offer.loadNamedIn(task.prompt);
  const run = async (name: string, args: string, signal?: AbortSignal): Promise<ToolResult> => {
    if (name === 'get_problems') return { content: problems(root), isError: false };
    if (name === 'rename_symbol')
      return { content: 'The person accepted the rename: 2 files changed (src/cart.ts, src/index.ts). No new problems.', isError: false };
    if (name === 'run_command') return { content: '$ npm test\n(in shop; exit code 0; 1.2 s)\n12 passing', isError: false };
    if (TOOL_DEFINITIONS.some((d) => d.name === name)) return files.run(name, args, signal);
    return { content: `${name} ran.`, isError: false };
  };
  const system = systemPrompt({
    folders: ['shop'],
    toolsEnabled: true,
    rules: RULES,
    mode: modePrompt(task.mode),
    findTools: policy === 'now',
    date: new Date('2026-11-28'),
  });
  const turn: AssistantTurn = { id: newId('a'), role: 'assistant', model, format, steps: [], status: 'streaming', usage: emptyUsage(), at: Date.now() };
  const firstTools = offer.offered();
  const sentBefore = emu.requests.length;
  let firstInput: number | undefined;
  try {
    await runTurn({
      client,
      model,
      format,
      system,
      history: [{ id: newId('u'), role: 'user', text: task.prompt, images: [], context: [], at: Date.now() }],
      turn,
      tools: offeredRunner(offer, (n, a, s) => run(n, a, s)),
      maxSteps: 25,
      cacheTtl: '5m',
      onEvent: (e) => {
        if (e.type === 'usage' && firstInput === undefined) firstInput = e.usage.input;
      },
    });
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
  const sent = emu.requests.slice(sentBefore).filter((r) => /\/v1\/(chat\/completions|messages|responses)$/.test(r.path));
  const u = turn.usage;
  const toolsText = JSON.stringify(firstTools);
  const systemOnly = system.slice(0, system.length - RULES.length);
  const first = {
    billed: firstInput ?? 0,
    o200k: sent.length ? o200k(sent[0].body) : 0,
    system: tokensOf(systemOnly),
    rules: tokensOf(RULES),
    tools: tokensOf(toolsText),
    history: tokensOf(task.prompt),
    toolCount: firstTools.length,
  };
  return {
    task: task.name,
    format,
    policy,
    requests: sent.length,
    toolCalls: turn.steps.reduce((n, s) => n + s.toolCalls.length, 0),
    status: turn.status,
    input: u.input,
    inputO200k: sent.reduce((n, r) => n + o200k(r.body), 0),
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    output: u.output,
    dollars: book.cost(model, u).dollars ?? NaN,
    dollarsNoCache: book.cost(model, { ...u, cacheRead: 0, cacheWrite: 0 }).dollars ?? NaN,
    inputDollars: book.cost(model, { ...u, output: 0 }).dollars ?? NaN,
    inputDollarsNoCache: book.cost(model, { ...u, output: 0, cacheRead: 0, cacheWrite: 0 }).dollars ?? NaN,
    first,
  };
}

export async function runCostBench(repeats = 3): Promise<CostBenchResult> {
  const extra = { mcp: await mcpTools(), copilot: copilotTools() };
  const formats: WireFormat[] = ['messages', 'chat', 'responses'];
  const policies: Policy[] = extra.copilot.length ? ['now', 'before', 'before-1.139'] : ['now', 'before'];
  const rounds: TaskRun[][] = [];
  const emu = await GatewayEmulator.start();
  let book: PriceBook;
  try {
    const pricing = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey });
    book = new PriceBook(await pricing.account.usage.pricing());
    await pricing.close();
  } finally {
    await emu.close();
  }
  for (let r = 0; r < repeats; r++) {
    const runs: TaskRun[] = [];
    for (const task of TASKS) for (const format of formats) for (const policy of policies) runs.push(await runTask(book, task, format, policy, extra));
    rounds.push(runs);
  }
  // The billed figures repeat exactly (the emulator is deterministic); the o200k counts vary a little
  // with the random call ids the requests carry, so each figure shown is the median of the repeats.
  const key = (runs: TaskRun[]) => JSON.stringify(runs.map((x) => [x.requests, x.toolCalls, x.input, x.cacheRead, x.output]));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const runs = rounds[0].map((first, i) => ({
    ...first,
    inputO200k: median(rounds.map((r) => r[i].inputO200k)),
    first: { ...first.first, o200k: median(rounds.map((r) => r[i].first.o200k)) },
  }));
  return { runs, repeats, stable: rounds.every((r) => key(r) === key(rounds[0])), copilotTools: extra.copilot.length, mcpTools: extra.mcp.length };
}

const POLICY_NAME: Record<Policy, string> = { now: 'now', before: 'before', 'before-1.139': 'before+Copilot' };

/** The table `npm run bench -- cost` prints, and the targets of issue 61 against it. */
export function costText(r: CostBenchResult): string[] {
  const lines: string[] = [];
  lines.push(
    `\nWhat a question costs: the chat engine against the emulator, prices from its /api/pricing; ${r.stable ? `billed figures identical in ${r.repeats} runs, o200k the median` : `billed figures VARIED across ${r.repeats} runs (first shown)`}.`,
    `  now: core tools + find_tools; before: every tool with every request; before+Copilot: also the ${r.copilotTools} tools Copilot registers in VS Code 1.139.1. MCP task: ${r.mcpTools} tools of 3 servers.`,
    `  input: billed by the emulator; o200k: the same requests counted with OpenAI's o200k tokenizer; first: the first request (system / rules / tools / history, estimated as the context meter does).`,
  );
  lines.push(
    `  ${'task'.padEnd(28)} ${'format'.padEnd(9)} ${'tools'.padEnd(14)} ${'req'.padStart(3)} ${'calls'.padStart(5)} ${'input'.padStart(7)} ${'o200k'.padStart(7)} ${'cached'.padStart(7)} ${'out'.padStart(5)} ${'$ cache'.padStart(8)} ${'$ none'.padStart(8)}  first request`,
  );
  for (const x of r.runs) {
    lines.push(
      `  ${x.task.padEnd(28)} ${x.format.padEnd(9)} ${POLICY_NAME[x.policy].padEnd(14)} ${String(x.requests).padStart(3)} ${String(x.toolCalls).padStart(5)} ${String(x.input).padStart(7)} ${String(x.inputO200k).padStart(7)} ${String(x.cacheRead).padStart(7)} ${String(x.output).padStart(5)} ${x.dollars.toFixed(4).padStart(8)} ${x.dollarsNoCache.toFixed(4).padStart(8)}  ` +
        `${x.first.billed} (${x.first.system} / ${x.first.rules} / ${x.first.tools} in ${x.first.toolCount} tools / ${x.first.history})${x.status === 'done' ? '' : ` [${x.status}]`}`,
    );
  }
  lines.push(...costTargets(r).map((t) => `  => ${t}`));
  return lines;
}

/** Issue 61's targets, each with the figure it is judged on. */
export function costTargets(r: CostBenchResult): string[] {
  const find = (task: string, policy: Policy, format: WireFormat = 'messages') =>
    r.runs.find((x) => x.task === task && x.policy === policy && x.format === format);
  const out: string[] = [];
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  for (const format of ['messages', 'chat', 'responses'] as WireFormat[]) {
    const agent = find('plain question (Agent)', 'now', format);
    const ask = find('plain question (Ask)', 'now', format);
    const mcp = find('10-step task, 3 MCP servers', 'now', format);
    if (agent && ask && mcp) {
      out.push(
        `${format}: plain question, first request ${agent.first.billed} tokens in Agent mode (target ≤ 3,000: ${verdict(agent.first.billed <= 3000)}), ${ask.first.billed} in Ask mode (≤ 2,000: ${verdict(ask.first.billed <= 2000)}); with 3 MCP servers ${mcp.first.billed} (≤ 4,000: ${verdict(mcp.first.billed <= 4000)})`,
      );
    }
    const now = find('10-step agent task', 'now', format);
    for (const before of [find('10-step agent task', 'before', format), find('10-step agent task', 'before-1.139', format)]) {
      if (!now || !before) continue;
      const noCache = 1 - now.inputDollarsNoCache / before.inputDollarsNoCache;
      const cache = 1 - now.inputDollars / before.inputDollars;
      out.push(
        `${format}: 10-step task vs ${POLICY_NAME[before.policy]}: input ${Math.round(noCache * 100)}% cheaper without a cache (target ≥ 50%: ${verdict(noCache >= 0.5)}), ${Math.round(cache * 100)}% with it (≥ 30%: ${verdict(cache >= 0.3)}); tool calls ${now.toolCalls} vs ${before.toolCalls}`,
      );
    }
  }
  return out;
}
