import { strict as assert } from 'node:assert';
import { researchRun, researchWorkspace, readTools, withSubagents } from '../../bench/subagents';
import { runTurn } from '../../src/runtime/core/engine';
import { systemPrompt } from '../../src/runtime/core/prompt';
import { parseSubagentArgs, RUN_SUBAGENT, Slots, subagentTools } from '../../src/runtime/core/subagents';
import { emptyUsage, newId, type AssistantTurn, type SubagentRun } from '../../src/common/conversation';
import { TOOL_DEFINITIONS } from '../../src/tools/workspaceTools';
import { clientFor, useEmulator } from './helpers';

describe('subagents (run_subagent)', function () {
  this.timeout(60_000);
  const ctx = useEmulator();
  let ws: ReturnType<typeof researchWorkspace>;
  before(() => (ws = researchWorkspace()));
  after(() => ws.cleanup());
  afterEach(() => ctx.emu.faults.clear());

  it('"in parallel, find X and Y": two subagents run at once, each with its own context; the parent gets their answers only', async () => {
    ctx.emu.inject({ path: '/v1/chat/completions', fault: { kind: 'slowFirstByte', ms: 300 }, times: Infinity });
    const { client } = clientFor(ctx.emu);
    const r = await researchRun({ client, root: ws.root, mode: 'subagents', rounds: 1, terms: ['parseLedger', 'auditTrail'] });
    assert.equal(r.turn.status, 'done', JSON.stringify(r.turn.error));
    const calls = r.turn.steps[0].toolCalls;
    assert.deepEqual(
      calls.map((c) => c.name),
      ['run_subagent', 'run_subagent'],
    );
    assert.equal(r.runs.length, 2);
    for (const [i, run] of r.runs.entries()) {
      assert.equal(run.status, 'done');
      assert.equal(calls[i].subagent, run, 'the run is kept on its call, for the card');
      // Its own requests: a search, then its answer; each 300 ms at least.
      assert.deepEqual(
        run.steps.map((s) => s.toolCalls.map((c) => c.name)),
        [['search_text'], []],
      );
      assert.ok(run.usage.input > 0 && run.usage.output > 0);
      assert.ok((run.ms ?? 0) >= 600, `${run.ms} ms`);
    }
    assert.match(calls[0].result ?? '', /parseLedger/);
    assert.match(calls[1].result ?? '', /auditTrail/);
    assert.doesNotMatch(calls[0].result ?? '', /auditTrail/, "one subagent's answer holds nothing of the other's task");
    // In parallel: the whole turn took less than the two subagents one after the other (plus the parent's two requests).
    const serial = r.runs.reduce((n, run) => n + (run.ms ?? 0), 0) + 600;
    assert.ok(r.ms < serial, `${r.ms.toFixed(0)} ms, ${serial} ms if serial`);
    // The parent's context: its question, the two tasks and the two answers — none of the search results themselves.
    const parentRequests = ctx.emu
      .requestsTo('/v1/chat/completions')
      .filter((q) => JSON.stringify((q.body as { messages: unknown[] }).messages).includes('In parallel, find'));
    assert.equal(parentRequests.length, 2);
    const lastParent = JSON.stringify((parentRequests[1].body as { messages: unknown[] }).messages);
    assert.doesNotMatch(lastParent, /use-2-11\.ts/, 'a file only the search results name (after the answers cut them) is not in the parent context');
    assert.ok(!lastParent.includes('"name":"search_text"'), 'no search_text call of the subagents is in the parent context');
    // Each subagent's request held its task alone (not the parent's question) and the read-only tools, without run_subagent.
    const childRequests = ctx.emu
      .requestsTo('/v1/chat/completions')
      .filter((q) => !JSON.stringify((q.body as { messages: unknown[] }).messages).includes('In parallel, find'));
    assert.equal(childRequests.length, 4);
    for (const q of childRequests) {
      const tools = ((q.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);
      assert.deepEqual(tools, ['read_file', 'list_dir', 'find_files', 'search_text']);
    }
  });

  it('the cap: with one slot, the second waits (shown queued) and starts when the first ends', async () => {
    ctx.emu.inject({ path: '/v1/chat/completions', fault: { kind: 'slowFirstByte', ms: 200 }, times: Infinity });
    const { client } = clientFor(ctx.emu);
    const seenQueued: string[] = [];
    const slots = new Slots(1);
    const turn: AssistantTurn = {
      id: newId('a'),
      role: 'assistant',
      model: 'gpt-4o-mini',
      format: 'chat',
      steps: [],
      status: 'streaming',
      usage: emptyUsage(),
      at: Date.now(),
    };
    const runs: SubagentRun[] = [];
    const tools = withSubagents({ read: readTools(ws.root), client, model: 'gpt-4o-mini', turn: () => turn, slots, runs });
    const timer = setInterval(() => {
      for (const run of runs) if (run.status === 'queued' && !seenQueued.includes(run.label)) seenQueued.push(run.label);
    }, 20);
    try {
      await runTurn({
        client,
        model: 'gpt-4o-mini',
        format: 'chat',
        system: systemPrompt({ folders: ['project'], toolsEnabled: true }),
        history: [{ id: newId('u'), role: 'user', text: 'In parallel, find "settleInvoice" and "parseLedger"', images: [], context: [], at: Date.now() }],
        turn,
        tools,
        maxSteps: 10,
        cacheTtl: '5m',
      });
    } finally {
      clearInterval(timer);
    }
    assert.equal(turn.status, 'done');
    assert.equal(runs.length, 2);
    assert.equal(seenQueued.length, 1, 'one waited for the slot');
    const [a, b] = runs;
    assert.ok(a.status === 'done' && b.status === 'done');
  });

  it('Stop stops them all: the parent and every running subagent end stopped, and nothing more is asked', async () => {
    ctx.emu.inject({ path: '/v1/chat/completions', fault: { kind: 'slowFirstByte', ms: 400 }, times: Infinity });
    const { client } = clientFor(ctx.emu);
    const abort = new AbortController();
    const stopping = setTimeout(() => abort.abort(), 1000);
    const r = await researchRun({ client, root: ws.root, mode: 'subagents', rounds: 4, signal: abort.signal });
    clearTimeout(stopping);
    const asked = ctx.emu.requestsTo('/v1/chat/completions').length;
    assert.equal(r.turn.status, 'stopped');
    assert.equal(r.runs.length, 3);
    for (const run of r.runs) assert.equal(run.status, 'stopped');
    await new Promise((res) => setTimeout(res, 600));
    assert.equal(ctx.emu.requestsTo('/v1/chat/completions').length, asked, 'no request after Stop');
  });

  it('a subagent gets the read-only tools only, never run_subagent, the plan or find_tools; its arguments are checked', () => {
    const offered = [
      ...TOOL_DEFINITIONS,
      RUN_SUBAGENT,
      { name: 'update_plan', kind: 'read' as const, description: '', parameters: { type: 'object' as const, properties: {}, required: [] } },
      { name: 'find_tools', kind: 'read' as const, description: '', parameters: { type: 'object' as const, properties: {}, required: [] } },
    ];
    assert.deepEqual(
      subagentTools(offered).map((d) => d.name),
      ['read_file', 'list_dir', 'find_files', 'search_text'],
    );
    assert.deepEqual(parseSubagentArgs('{"task":"  Find the callers of x  ","label":"callers"}'), { task: 'Find the callers of x', label: 'callers' });
    assert.match((parseSubagentArgs('{"label":"no task"}') as { error: string }).error, /task is required/);
    assert.match((parseSubagentArgs('not json') as { error: string }).error, /not JSON/);
  });

  it('Slots: a waiting place is given up when its signal aborts, and the next waits its turn', async () => {
    const slots = new Slots(1);
    let release!: () => void;
    const first = slots.run(() => new Promise<void>((r) => (release = r)));
    const abort = new AbortController();
    const second = slots.run(() => Promise.resolve('second ran'), abort.signal);
    const third = slots.run(() => Promise.resolve('third ran'));
    abort.abort();
    await assert.rejects(second, { name: 'AbortError' });
    release();
    await first;
    assert.equal(await third, 'third ran');
  });
});
