// @profile-dependent: every resource's errors, as each server words and types them.
import { strict as assert } from 'node:assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationError, ServiceUnavailableError, type GatewayClient } from '../../src/gateway';
import { png } from '../emulator/media';
import { clientFor, useEmulator } from './helpers';

// Every resource goes through the same error mapping, whatever its body (JSON, multipart,
// binary): a bad key is an AuthenticationError and an upstream 503 a ServiceUnavailableError.
describe('every resource maps gateway errors', () => {
  const ctx = useEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'mg-errs-'));
  const wav = join(dir, 'a.wav');
  const image = join(dir, 'a.png');
  before(() => {
    writeFileSync(wav, 'RIFF');
    writeFileSync(image, png(16, 16, 1));
  });

  const calls: [string, (c: GatewayClient) => Promise<unknown>][] = [
    ['models', (c) => c.models.list()],
    ['chat', (c) => c.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })],
    ['chat stream', (c) => c.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).finalCompletion()],
    ['messages stream', (c) => c.messages.stream({ model: 'claude-sonnet-emu', messages: [{ role: 'user', content: 'x' }] }).finalMessage()],
    ['embeddings', (c) => c.embeddings.create({ model: 'embed-emu-256', input: 'x' })],
    ['rerank', (c) => c.rerank.create({ model: 'rerank-emu', query: 'q', documents: ['d'] })],
    ['moderations', (c) => c.moderations.create({ input: 'x' })],
    ['speech', (c) => c.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'alloy' })],
    ['transcriptions', (c) => c.audio.transcriptions.create({ file: wav, model: 'whisper-1' })],
    ['videos', (c) => c.videos.create({ model: 'sora-2', prompt: 'p' })],
    ['image v3', (c) => c.imagegen.v3.generate({ prompt: 'p' })],
    ['image legacy', (c) => c.imagegen.legacy.describe({ image_file: image })],
  ];

  for (const [name, call] of calls) {
    it(`${name}: 401 and 503`, async () => {
      await assert.rejects(call(clientFor(ctx.emu, { apiKey: 'sk-wrong-key' }).client), AuthenticationError);
      ctx.emu.inject({ fault: { kind: 'status', status: 503, message: 'upstream busy' } });
      await assert.rejects(
        call(clientFor(ctx.emu, { maxRetries: 0 }).client),
        (e: unknown) => e instanceof ServiceUnavailableError && /upstream busy/.test(e.message),
      );
    });
  }
});
