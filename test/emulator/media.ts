import { deflateSync } from 'node:zlib';

/**
 * Real media files for the emulator's artefacts. Speech is real audio (a tone per word) whose
 * length follows the text; the text also travels inside the file (a `gwtx` RIFF chunk in WAV, an
 * ID3 TXXX frame in MP3) so the emulator's "recogniser" can give back what its synthesiser said.
 */

export const SAMPLE_RATE = 24_000;
const TEXT_CHUNK = 'gwtx';

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Seconds of speech for a text: about 15 characters a second at speed 1. */
export function speechSeconds(text: string, speed = 1): number {
  return Math.max(0.5, text.length / 15 / speed);
}

/** 16-bit mono PCM at 24 kHz: a short tone per word, silence between words. */
export function synthesizePcm(text: string, speed = 1): Buffer {
  const total = Math.round(speechSeconds(text, speed) * SAMPLE_RATE);
  const pcm = Buffer.alloc(total * 2);
  const words = text.split(/\s+/).filter(Boolean);
  const totalChars = Math.max(
    1,
    words.reduce((n, w) => n + w.length + 1, 0),
  );
  let at = 0;
  for (const w of words) {
    const span = Math.round(((w.length + 1) / totalChars) * total);
    const toneLen = Math.round(span * 0.8);
    const freq = 180 + (hash(w) % 400);
    for (let i = 0; i < toneLen && at + i < total; i++) {
      const envelope = Math.min(1, i / 200, (toneLen - i) / 200);
      pcm.writeInt16LE(Math.round(Math.sin((2 * Math.PI * freq * i) / SAMPLE_RATE) * 9000 * envelope), (at + i) * 2);
    }
    at += span;
  }
  return pcm;
}

export function wavFromPcm(pcm: Buffer, text?: string): Buffer {
  const extra = text === undefined ? Buffer.alloc(0) : riffChunk(TEXT_CHUNK, Buffer.from(text, 'utf8'));
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // mono
  fmt.writeUInt32LE(SAMPLE_RATE, 4);
  fmt.writeUInt32LE(SAMPLE_RATE * 2, 8);
  fmt.writeUInt16LE(2, 12);
  fmt.writeUInt16LE(16, 14);
  const body = Buffer.concat([Buffer.from('WAVE'), riffChunk('fmt ', fmt), extra, riffChunk('data', pcm)]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0);
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

function riffChunk(id: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'ascii');
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data, data.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  seconds: number;
  text?: string;
}

export function readWav(buf: Buffer): WavInfo | undefined {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let pos = 12;
  let info: Partial<WavInfo> = {};
  let dataBytes = 0;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('ascii', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    const start = pos + 8;
    if (id === 'fmt ') info = { channels: buf.readUInt16LE(start + 2), sampleRate: buf.readUInt32LE(start + 4), bitsPerSample: buf.readUInt16LE(start + 14) };
    else if (id === TEXT_CHUNK) info.text = buf.toString('utf8', start, start + size);
    else if (id === 'data') dataBytes = Math.min(size, buf.length - start);
    pos = start + size + (size % 2);
  }
  if (!info.sampleRate || !info.channels || !info.bitsPerSample) return undefined;
  return { ...(info as WavInfo), seconds: dataBytes / (info.sampleRate * info.channels * (info.bitsPerSample / 8)) };
}

/** MP3: an ID3v2.3 tag holding the text, then silent MPEG-1 Layer III frames (128 kbps, 44.1 kHz). */
export function mp3(text: string, seconds: number): Buffer {
  const value = Buffer.concat([Buffer.from([3]), Buffer.from('gateway-text\u0000', 'utf8'), Buffer.from(text, 'utf8')]);
  const frame = Buffer.alloc(10);
  frame.write('TXXX', 0, 'ascii');
  frame.writeUInt32BE(value.length, 4);
  const tagBody = Buffer.concat([frame, value]);
  const header = Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, ...synchsafe(tagBody.length)]);
  const frameBytes = 417;
  const frames = Math.max(1, Math.round((seconds * 44_100) / 1152));
  const silent = Buffer.alloc(frameBytes);
  silent.set([0xff, 0xfb, 0x90, 0xc4]);
  return Buffer.concat([header, tagBody, ...Array.from({ length: frames }, () => silent)]);
}

function synchsafe(n: number): number[] {
  return [(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f];
}

export function readMp3Text(buf: Buffer): { text?: string; seconds: number } | undefined {
  if (buf.toString('latin1', 0, 3) !== 'ID3') return undefined;
  const size = ((buf[6] & 0x7f) << 21) | ((buf[7] & 0x7f) << 14) | ((buf[8] & 0x7f) << 7) | (buf[9] & 0x7f);
  let text: string | undefined;
  let pos = 10;
  while (pos + 10 <= 10 + size) {
    const id = buf.toString('ascii', pos, pos + 4);
    const len = buf.readUInt32BE(pos + 4);
    if (id === 'TXXX') {
      const v = buf.subarray(pos + 11, pos + 10 + len).toString('utf8');
      const nul = v.indexOf('\u0000');
      if (v.slice(0, nul) === 'gateway-text') text = v.slice(nul + 1);
    }
    if (len === 0) break;
    pos += 10 + len;
  }
  const frames = Math.floor((buf.length - 10 - size) / 417);
  return { text, seconds: (frames * 1152) / 44_100 };
}

// ---------- MP4 ----------

export { mp4 } from './mp4';

// ---------- PNG ----------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An RGB PNG of the given size: a gradient whose colours follow the seed. */
export function png(width: number, height: number, seed: number, pixel?: (x: number, y: number) => [number, number, number]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const row = width * 3 + 1;
  const raw = Buffer.alloc(row * height);
  const r0 = seed % 256;
  const g0 = (seed >>> 8) % 256;
  const b0 = (seed >>> 16) % 256;
  for (let y = 0; y < height; y++) {
    const base = y * row;
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel ? pixel(x, y) : [(r0 + (x * 255) / width) & 255, (g0 + (y * 255) / height) & 255, b0];
      raw[base + 1 + x * 3] = r;
      raw[base + 2 + x * 3] = g;
      raw[base + 3 + x * 3] = b;
    }
  }
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(raw, { level: 1 })), pngChunk('IEND', Buffer.alloc(0))]);
}

export { decodePng, pngSize, type DecodedPng } from '../../src/assets/core/png';
