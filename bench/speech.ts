/**
 * Long text to speech, the parts the extension does itself: splitting a long text at sentence
 * ends into request-sized parts, and joining the spoken WAV parts into one file. The audio comes
 * from the emulator's synthesiser (real 24 kHz PCM), so the join works on realistic sizes.
 */
import { joinWav, splitForSpeech } from '../src/assets/core/audioParts';
import { synthesizePcm, wavFromPcm } from '../test/emulator/media';

export interface SpeechBenchResult {
  characters: number;
  parts: number;
  splitMs: number;
  audioSeconds: number;
  wavBytes: number;
  joinMs: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export function runSpeechBench(): SpeechBenchResult {
  const sentences = [
    'The gateway speaks long chapters in parts.',
    'Each part stays under the limit!',
    'Does the join lose a sample?',
    'No; the samples follow each other exactly.',
  ];
  let text = '';
  for (let i = 0; text.length < 100_000; i++) text += `${sentences[i % sentences.length]} ${i % 7 === 0 ? '\n\n' : ''}`;
  const splits: number[] = [];
  let parts: string[] = [];
  for (let r = 0; r < 15; r++) {
    const t = performance.now();
    parts = splitForSpeech(text);
    splits.push(performance.now() - t);
  }
  const wavs = parts.map((p) => wavFromPcm(synthesizePcm(p)));
  const joins: number[] = [];
  let joined: Buffer = Buffer.alloc(0);
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    joined = joinWav(wavs);
    joins.push(performance.now() - t);
  }
  return {
    characters: text.length,
    parts: parts.length,
    splitMs: median(splits),
    audioSeconds: (joined.length - 44) / 48_000,
    wavBytes: joined.length,
    joinMs: median(joins),
  };
}
