// @profile-dependent: the Responses route and the pricing route exist on new-api only.
// @vscode-specific: the language-model API: 1.100 has no provider API, 1.139 has it and its own chat.
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { LM_TOOL_NAMES } from '../../src/lm/core/toolNames';
import { png } from '../emulator/media';
import { config } from './config';
import { api, connectToEmulator, dialogs, emulatorControl, emulatorRequests, runAnswering } from './helpers';

const YES = 'Yes|Continue|Allow';
const resultText = (r: vscode.LanguageModelToolResult) => r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
const invoke = (name: string, input: object) => Promise.resolve(vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }));

/** The gateway inside VS Code's own AI: tools on every supported version, chat models where the API exists. */
describe(`the gateway in VS Code's AI (VS Code ${vscode.version})`, function () {
  this.timeout(90_000);

  before(async () => {
    await connectToEmulator();
    await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId);
  });

  it('contributes its six tools to vscode.lm.tools, described for the model', () => {
    const ours = vscode.lm.tools.filter((t) => t.name.startsWith('modelGateway_'));
    assert.deepEqual(ours.map((t) => t.name).sort(), [...LM_TOOL_NAMES].sort());
    for (const t of ours) {
      assert.ok(t.description.length > 40, `${t.name} explains itself to the model`);
      assert.equal((t.inputSchema as { type?: string } | undefined)?.type, 'object', `${t.name} has an input schema`);
    }
  });

  it('moderation and balance answer at once, as short texts (free: no confirmation)', async () => {
    assert.match(
      resultText(await invoke('modelGateway_moderate', { text: 'I will attack and kill the boss in the game' })),
      /^Flagged: .*violence \(\d\.\d\d\)/,
    );
    assert.equal(resultText(await invoke('modelGateway_moderate', { text: 'A calm walk in the park' })), 'Nothing flagged.');
    assert.match(resultText(await invoke('modelGateway_balance', {})), /^Balance: \$\d+\.\d\d/);
  });

  it('free tools are rate-limited for other callers: the 21st balance read in a minute is refused', async () => {
    const texts: string[] = [];
    for (let i = 0; i < 21; i++) texts.push(resultText(await invoke('modelGateway_balance', {})));
    // One call was made by the test above; the window holds 20.
    assert.ok(
      texts.slice(0, 19).every((t) => /^Balance: /.test(t)),
      texts.slice(0, 19).join(' | '),
    );
    assert.match(texts.at(-1)!, /called 20 times in the last minute; try again in \d+ s/);
  });

  it('semantic search says how to build the index when there is none yet', async () => {
    const { testing } = await api();
    const text = resultText(await invoke('modelGateway_semanticSearch', { query: 'where are greetings built' }));
    if (testing.search.ready()) assert.match(text, /greet/);
    else assert.match(text, /Build Semantic Index/);
  });

  it('a paid tool asks first with its price: Cancel spends nothing, Yes saves the file', async function () {
    // Someone must answer VS Code's own confirmation: the code-server launcher does; under
    // @vscode/test-electron nobody is at the window.
    if (!dialogs.answered()) this.skip();
    const generations = async () => (await emulatorRequests()).filter((r) => r.includes('/generate')).length;
    const before = await generations();
    dialogs.answer('Cancel');
    await assert.rejects(
      invoke('modelGateway_generateImage', { prompt: 'a lighthouse at dusk' }),
      (err: Error) => err instanceof vscode.CancellationError || /cancel/i.test(err.message),
    );
    assert.equal(await generations(), before, 'nothing was sent');
    assert.match(dialogs.seen().at(-1)?.text ?? '', /Generate an image for \$0\.060\?/);

    dialogs.answer(YES);
    const saved = resultText(await invoke('modelGateway_generateImage', { prompt: 'a lighthouse at dusk', aspect_ratio: '16x9' }));
    const m = /Saved the image as (\S+\.png)/.exec(saved);
    assert.ok(m, saved);
    const file = join(vscode.workspace.workspaceFolders![0].uri.fsPath, m[1]);
    assert.deepEqual([...readFileSync(file).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
    assert.equal(await generations(), before + 1);
  });

  it('speaks text to an MP3 and transcribes it back (both confirmed)', async function () {
    if (!dialogs.answered()) this.skip(); // as above: the confirmation needs someone at the window
    dialogs.answer(YES, YES);
    const spoken = resultText(await invoke('modelGateway_speak', { text: 'The gateway streams answers.' }));
    const m = /Saved the speech as (\S+\.mp3)/.exec(spoken);
    assert.ok(m, spoken);
    assert.ok(existsSync(join(vscode.workspace.workspaceFolders![0].uri.fsPath, m[1])));
    assert.match(dialogs.seen().at(-1)?.text ?? '', /Speak 28 characters\?/);
    const transcript = resultText(await invoke('modelGateway_transcribe', { path: m[1] }));
    assert.match(transcript, /^Transcript of speech-.*\.mp3:\n/);
    // A path outside the workspace is refused before anything is asked or sent.
    dialogs.answer(YES);
    assert.match(resultText(await invoke('modelGateway_transcribe', { path: '../outside.mp3' })), /^Error: could not transcribe/);
  });

  const hasProviderApi = () => typeof (vscode.lm as { registerLanguageModelChatProvider?: unknown }).registerLanguageModelChatProvider === 'function';

  it('registers the chat-model provider exactly where VS Code has the API (1.104+), tools everywhere', async () => {
    const { testing } = await api();
    assert.equal(testing.languageModels.chatProvider, hasProviderApi());
    assert.equal(testing.languageModels.tools, true);
    assert.equal(hasProviderApi(), !vscode.version.startsWith('1.100.'), 'the API is in the newest tested VS Code, not in 1.100');
  });

  describe('the gateway chat models, called by another extension (this test runner) through vscode.lm', () => {
    let model: vscode.LanguageModelChat;
    const DataPart = (vscode as unknown as { LanguageModelDataPart?: { image(data: Uint8Array, mime: string): unknown } }).LanguageModelDataPart;
    const user = (...parts: unknown[]) => vscode.LanguageModelChatMessage.User(parts as vscode.LanguageModelTextPart[]);

    before(async function () {
      // VS Code 1.100 has no language-model provider API: nothing to call there (checked above).
      if (!hasProviderApi()) this.skip();
      const models = await vscode.lm.selectChatModels({ vendor: 'model-gateway', id: 'gpt-4o-mini' });
      assert.equal(models.length, 1, 'gpt-4o-mini is offered');
      model = models[0];
    });

    const drain = async (request: Thenable<vscode.LanguageModelChatResponse>) => {
      let text = '';
      for await (const chunk of (await request).text) text += chunk;
      return text;
    };

    it('another extension (this runner) is asked once: Deny is remembered, revoked it is asked again, Allow lets it through', async () => {
      const { testing } = await api();
      await testing.lmAccess.forget(Object.keys(testing.lmAccess.decisions()));
      // The runner extension's own API object, so that VS Code names the caller.
      const runner = (globalThis as { __modelGatewayRunnerVscode?: typeof vscode }).__modelGatewayRunnerVscode ?? vscode;
      const [runnerModel] = await runner.lm.selectChatModels({ vendor: 'model-gateway', id: 'gpt-4o-mini' });
      const hello = () => runnerModel.sendRequest([runner.LanguageModelChatMessage.User('hello')], {});
      const chats = async () => (await emulatorRequests()).filter((r) => r.includes('/chat/completions')).length;
      const before = await chats();
      testing.services.prompts.answerNext('Deny');
      await assert.rejects(drain(hello()), /is not allowed to use its models/);
      assert.equal(testing.services.prompts.pendingAnswers(), 0, 'the person was asked');
      const decided = Object.entries(testing.lmAccess.decisions());
      assert.equal(decided.length, 1);
      assert.match(decided[0][0], /integration-runner/, 'VS Code named the calling extension');
      assert.equal(decided[0][1], false);
      // Remembered: refused again without a question.
      await assert.rejects(drain(hello()), /is not allowed/);
      assert.equal(await chats(), before, 'nothing reached the gateway');
      await testing.lmAccess.forget([decided[0][0]]);
      testing.services.prompts.answerNext('Allow');
      assert.ok((await drain(hello())).length > 0);
      assert.equal(await chats(), before + 1);
      // The suite's own calls come from code VS Code cannot name: asked about too, and allowed here.
      testing.services.prompts.answerNext('Allow');
      assert.ok((await drain(model.sendRequest([user(new vscode.LanguageModelTextPart('hello'))], {}))).length > 0);
      assert.equal(testing.lmAccess.decisions().nullextensiondescription, true);
    });

    it('lists only chat models, with their limits and capabilities', async () => {
      const all = await vscode.lm.selectChatModels({ vendor: 'model-gateway' });
      assert.ok(all.some((m) => m.id === 'claude-sonnet-emu'));
      assert.ok(!all.some((m) => /embed|tts|whisper|moderation/.test(m.id)), 'only chat models');
      assert.ok(model.maxInputTokens > 1000);
      // The chat's estimate (tokenx): about a token a word here, and far more for CJK text.
      const latin = await model.countTokens('four words of text here');
      assert.ok(latin >= 4 && latin <= 7, `${latin} tokens`);
      assert.ok((await model.countTokens('模型网关把许多厂商的模型放在几个接口后面')) > 10, 'CJK counts more than 4 characters a token');
    });

    it('streams an answer about an image', async () => {
      const response = await model.sendRequest(
        [user(new vscode.LanguageModelTextPart('What is in this picture?'), DataPart!.image(png(16, 16, 3), 'image/png'))],
        {},
      );
      let text = '';
      for await (const chunk of response.text) text += chunk;
      assert.match(text, /I looked at the image you attached/);
      const sent = (await emulatorControl('last-request', { path: '/v1/chat/completions' })) as { body: { messages: { content: unknown }[] } };
      assert.match(JSON.stringify(sent.body.messages.at(-1)), /data:image\/png;base64,/);
    });

    it('returns a tool call, and answers from the tool result sent back (the round trip an agent makes)', async () => {
      const tools: vscode.LanguageModelChatTool[] = [
        {
          name: 'get_weather',
          description: 'The weather in a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ];
      const question = user(new vscode.LanguageModelTextPart('Use get_weather for the city "Paris"'));
      const first = await model.sendRequest([question], { tools });
      const calls: vscode.LanguageModelToolCallPart[] = [];
      for await (const part of first.stream) if (part instanceof vscode.LanguageModelToolCallPart) calls.push(part);
      assert.equal(calls.length, 1);
      assert.equal(calls[0].name, 'get_weather');
      const second = await model.sendRequest(
        [
          question,
          vscode.LanguageModelChatMessage.Assistant([calls[0]]),
          vscode.LanguageModelChatMessage.User([
            new vscode.LanguageModelToolResultPart(calls[0].callId, [new vscode.LanguageModelTextPart('Sunny, 21 degrees')]),
          ]),
        ],
        { tools },
      );
      let answer = '';
      for await (const chunk of second.text) answer += chunk;
      assert.match(answer, /Sunny, 21 degrees/);
    });

    it('speaks the messages format to Claude models: the tool round trip, with prompt caching', async () => {
      const [claude] = await vscode.lm.selectChatModels({ vendor: 'model-gateway', id: 'claude-sonnet-emu' });
      assert.ok(claude, 'claude-sonnet-emu is offered');
      const tools: vscode.LanguageModelChatTool[] = [
        {
          name: 'get_weather',
          description: 'The weather in a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ];
      const question = user(new vscode.LanguageModelTextPart('Use get_weather for the city "Oslo"'));
      const calls: vscode.LanguageModelToolCallPart[] = [];
      for await (const part of (await claude.sendRequest([question], { tools })).stream) if (part instanceof vscode.LanguageModelToolCallPart) calls.push(part);
      assert.equal(calls[0]?.name, 'get_weather');
      const first = (await emulatorControl('last-request', { path: '/v1/messages' })) as { body: { tools: { cache_control?: unknown }[] } };
      assert.ok(first.body.tools.at(-1)?.cache_control, 'the tool definitions are a cache breakpoint');
      const answer = await claude.sendRequest(
        [
          question,
          vscode.LanguageModelChatMessage.Assistant([calls[0]]),
          vscode.LanguageModelChatMessage.User([
            new vscode.LanguageModelToolResultPart(calls[0].callId, [new vscode.LanguageModelTextPart('Snow, -3 degrees')]),
          ]),
        ],
        { tools },
      );
      let text = '';
      for await (const chunk of answer.text) text += chunk;
      assert.match(text, /Snow, -3 degrees/);
      const second = (await emulatorControl('last-request', { path: '/v1/messages' })) as {
        body: { messages: { role: string; content: { type: string }[] }[] };
      };
      assert.deepEqual(
        second.body.messages.map((m) => m.role),
        ['user', 'assistant', 'user'],
      );
      assert.equal(second.body.messages[2].content[0].type, 'tool_result');
    });

    it("speaks the Responses format to a model the gateway serves only there (new-api's /api/pricing): the tool round trip", async function () {
      if (config.profile !== 'new-api') this.skip(); // reason: one-api has neither /v1/responses nor /api/pricing
      const [codex] = await vscode.lm.selectChatModels({ vendor: 'model-gateway', id: 'gpt-5-codex-emu' });
      assert.ok(codex, 'gpt-5-codex-emu is offered');
      const tools: vscode.LanguageModelChatTool[] = [
        {
          name: 'get_weather',
          description: 'The weather in a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ];
      const question = user(new vscode.LanguageModelTextPart('Use get_weather for the city "Bergen"'));
      const calls: vscode.LanguageModelToolCallPart[] = [];
      for await (const part of (await codex.sendRequest([question], { tools })).stream) if (part instanceof vscode.LanguageModelToolCallPart) calls.push(part);
      assert.equal(calls[0]?.name, 'get_weather');
      assert.deepEqual(calls[0]?.input, { city: 'Bergen' });
      const answer = await codex.sendRequest(
        [
          question,
          vscode.LanguageModelChatMessage.Assistant([calls[0]]),
          vscode.LanguageModelChatMessage.User([
            new vscode.LanguageModelToolResultPart(calls[0].callId, [new vscode.LanguageModelTextPart('Rain, 9 degrees')]),
          ]),
        ],
        { tools },
      );
      let text = '';
      for await (const chunk of answer.text) text += chunk;
      assert.match(text, /Rain, 9 degrees/);
      const sent = (await emulatorControl('last-request', { path: '/v1/responses' })) as {
        body: { store: boolean; input: { type?: string; role?: string }[] };
      };
      assert.equal(sent.body.store, false);
      assert.deepEqual(
        sent.body.input.map((i) => i.type ?? i.role),
        ['user', 'function_call', 'function_call_output'],
      );
    });

    it('stops when the caller cancels, mid-stream', async () => {
      await emulatorControl('faults', { path: '/v1/chat', fault: { kind: 'delayEvents', ms: 30 } });
      const cts = new vscode.CancellationTokenSource();
      const response = await model.sendRequest([user(new vscode.LanguageModelTextPart('A long answer please #words=800'))], {}, cts.token);
      let text = '';
      await assert.rejects(
        async () => {
          for await (const chunk of response.text) {
            text += chunk;
            if (text.length > 40) cts.cancel();
          }
          throw new Error('the stream ran to its end');
        },
        (err: Error) => err instanceof vscode.CancellationError || /cancel/i.test(err.message) || err.message !== 'the stream ran to its end',
      );
      assert.ok(text.length > 40 && text.split(' ').length < 800, `stopped early (${text.split(' ').length} words)`);
      await emulatorControl('reset');
    });

    it('the daily cap for other callers: once reached, requests are refused with a clear error; the Usage view shows it', async () => {
      const { testing } = await api();
      const settings = vscode.workspace.getConfiguration('modelGateway');
      const before = testing.lmAccess.spentToday();
      await settings.update('lm.dailyCapDollars', before + 0.000001, vscode.ConfigurationTarget.Global);
      try {
        assert.ok((await drain(model.sendRequest([user(new vscode.LanguageModelTextPart('One more answer'))], {}))).length > 0, 'under the cap');
        assert.ok(testing.lmAccess.spentToday() > before, 'the answer was counted');
        await assert.rejects(
          drain(model.sendRequest([user(new vscode.LanguageModelTextPart('And another'))], {})),
          /today's spending cap .* is reached .* modelGateway\.lm\.dailyCapDollars/,
        );
        const report = await testing.usage.open();
        assert.ok(report?.otherCallers, 'the Usage view has the figure');
        assert.equal(report.otherCallers.dollars, testing.lmAccess.spentToday());
        assert.equal(report.otherCallers.capDollars, before + 0.000001);
      } finally {
        await settings.update('lm.dailyCapDollars', undefined, vscode.ConfigurationTarget.Global);
      }
      assert.ok((await drain(model.sendRequest([user(new vscode.LanguageModelTextPart('Under the default cap again'))], {}))).length > 0);
    });

    it('maps a refused key to a language-model error that says how to fix it', async () => {
      await emulatorControl('faults', { path: '/v1/chat', times: 5, fault: { kind: 'status', status: 401, message: 'invalid token' } });
      try {
        const response = await model.sendRequest([user(new vscode.LanguageModelTextPart('hello'))], {});
        await assert.rejects(async () => {
          for await (const chunk of response.text) void chunk;
        }, /Model Gateway: .*Set API Key/);
      } finally {
        await emulatorControl('reset');
      }
    });
  });
});
