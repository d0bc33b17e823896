import { strict as assert } from 'node:assert';
import { AudioJoinError, joinAudio, joinMp3, joinWav, pcmToWav, splitForSpeech } from '../../src/assets/core/audioParts';
import { slug } from '../../src/assets/core/names';
import { mp3, readMp3Text, readWav, synthesizePcm, wavFromPcm } from '../emulator/media';

describe('splitting long text for speech', () => {
  it('keeps short text whole', () => {
    assert.deepEqual(splitForSpeech('Hello there. How are you?'), ['Hello there. How are you?']);
  });

  it('cuts after sentence ends, never inside a sentence, and loses nothing', () => {
    const sentences = Array.from({ length: 300 }, (_, i) => `Sentence number ${i} says something${i % 3 ? '.' : '!'} `);
    const text = sentences.join('') + 'The end?';
    const parts = splitForSpeech(text, 4096);
    assert.ok(parts.length >= 3, `${parts.length} parts`);
    assert.equal(parts.join(''), text);
    for (const p of parts) {
      assert.ok(p.length <= 4096, `part of ${p.length}`);
      assert.match(p, /^Sentence number \d+/, 'every part starts at a sentence');
    }
    for (const p of parts.slice(0, -1)) assert.match(p, /[.!?]\s*$/, 'every part but the last ends a sentence');
  });

  it('splits at paragraph breaks and line ends too', () => {
    const parts = splitForSpeech('first line without a stop\nsecond line\n\nthird paragraph', 30);
    assert.deepEqual(parts, ['first line without a stop\n', 'second line\n\nthird paragraph']);
    assert.deepEqual(splitForSpeech('first line\n\nsecond paragraph', 14), ['first line\n\n', 'second ', 'paragraph']);
  });

  it('falls back to spaces for an over-long sentence, then to a hard cut for an over-long word', () => {
    const long = `${'word '.repeat(50)}end.`;
    const parts = splitForSpeech(long, 32);
    assert.equal(parts.join(''), long);
    for (const p of parts) assert.ok(p.length <= 32);
    for (const p of parts.slice(0, -1)) assert.match(p, /word $/);
    assert.deepEqual(splitForSpeech('x'.repeat(25), 10), ['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('makes no whitespace-only part', () => {
    const parts = splitForSpeech(`${' '.repeat(20)}Hi. ${' '.repeat(30)}There.`, 10);
    assert.ok(parts.length > 0);
    for (const p of parts) assert.ok(p.trim(), JSON.stringify(p));
    assert.deepEqual(splitForSpeech('   \n  '), []);
  });
});

describe('joining speech parts', () => {
  it('joins WAVs into one valid WAV whose samples are the parts end to end', () => {
    const pcms = ['one two three', 'four five', 'six'].map((t) => synthesizePcm(t));
    const joined = joinWav(pcms.map((p, i) => wavFromPcm(p, `part ${i}`)));
    const info = readWav(joined);
    assert.ok(info);
    assert.equal(info.sampleRate, 24_000);
    assert.equal(joined.readUInt32LE(4), joined.length - 8, 'RIFF size');
    const total = pcms.reduce((n, p) => n + p.length, 0);
    assert.ok(Math.abs(info.seconds - total / 48_000) < 1e-9);
    assert.ok(joined.subarray(joined.length - total).equals(Buffer.concat(pcms)), 'samples exactly');
  });

  it('refuses WAV parts of different sample formats, or a non-WAV part', () => {
    const a = wavFromPcm(synthesizePcm('a'));
    const b = Buffer.from(a);
    b.writeUInt32LE(16_000, 24); // sample rate in fmt
    assert.throws(
      () => joinWav([a, b]),
      (e: Error) => e instanceof AudioJoinError && /part 2 has a different sample format/.test(e.message),
    );
    assert.throws(() => joinWav([a, Buffer.from('not audio at all')]), /part 2 is not a WAV/);
  });

  it('joins MP3s keeping only the first ID3 tag, and raw PCM byte for byte', () => {
    const a = mp3('first part', 1);
    const b = mp3('second', 2);
    const joined = joinMp3([a, b]);
    const read = readMp3Text(joined);
    assert.equal(read?.text, 'first part');
    assert.ok(Math.abs((read?.seconds ?? 0) - (readMp3Text(a)!.seconds + readMp3Text(b)!.seconds)) < 0.03);
    assert.equal(joined.subarray(10).includes(Buffer.from('ID3')), false);
    const p = [synthesizePcm('x y'), synthesizePcm('z')];
    assert.ok(joinAudio('pcm', p)!.equals(Buffer.concat(p)));
    // ADTS frames (AAC) are self-delimiting: the parts follow each other byte for byte.
    const adts = [Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x01, 0x7f, 0xfc, 1]), Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x01, 0x7f, 0xfc, 2])];
    assert.ok(joinAudio('aac', adts)!.equals(Buffer.concat(adts)));
  });

  it('will not fake a join of Ogg or FLAC streams', () => {
    assert.equal(joinAudio('flac', [Buffer.from('fLaC1'), Buffer.from('fLaC2')]), undefined);
    assert.equal(joinAudio('opus', [Buffer.from('OggS1'), Buffer.from('OggS2')]), undefined);
    assert.deepEqual(joinAudio('flac', [Buffer.from('fLaC1')]), Buffer.from('fLaC1'));
  });

  it('wraps raw PCM in a playable WAV header', () => {
    const pcm = synthesizePcm('hello world');
    const info = readWav(pcmToWav(pcm));
    assert.equal(info?.sampleRate, 24_000);
    assert.equal(info?.bitsPerSample, 16);
    assert.ok(Math.abs((info?.seconds ?? 0) - pcm.length / 48_000) < 1e-9);
  });
});

describe('file names for generated media', () => {
  it('slugs a prompt into a readable name, cut at a word end', () => {
    assert.equal(slug('A red fox at dawn!'), 'a-red-fox-at-dawn');
    assert.equal(slug('This is sentence number 0 of a long text', 32), 'this-is-sentence-number-0-of-a');
    assert.equal(slug('Überraschung — café'), 'uberraschung-cafe');
    assert.equal(slug('!!!'), 'image');
    assert.equal(slug('abcdefghijklmnop', 8), 'abcdefgh', 'one long word is cut where it must be');
  });
});
