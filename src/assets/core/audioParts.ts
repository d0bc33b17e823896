/**
 * Long text to speech: splitting text into request-sized parts at sentence boundaries, and joining
 * the audio parts into one file. Pure functions (no vscode), tested in Node.
 */

import { MAX_SPEECH_INPUT } from '../../common/mediaLimits';
import type { SpeechFormat } from '../../gateway';

const SENTENCE_END = /(?<=[.!?…。！？]["'”’)\]]*)\s+|\n\s*\n|(?<=\n)/g;

function splitAt(text: string, re: RegExp): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    const end = m.index + m[0].length;
    if (end > last) {
      out.push(text.slice(last, end));
      last = end;
    }
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/**
 * Splits text into parts of at most `max` characters, cutting after sentence ends (then at
 * spaces, then anywhere, for sentences or words longer than a part). Joining the parts gives the
 * text back, apart from blank stretches that would make a part of only whitespace.
 */
export function splitForSpeech(text: string, max = MAX_SPEECH_INPUT): string[] {
  if (max < 1) throw new RangeError('max must be positive');
  const pieces: string[] = [];
  for (const sentence of splitAt(text, SENTENCE_END)) {
    if (sentence.length <= max) pieces.push(sentence);
    else
      for (const word of splitAt(sentence, /\s+/g)) {
        if (word.length <= max) pieces.push(word);
        else for (let i = 0; i < word.length; i += max) pieces.push(word.slice(i, i + max));
      }
  }
  const parts: string[] = [];
  let current = '';
  for (const p of pieces) {
    if (current.length + p.length > max) {
      parts.push(current);
      current = '';
    }
    current += p;
  }
  if (current) parts.push(current);
  // A whitespace-only part (possible only for text that starts with, or is, a long blank run)
  // would be refused by the gateway, and says nothing.
  return parts.filter((p) => p.trim());
}

export class AudioJoinError extends Error {}

interface WavInfo {
  fmt: Buffer;
  data: Buffer;
}

function readWav(buf: Buffer, index: number): WavInfo {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new AudioJoinError(`part ${index + 1} is not a WAV file`);
  }
  let fmt: Buffer | undefined;
  let data: Buffer | undefined;
  for (let at = 12; at + 8 <= buf.length;) {
    const id = buf.toString('ascii', at, at + 4);
    let size = buf.readUInt32LE(at + 4);
    // Streamed WAVs may announce an unknown (0 or 0xFFFFFFFF) data size: the data runs to the end.
    if (id === 'data' && (size === 0 || size === 0xffffffff || at + 8 + size > buf.length)) size = buf.length - at - 8;
    const body = buf.subarray(at + 8, at + 8 + size);
    if (id === 'fmt ') fmt = body;
    else if (id === 'data') data = body;
    at += 8 + size + (size % 2);
  }
  if (!fmt || !data) throw new AudioJoinError(`part ${index + 1} has no ${fmt ? 'data' : 'fmt '} chunk`);
  return { fmt, data };
}

/** One WAV from several with the same sample format: the samples end to end, nothing lost. */
export function joinWav(parts: Buffer[]): Buffer {
  if (parts.length === 1) return parts[0];
  const wavs = parts.map(readWav);
  const fmt = wavs[0].fmt;
  wavs.forEach((w, i) => {
    if (!w.fmt.equals(fmt)) throw new AudioJoinError(`part ${i + 1} has a different sample format from part 1`);
  });
  const dataSize = wavs.reduce((n, w) => n + w.data.length, 0);
  const header = Buffer.alloc(12 + 8 + fmt.length + (fmt.length % 2) + 8);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(header.length - 8 + dataSize + (dataSize % 2), 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(fmt.length, 16);
  fmt.copy(header, 20);
  const dataAt = 20 + fmt.length + (fmt.length % 2);
  header.write('data', dataAt, 'ascii');
  header.writeUInt32LE(dataSize, dataAt + 4);
  return Buffer.concat([header, ...wavs.map((w) => w.data), Buffer.alloc(dataSize % 2)]);
}

/** Length of a leading ID3v2 tag, 0 when there is none. */
function id3Length(buf: Buffer): number {
  if (buf.length < 10 || buf.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = ((buf[6] & 0x7f) << 21) | ((buf[7] & 0x7f) << 14) | ((buf[8] & 0x7f) << 7) | (buf[9] & 0x7f);
  const footer = buf[5] & 0x10 ? 10 : 0;
  return 10 + size + footer;
}

/** MP3 frames concatenate; only the first part keeps its ID3 tag. */
export function joinMp3(parts: Buffer[]): Buffer {
  return Buffer.concat(parts.map((p, i) => (i === 0 ? p : p.subarray(id3Length(p)))));
}

/**
 * Joins the parts of one speech into one file where the format allows it exactly: WAV (one header,
 * samples concatenated), PCM (raw samples), MP3 and AAC (ADTS frames are self-delimiting).
 * Returns undefined for Opus (Ogg) and FLAC, whose streams cannot be concatenated: the caller
 * saves those as numbered parts.
 */
export function canJoin(format: SpeechFormat): boolean {
  return format !== 'opus' && format !== 'flac';
}

export function joinAudio(format: SpeechFormat, parts: Buffer[]): Buffer | undefined {
  switch (format) {
    case 'wav':
      return joinWav(parts);
    case 'pcm':
    case 'aac':
      return Buffer.concat(parts);
    case 'mp3':
      return joinMp3(parts);
    default:
      return parts.length === 1 ? parts[0] : undefined;
  }
}

/** A WAV header around raw PCM (the gateway's pcm is 24 kHz, 16-bit, mono), so a browser can play it. */
export function pcmToWav(pcm: Buffer, sampleRate = 24_000, channels = 1, bits = 16): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE((sampleRate * channels * bits) / 8, 28);
  header.writeUInt16LE((channels * bits) / 8, 32);
  header.writeUInt16LE(bits, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
