import { strict as assert } from 'node:assert';
import { FromUsageView } from '../../src/common/usageProtocol';
import { emptyUsage } from '../../src/common/conversation';
import { fromWebviewSchema, VIEW_TEXT_LIMIT, viewTurn } from '../../src/common/chatProtocol';
import { ToWebviewSchema } from '../../src/common/chatViewSchemas';

/** Both directions of the chat protocol are checked on arrival. */
describe('chat protocol schemas', () => {
  const turn = { id: 'a1', role: 'assistant', model: 'm', format: 'chat', steps: [{ text: 'hi', toolCalls: [] }], status: 'done', usage: emptyUsage(), at: 1 };
  const state = {
    models: ['m'],
    model: 'm',
    formatChoice: 'auto',
    format: 'chat',
    mode: 'agent',
    modes: [{ id: 'agent', name: 'Agent', description: 'everything' }],
    toolsEnabled: true,
    configured: true,
    busy: false,
    conversations: [{ id: 'c', title: 't', updatedAt: 1 }],
    conversation: { id: 'c', title: 't', turns: [{ id: 'u1', role: 'user', text: 'q', images: [], context: [], at: 1 }, turn] },
    fixes: { a1: [{ title: 'Set API Key', command: 'modelGateway.setApiKey' }] },
    pendingApprovals: [{ callId: 'x', path: 'src/a.ts', kind: 'edit', added: 1, removed: 1 }],
  };

  it('accepts what the host sends', () => {
    for (const m of [
      { type: 'state', state },
      { type: 'turn', turn },
      { type: 'turn', turn: { ...turn, mode: 'plan', plan: [{ text: 'Read a.ts', status: 'in-progress' }] } },
      {
        type: 'turn',
        turn: {
          ...turn,
          steps: [
            {
              text: '',
              toolCalls: [
                {
                  id: 'c',
                  name: 'replace_in_file',
                  args: '{}',
                  status: 'done',
                  problems: {
                    introduced: [{ path: 'a.ts', line: 2, severity: 'error', message: 'x' }],
                    more: 0,
                    fixed: 0,
                    elsewhere: [],
                    waitedMs: 10,
                    settled: 'diagnostics',
                  },
                },
              ],
            },
          ],
        },
      },
      { type: 'text', turnId: 'a1', step: 0, delta: 'more' },
      { type: 'approval', callId: 'x', path: 'src/a.ts', kind: 'create', added: 3, removed: 0 },
      { type: 'approval-done', callId: 'x' },
      { type: 'notice', level: 'info', text: 'ok' },
    ]) {
      assert.ok(ToWebviewSchema.safeParse(m).success, JSON.stringify(m).slice(0, 80));
    }
  });

  it('drops malformed host messages: a turn without steps, an unknown status, a fix that runs any command', () => {
    const bad = [
      { type: 'turn', turn: { ...turn, steps: undefined } },
      { type: 'turn', turn: { ...turn, status: 'exploded' } },
      { type: 'turn', turn: { ...turn, plan: [{ text: 'x', status: 'finished' }] } },
      { type: 'state', state: { ...state, fixes: { a1: [{ title: 'x', command: 'workbench.action.terminal.sendSequence' }] } } },
      { type: 'text', turnId: 'a1', step: -1, delta: 'x' },
      { type: 'mystery' },
    ];
    for (const m of bad) assert.equal(ToWebviewSchema.safeParse(m).success, false, JSON.stringify(m).slice(0, 80));
  });

  it('checks what the view sends, including the question an edit replaces and file links', () => {
    assert.ok(fromWebviewSchema().safeParse({ type: 'send', text: 'q', images: [], context: [], replaces: 'u1' }).success);
    assert.ok(fromWebviewSchema().safeParse({ type: 'open-file', path: 'src/a.ts', line: 3 }).success);
    assert.equal(fromWebviewSchema().safeParse({ type: 'open-file', path: 'src/a.ts', line: 0 }).success, false);
    assert.equal(fromWebviewSchema().safeParse({ type: 'run-command', command: 'workbench.action.reloadWindow' }).success, false);
  });

  it("sends the view turns cut to what it shows, without an edit's file contents, leaving the stored turn whole", () => {
    const big = 'r'.repeat(100_000);
    const turn = {
      id: 'a1',
      role: 'assistant' as const,
      model: 'm',
      format: 'chat' as const,
      status: 'done' as const,
      at: 0,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
      steps: [
        {
          text: 'answer text stays whole',
          toolCalls: [
            {
              id: 'c1',
              name: 'create_file',
              args: JSON.stringify({ path: 'a.ts', content: big }),
              status: 'done' as const,
              result: big,
              edit: { path: 'a.ts', before: big, after: big },
            },
          ],
        },
      ],
    };
    const sent = viewTurn(turn);
    const call = sent.steps[0].toolCalls[0];
    assert.ok(call.result.length < VIEW_TEXT_LIMIT + 100 && call.args.length < VIEW_TEXT_LIMIT + 100);
    assert.match(call.result, /… \(96,000 more characters\)$/);
    assert.deepEqual(call.edit, { path: 'a.ts', before: null, after: '' });
    assert.equal(sent.steps[0].text, 'answer text stays whole');
    assert.equal(turn.steps[0].toolCalls[0].result, big, 'the stored turn is untouched');
    assert.ok(ToWebviewSchema.safeParse({ type: 'turn', turn: sent }).success);
    const user = { id: 'u1', role: 'user' as const, text: big, images: [], context: [], at: 0 };
    assert.equal(viewTurn(user), user);
  });

  it('the Usage view may ask only for the commands its fix buttons name', () => {
    assert.equal(FromUsageView.safeParse({ type: 'fix', command: 'modelGateway.setAccessToken' }).success, true);
    for (const command of ['workbench.action.terminal.sendSequence', 'modelGateway.signOut', 'modelGateway.keys.delete', 'vscode.open']) {
      assert.equal(FromUsageView.safeParse({ type: 'fix', command }).success, false, command);
    }
  });
});
