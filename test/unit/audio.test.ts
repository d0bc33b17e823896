import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadRequestError, voicesFor } from '../../src/gateway';
import { readWav } from '../emulator/media';
import { clientFor, useEmulator, refusedBeforeSending } from './helpers';

describe('audio', () => {
  const ctx = useEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'mg-audio-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const text = 'The gateway streams answers. Each chunk is parsed once! Then the editor shows it?';

  it('speech to WAV, then transcription gives the same text back', async () => {
    const { client } = clientFor(ctx.emu);
    const speech = await client.audio.speech.create({ model: 'tts-1', input: text, voice: 'alloy', response_format: 'wav', speed: 1.5 });
    assert.equal(speech.contentType, 'audio/wav');
    const file = join(dir, 'speech.wav');
    const written = await speech.toFile(file);
    const wav = readWav(readFileSync(file))!;
    assert.equal(written, readFileSync(file).length);
    assert.equal(wav.sampleRate, 24_000);
    assert.ok(Math.abs(wav.seconds - text.length / 15 / 1.5) < 0.05, `duration ${wav.seconds}`);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.part')),
      [],
      'no temporary file is left',
    );

    const transcript = await client.audio.transcriptions.create({ file, model: 'whisper-1' });
    assert.equal(transcript.text, text);
    const sent = ctx.emu.requestsTo('/v1/audio/transcriptions').at(-1)!;
    assert.match(String(sent.headers['content-type']), /^multipart\/form-data; boundary=/);
  });

  it('longer text makes longer audio', async () => {
    const { client } = clientFor(ctx.emu);
    const short = readWav(await (await client.audio.speech.create({ model: 'tts-1', input: 'Hi there.', voice: 'nova', response_format: 'wav' })).buffer())!;
    const long = readWav(
      await (await client.audio.speech.create({ model: 'tts-1', input: 'Hi there. '.repeat(20), voice: 'nova', response_format: 'wav' })).buffer(),
    )!;
    assert.ok(long.seconds > short.seconds * 10);
  });

  it('returns every transcription format: text, srt, vtt, json, verbose json with segments and words', async () => {
    const { client } = clientFor(ctx.emu);
    const file = join(dir, 'fmt.wav');
    await (await client.audio.speech.create({ model: 'tts-1', input: text, voice: 'echo', response_format: 'wav' })).toFile(file);
    assert.equal(await client.audio.transcriptions.create({ file, model: 'whisper-1', response_format: 'text' }), text);
    const srt = await client.audio.transcriptions.create({ file, model: 'whisper-1', response_format: 'srt' });
    assert.match(srt, /^1\n00:00:00,000 --> 00:00:0\d,\d{3}\nThe gateway streams answers\.\n\n2\n/);
    const vtt = await client.audio.transcriptions.create({ file, model: 'whisper-1', response_format: 'vtt' });
    assert.match(vtt, /^WEBVTT\n\n00:00:00\.000 --> 00:00:0\d\.\d{3}\nThe gateway streams answers\./);
    const verbose = await client.audio.transcriptions.create({
      file,
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    assert.equal(verbose.text, text);
    assert.equal(verbose.segments?.length, 3);
    assert.ok(verbose.segments[2].end <= (verbose.duration ?? 0) + 0.001);
    assert.equal(verbose.words?.length, text.split(' ').length);
    const sent = ctx.emu.requestsTo('/v1/audio/transcriptions').at(-1)!;
    assert.ok(sent.body, 'multipart body recorded');
    const translated = await client.audio.translations.create({ file, model: 'whisper-1', response_format: 'verbose_json' });
    assert.equal(translated.task, 'translate');
    assert.equal(translated.language, 'english');
  });

  it('MP3 speech round-trips too, and PCM is raw samples', async () => {
    const { client } = clientFor(ctx.emu);
    const file = join(dir, 'speech.mp3');
    await (await client.audio.speech.create({ model: 'tts-1-hd', input: 'Short and sweet.', voice: 'coral' })).toFile(file);
    assert.equal(readFileSync(file).toString('latin1', 0, 3), 'ID3');
    assert.equal((await client.audio.transcriptions.create({ file, model: 'whisper-1' })).text, 'Short and sweet.');
    const pcm = await (await client.audio.speech.create({ model: 'tts-1', input: 'Sixteen bit.', voice: 'ash', response_format: 'pcm' })).buffer();
    assert.equal(pcm.length % 2, 0);
    assert.notEqual(pcm.toString('ascii', 0, 4), 'RIFF');
  });

  it('maps a first-family voice onto a second-family model, and offers each model its family', async () => {
    const { client } = clientFor(ctx.emu);
    const res = await client.audio.speech.create({
      model: 'gemini-2.5-flash-preview-tts',
      input: 'Speaker A: hello\nSpeaker B: hi',
      voice: 'alloy',
      response_format: 'wav',
      instructions: 'A is cheerful',
    });
    assert.ok((await res.buffer()).length > 44);
    assert.ok(voicesFor('gemini-2.5-flash-preview-tts').includes('Kore'));
    assert.ok(!voicesFor('tts-1').includes('Kore'));
    assert.equal(voicesFor('gemini-2.5-flash-preview-tts').length, 30);
  });

  it("refuses speech that breaks the spec's rules before sending", async () => {
    const { client } = clientFor(ctx.emu);
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.speech.create({ model: 'tts-1', input: 'x'.repeat(4097), voice: 'alloy' }),
      /input: must be at most 4096 characters/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'alloy', speed: 4.5 }),
      /speed: must be between 0\.25 and 4\.0/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.speech.create({ model: 'gemini-2.5-flash-preview-tts', input: 'x', voice: 'Kore', response_format: 'mp3' }),
      /response_format: gemini-2\.5-flash-preview-tts supports only wav and pcm/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.speech.create({ model: 'gemini-2.5-flash-preview-tts', input: 'x', voice: 'Kore', speed: 1.2 }),
      /speed: .* does not support speed/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'x', voice: 'alloy', speed: 1.2 }),
      /does not support speed/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'alloy', instructions: 'whisper' }),
      /instructions: tts-1 does not take instructions/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'Kore' }),
      /voice: "Kore" is not a voice of tts-1/,
    );
    // Unknown models get only the universal checks and go through to the gateway.
    await assert.rejects(client.audio.speech.create({ model: 'some-new-tts', input: 'x', voice: 'alloy' }), /unavailable/);
  });

  it('refuses uploads over 25 MB or of the wrong type, and bad options, before sending', async () => {
    const { client } = clientFor(ctx.emu);
    const big = join(dir, 'big.wav');
    writeFileSync(big, Buffer.alloc(25 * 1024 * 1024 + 1));
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.transcriptions.create({ file: big, model: 'whisper-1' }),
      /file: "big\.wav" is 25\.0 MB; the limit is 25 MB/,
    );
    const flac = join(dir, 'a.flac');
    writeFileSync(flac, 'x');
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.transcriptions.create({ file: flac, model: 'whisper-1' }),
      /file: "a\.flac" is not one of mp3, mp4, mpeg, mpga, m4a, wav, webm/,
    );
    const ok = join(dir, 'ok.wav');
    writeFileSync(ok, 'x');
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.transcriptions.create({ file: ok, model: 'whisper-1', timestamp_granularities: ['word'] }),
      /timestamp_granularities: needs response_format "verbose_json"/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.transcriptions.create({ file: ok, model: 'whisper-1', temperature: 1.5 }),
      /temperature: must be between 0 and 1/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.audio.translations.create({ file: ok, model: 'whisper-1', language: 'fr' }),
      /language: translations always produce English/,
    );
    await refusedBeforeSending(ctx.emu, () => client.audio.transcriptions.create({ file: join(dir, 'missing.wav'), model: 'whisper-1' }), /cannot read/);
    await assert.rejects(client.audio.transcriptions.create({ file: ok, model: 'gpt-4o' }), BadRequestError);
  });
});
