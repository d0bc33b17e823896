import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { api, connectToEmulator, emulatorRequests, runCommand } from './helpers';

function pngSize(buf: Buffer): { width: number; height: number } {
  assert.equal(buf.subarray(1, 4).toString('ascii'), 'PNG');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

describe('generating media from commands, in a real VS Code', () => {
  before(async () => {
    await connectToEmulator();
  });

  it('Generate Image saves PNGs of the requested ratio with readable names, prices the request, and opens the first', async () => {
    const out = await runCommand<{ files: string[]; unsafe: number; priceDollars: number }>('modelGateway.assets.generateImage', {
      prompt: 'A red fox at dawn!',
      model: 'V_3',
      rendering_speed: 'TURBO',
      aspect_ratio: '16x9',
      num_images: 2,
      seed: 7,
      confirmed: true,
    });
    assert.ok(out, 'the command returned an outcome');
    assert.equal(out.priceDollars, 0.06);
    assert.deepEqual(
      out.files.map((f) => basename(f)),
      ['a-red-fox-at-dawn-7.png', 'a-red-fox-at-dawn-8.png'],
    );
    for (const f of out.files) {
      assert.ok(f.includes('/generated/'));
      const { width, height } = pngSize(readFileSync(f));
      assert.ok(Math.abs(width / height - 16 / 9) < 0.05, `${width}x${height}`);
    }
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.match(tab?.label ?? '', /a-red-fox-at-dawn-7\.png/);
  });

  it('reports unsafe results and saves no broken file; legacy models work too', async () => {
    const unsafe = await runCommand<{ files: string[]; unsafe: number }>('modelGateway.assets.generateImage', {
      prompt: 'something #unsafe',
      model: 'V_3',
      confirmed: true,
    });
    assert.deepEqual(unsafe, { files: [], unsafe: 1, priceDollars: 0.06 });
    const legacy = await runCommand<{ files: string[]; priceDollars: number }>('modelGateway.assets.generateImage', {
      prompt: 'castle',
      model: 'V_2A_TURBO',
      aspect_ratio: '9x16',
      confirmed: true,
    });
    assert.ok(legacy);
    assert.equal(legacy.priceDollars, 0.025);
    assert.ok(existsSync(legacy.files[0]));
    const { width, height } = pngSize(readFileSync(legacy.files[0]));
    assert.ok(height > width);
  });

  it('no caller can skip the price question: another extension\'s "confirmed" option spends nothing', async () => {
    const { testing } = await api();
    const before = (await emulatorRequests()).filter((r) => r.startsWith('POST /imagegen')).length;
    // The person declines the dialog that still opens.
    testing.services.prompts.answerNext(false);
    const out = await vscode.commands.executeCommand('modelGateway.assets.generateImage', { prompt: 'spend my money', model: 'V_3', confirmed: true });
    testing.services.prompts.discardAnswers();
    assert.equal(out, undefined);
    assert.equal((await emulatorRequests()).filter((r) => r.startsWith('POST /imagegen')).length, before);
  });
});
