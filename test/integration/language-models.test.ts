import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { LM_TOOL_NAMES } from '../../src/lm/toolNames';
import { config } from './config';
import { api, connectToEmulator, dialogs, emulatorRequests, runAnswering } from './helpers';

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
    assert.match(resultText(await invoke('modelGateway_moderate', { text: 'I will attack and kill the boss in the game' })), /^Flagged: .*violence \(\d\.\d\d\)/);
    assert.equal(resultText(await invoke('modelGateway_moderate', { text: 'A calm walk in the park' })), 'Nothing flagged.');
    assert.match(resultText(await invoke('modelGateway_balance', {})), /^Balance: \$\d+\.\d\d/);
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
    await assert.rejects(invoke('modelGateway_generateImage', { prompt: 'a lighthouse at dusk' }), (err: Error) => err instanceof vscode.CancellationError || /cancel/i.test(err.message));
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

  it('offers the gateway chat models as VS Code language models where the API exists (1.104+)', async () => {
    const { testing } = await api();
    const hasApi = typeof (vscode.lm as { registerLanguageModelChatProvider?: unknown }).registerLanguageModelChatProvider === 'function';
    assert.equal(testing.languageModels.chatProvider, hasApi, 'registered exactly when VS Code has the API');
    assert.equal(testing.languageModels.tools, true);
    if (!hasApi) return;
    const models = await vscode.lm.selectChatModels({ vendor: 'model-gateway' });
    assert.ok(models.some((m) => m.id === 'gpt-4o-mini'), models.map((m) => m.id).join(', '));
    assert.ok(!models.some((m) => /embed|tts|whisper/.test(m.id)), 'only chat models');
  });
});
