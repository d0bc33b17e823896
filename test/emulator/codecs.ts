/**
 * Real encodings for the emulator's speech answers beyond WAV, PCM and MP3: AAC in ADTS frames,
 * Opus in an Ogg stream, and FLAC. AAC and Opus reuse frames of a short real encoding (see
 * `encoded-samples.ts`), as many as the speech lasts; FLAC is encoded here from the speech PCM
 * (verbatim subframes: lossless and simple). Every result plays in a real decoder.
 */
import { AAC_FRAMES, OPUS_HEAD, OPUS_PACKETS } from './encoded-samples';

const aacFrames = AAC_FRAMES.map((f) => Buffer.from(f, 'base64'));
const opusHead = Buffer.from(OPUS_HEAD, 'base64');
const opusPackets = OPUS_PACKETS.map((p) => Buffer.from(p, 'base64'));

/** AAC-LC ADTS at 24 kHz: frames of 1,024 samples, repeated to last `seconds`. */
export function aac(seconds: number): Buffer {
  const count = Math.max(1, Math.round((seconds * 24_000) / 1024));
  return Buffer.concat(Array.from({ length: count }, (_, i) => aacFrames[i % aacFrames.length]));
}

// ---------- Ogg ----------

const OGG_CRC = Array.from({ length: 256 }, (_, n) => {
  let r = n << 24;
  for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

function oggCrc(buf: Buffer): number {
  let crc = 0;
  for (const b of buf) crc = ((crc << 8) ^ OGG_CRC[((crc >>> 24) ^ b) & 0xff]) >>> 0;
  return crc >>> 0;
}

function oggPage(packets: Buffer[], granule: bigint, serial: number, sequence: number, flags: number): Buffer {
  const lacing: number[] = [];
  for (const p of packets) {
    let n = p.length;
    while (n >= 255) {
      lacing.push(255);
      n -= 255;
    }
    lacing.push(n);
  }
  const head = Buffer.alloc(27 + lacing.length);
  head.write('OggS', 0, 'latin1');
  head[5] = flags;
  head.writeBigUInt64LE(granule, 6);
  head.writeUInt32LE(serial, 14);
  head.writeUInt32LE(sequence, 18);
  head[26] = lacing.length;
  Buffer.from(lacing).copy(head, 27);
  const page = Buffer.concat([head, ...packets]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

/** Opus in Ogg (RFC 7845): header pages, then 20 ms packets for `seconds`, granules at 48 kHz. */
export function oggOpus(seconds: number, comment = 'model-gateway emulator'): Buffer {
  const serial = 0x6d67; // "mg"
  const vendor = Buffer.from('model-gateway-emulator');
  const note = Buffer.from(comment.slice(0, 200));
  const tags = Buffer.concat([Buffer.from('OpusTags'), u32le(vendor.length), vendor, u32le(1), u32le(note.length + 8), Buffer.from('COMMENT='), note]);
  const pages = [oggPage([opusHead], 0n, serial, 0, 0x02), oggPage([tags], 0n, serial, 1, 0)];
  const count = Math.max(1, Math.round(seconds * 50));
  const preSkip = BigInt(opusHead.readUInt16LE(10));
  let sequence = 2;
  for (let start = 0; start < count; start += 50) {
    const n = Math.min(50, count - start);
    const packets = Array.from({ length: n }, (_, i) => opusPackets[(start + i) % opusPackets.length]);
    const granule = preSkip + BigInt((start + n) * 960);
    pages.push(oggPage(packets, granule, serial, sequence++, start + n >= count ? 0x04 : 0));
  }
  return Buffer.concat(pages);
}

function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n, 0);
  return b;
}

// ---------- FLAC ----------

const CRC8 = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 0x80 ? ((c << 1) ^ 0x07) & 0xff : (c << 1) & 0xff;
  return c;
});
const CRC16 = Array.from({ length: 256 }, (_, n) => {
  let c = n << 8;
  for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x8005) & 0xffff : (c << 1) & 0xffff;
  return c;
});

class Bits {
  private readonly bytes: number[] = [];
  private acc = 0;
  private n = 0;
  put(value: number, width: number): void {
    for (let i = width - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >>> i) & 1);
      if (++this.n === 8) {
        this.bytes.push(this.acc);
        this.acc = 0;
        this.n = 0;
      }
    }
  }
  align(): void {
    if (this.n > 0) this.put(0, 8 - this.n);
  }
  buffer(): Buffer {
    return Buffer.from(this.bytes);
  }
}

/** UTF-8-style coded frame number (FLAC's variable-length integer). */
function codedNumber(n: number): number[] {
  if (n < 0x80) return [n];
  if (n < 0x800) return [0xc0 | (n >> 6), 0x80 | (n & 0x3f)];
  if (n < 0x10000) return [0xe0 | (n >> 12), 0x80 | ((n >> 6) & 0x3f), 0x80 | (n & 0x3f)];
  return [0xf0 | (n >> 18), 0x80 | ((n >> 12) & 0x3f), 0x80 | ((n >> 6) & 0x3f), 0x80 | (n & 0x3f)];
}

/** FLAC of 16-bit mono little-endian PCM at `rate` Hz, with the text as a Vorbis comment. */
export function flac(pcm: Buffer, rate: number, text: string): Buffer {
  const samples = Math.floor(pcm.length / 2);
  const blockSize = 4096;
  const streamInfo = new Bits();
  streamInfo.put(blockSize, 16);
  streamInfo.put(blockSize, 16);
  streamInfo.put(0, 24); // min frame size unknown
  streamInfo.put(0, 24); // max frame size unknown
  streamInfo.put(rate, 20);
  streamInfo.put(0, 3); // channels - 1
  streamInfo.put(15, 5); // bits per sample - 1
  streamInfo.put(Math.floor(samples / 2 ** 32), 4);
  streamInfo.put(samples >>> 0, 32);
  const info = Buffer.concat([streamInfo.buffer(), Buffer.alloc(16)]); // MD5 0: not computed
  const vendor = Buffer.from('model-gateway-emulator');
  const note = Buffer.from(`GATEWAY_TEXT=${text.slice(0, 2000)}`);
  const comment = Buffer.concat([u32le(vendor.length), vendor, u32le(1), u32le(note.length), note]);
  const metaHeader = (last: boolean, type: number, length: number) =>
    Buffer.from([(last ? 0x80 : 0) | type, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff]);
  const parts = [Buffer.from('fLaC'), metaHeader(false, 0, info.length), info, metaHeader(true, 4, comment.length), comment];
  // Sample rate code (FLAC format table); 0 means "read it from STREAMINFO".
  const rateCode = ({ 16_000: 5, 22_050: 6, 24_000: 7, 32_000: 8, 44_100: 9, 48_000: 10 } as Record<number, number>)[rate] ?? 0;
  for (let frame = 0, start = 0; start < samples; frame++, start += blockSize) {
    const n = Math.min(blockSize, samples - start);
    const head = new Bits();
    head.put(0x3ffe, 14); // sync
    head.put(0, 1);
    head.put(0, 1); // fixed block size
    head.put(7, 4); // block size: 16-bit (n-1) follows
    head.put(rateCode, 4);
    head.put(0, 4); // mono
    head.put(4, 3); // 16 bits per sample
    head.put(0, 1);
    const headBytes = Buffer.concat([head.buffer(), Buffer.from(codedNumber(frame)), Buffer.from([((n - 1) >> 8) & 0xff, (n - 1) & 0xff])]);
    let crc8 = 0;
    for (const b of headBytes) crc8 = CRC8[crc8 ^ b];
    const body = new Bits();
    body.put(0, 1);
    body.put(1, 6); // verbatim subframe
    body.put(0, 1); // no wasted bits
    for (let i = 0; i < n; i++) body.put(pcm.readInt16LE((start + i) * 2) & 0xffff, 16);
    body.align();
    const frameBytes = Buffer.concat([headBytes, Buffer.from([crc8]), body.buffer()]);
    let crc16 = 0;
    for (const b of frameBytes) crc16 = ((crc16 << 8) & 0xffff) ^ CRC16[((crc16 >> 8) ^ b) & 0xff];
    parts.push(frameBytes, Buffer.from([crc16 >> 8, crc16 & 0xff]));
  }
  return Buffer.concat(parts);
}
