import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { api, connectToEmulator, emulatorControl, emulatorRequests } from './helpers';
import { until } from '../wait';

/** The media endpoints (what spends); other traffic is the extension's own background work. */
const MEDIA_ENDPOINT = /^POST \/(v1\/(audio|moderations)|imagegen\/|suno\/submit|mj\/submit)/;

/**
 * The gateway's media as tools of the chat (generate_image, text_to_speech, transcribe_audio,
 * moderate_text): each asks with its price in the approval bar unless paid media run unasked.
 */
describe('media tools in the chat (paid media)', function () {
  this.timeout(90_000);
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const agent = () => vscode.workspace.getConfiguration('modelGateway.agent');
  const media = async () => (await emulatorRequests()).filter((p) => MEDIA_ENDPOINT.test(p));
  const call = (t: AssistantTurn, name: string): ToolCallRecord | undefined => t.steps.flatMap((s) => s.toolCalls).find((c) => c.name === name);

  /** Sends a question; answers the paid approvals with `accept`; the turn and what was asked. */
  async function ask(text: string, accept: boolean): Promise<{ turn: AssistantTurn; asked: { action?: string; price?: string; reason?: string }[] }> {
    const { testing } = await api();
    await testing.chat.newConversation();
    const asked: { action?: string; price?: string; reason?: string }[] = [];
    const sent = testing.chat.send(text, [], []);
    let done = false;
    void sent.finally(() => (done = true));
    while (!done) {
      for (const a of testing.chat.pendingApprovals()) {
        asked.push(a);
        testing.chat.decide(a.callId, accept);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await sent;
    return { turn: testing.chat.current?.turns.at(-1) as AssistantTurn, asked };
  }

  before(() => connectToEmulator());
  after(async () => {
    await agent().update('autoApprove', undefined, vscode.ConfigurationTarget.Global);
    rmSync(join(root(), '.env.voice'), { force: true });
  });

  it('generate_image asks with its price; Reject spends nothing; Allow saves the PNG into the workspace', async () => {
    const before = (await media()).length;
    const rejected = await ask('Use the generate_image tool with the prompt "a paper boat on a pond"', false);
    assert.equal(rejected.asked.length, 1);
    assert.equal(rejected.asked[0].action, 'Model Gateway › generate_image');
    assert.match(rejected.asked[0].price ?? '', /^\$0\.060* \(one V3 image\)$/, "the spec's V3 DEFAULT price");
    assert.match(rejected.asked[0].reason ?? '', /paid media ask unless modelGateway\.agent\.autoApprove\.paidMedia/);
    assert.match(call(rejected.turn, 'generate_image')?.result ?? '', /rejected generate_image; it did not run and cost nothing/);
    assert.equal((await media()).length, before, 'nothing went to the image endpoint');

    const allowed = await ask('Use the generate_image tool with the prompt "a paper boat on a pond"', true);
    const result = call(allowed.turn, 'generate_image')?.result ?? '';
    const saved = /Saved the image to (\S+\.png)\./.exec(result)?.[1];
    assert.ok(saved, result);
    const file = join(root(), saved);
    assert.ok(existsSync(file));
    assert.deepEqual([...readFileSync(file).subarray(1, 4)].map((b) => String.fromCharCode(b)).join(''), 'PNG');
    rmSync(file);
  });

  it('with paid media on (a user setting) it runs unasked; the other media tools answer too', async () => {
    await agent().update('autoApprove', { paidMedia: true }, vscode.ConfigurationTarget.Global);
    const mod = await ask('Use the moderate_text tool on "I will hurt you"', false);
    assert.equal(mod.asked.length, 0, 'not asked');
    assert.match(call(mod.turn, 'moderate_text')?.result ?? '', /Flagged|Not flagged/);
    const speech = await ask('Use the text_to_speech tool to say "hello from the chat"', false);
    const spoken = /to (\S+\.mp3)\./.exec(call(speech.turn, 'text_to_speech')?.result ?? '')?.[1];
    assert.ok(spoken && existsSync(join(root(), spoken)), call(speech.turn, 'text_to_speech')?.result);
    rmSync(join(root(), spoken));
  });

  it('transcribe_audio never uploads a secret or outside file, and says why before asking anyone', async () => {
    await agent().update('autoApprove', { paidMedia: true }, vscode.ConfigurationTarget.Global);
    mkdirSync(root(), { recursive: true });
    writeFileSync(join(root(), '.env.voice'), 'OPENAI_API_KEY=sk-not-for-upload\n');
    const before = (await media()).length;
    const secret = await ask('Use the transcribe_audio tool on .env.voice', true);
    assert.match(call(secret.turn, 'transcribe_audio')?.result ?? '', /^Error: ".env.voice" may hold credentials/);
    const outside = await ask('Use the transcribe_audio tool on ../outside.wav', true);
    assert.match(call(outside.turn, 'transcribe_audio')?.result ?? '', /^Error: .*outside/i);
    const folderItself = await ask('Use the transcribe_audio tool on the folder "src"', true);
    assert.match(call(folderItself.turn, 'transcribe_audio')?.result ?? '', /^Error: .* is not a file/);
    assert.equal((await media()).length, before, 'nothing was uploaded');
  });
  it("generate_music and midjourney_imagine ask with the gateway's per-call price; allowed, the jobs start and their files arrive in the assets folder", async () => {
    await agent().update('autoApprove', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('modelGateway.assets').update('videoPollSeconds', 1, vscode.ConfigurationTarget.Workspace);
    try {
      const before = (await media()).length;
      const rejected = await ask('Use the generate_music tool with the description "a calm song about the sea"', false);
      assert.equal(rejected.asked[0]?.action, 'Model Gateway › generate_music');
      assert.equal(rejected.asked[0]?.price, '$0.1000 (suno_music)', "new-api's suno_music price from /api/pricing");
      assert.equal((await media()).length, before, 'a rejected song costs nothing');

      const song = await ask('Use the generate_music tool with the description "a calm song about the sea"', true);
      assert.match(call(song.turn, 'generate_music')?.result ?? '', /^Started the song "a calm song about the sea" \(task task_/);
      const grid = await ask('Use the midjourney_imagine tool with the prompt "a paper boat on a pond"', true);
      assert.equal(grid.asked[0]?.price, '$0.1000 (mj_imagine)');
      assert.match(call(grid.turn, 'midjourney_imagine')?.result ?? '', /^Started the Midjourney grid/);
      // The tasks finish on the emulator's clock; the jobs poll, download and keep the files.
      await emulatorControl('clock', { advanceMs: 60_000 });
      const generated = join(root(), 'generated');
      const files = await until(
        'the clips and the grid',
        () => {
          const all = existsSync(generated) ? readdirSync(generated) : [];
          const wanted = [...all.filter((f) => /^music-.*\.mp3$/.test(f)), ...all.filter((f) => /^mj-a-paper-boat-on-a-pond\.png$/.test(f))];
          return wanted.length === 3 ? wanted : undefined;
        },
        30_000,
      );
      // Ready, the song plays in the player and the grid opens beside it: closed here, as the person would.
      // Only these tabs: closing all would stop at an earlier test's unsaved file.
      const opened = () =>
        vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label.startsWith('▶ music-') || t.label.startsWith('mj-a-paper-boat'));
      await until(
        'the player and the grid',
        () => opened().some((t) => t.label.startsWith('▶ music-')) && opened().some((t) => t.label.startsWith('mj-')),
        30_000,
      );
      await vscode.window.tabGroups.close(opened());
      assert.equal(opened().length, 0, 'the player and the grid closed');
      for (const f of files) rmSync(join(generated, f));
    } finally {
      await vscode.workspace.getConfiguration('modelGateway.assets').update('videoPollSeconds', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });
});
