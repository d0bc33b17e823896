import { inflateSync } from 'node:zlib';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface DecodedPng {
  width: number;
  height: number;
  /** Luma per pixel, 0 to 255. */
  luma: Uint8Array;
  mean: [number, number, number];
}

/** Decodes 8-bit, non-interlaced grey, grey+alpha, RGB and RGBA PNGs; undefined for anything else. */
export function decodePng(buf: Buffer): DecodedPng | undefined {
  if (buf.length < 33 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  let pos = 8;
  let width = 0;
  let height = 0;
  let colorType = 0;
  let depth = 0;
  let interlace = 0;
  const idat: Buffer[] = [];
  while (pos + 8 <= buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      depth = data[8];
      colorType = data[9];
      interlace = data[12];
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  const channels = ({ 0: 1, 4: 2, 2: 3, 6: 4 } as Record<number, number>)[colorType];
  if (!channels || depth !== 8 || interlace !== 0 || width === 0 || height === 0) return undefined;
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(idat));
  } catch {
    return undefined;
  }
  const stride = width * channels;
  if (raw.length < (stride + 1) * height) return undefined;
  const cur = Buffer.alloc(stride);
  const prev = Buffer.alloc(stride);
  const luma = new Uint8Array(width * height);
  const sum = [0, 0, 0];
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      let v = line[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = v & 255;
    }
    for (let x = 0; x < width; x++) {
      const o = x * channels;
      const [r, g, b] = channels >= 3 ? [cur[o], cur[o + 1], cur[o + 2]] : [cur[o], cur[o], cur[o]];
      luma[y * width + x] = (r * 299 + g * 587 + b * 114) / 1000;
      sum[0] += r;
      sum[1] += g;
      sum[2] += b;
    }
    cur.copy(prev);
  }
  const n = width * height;
  return { width, height, luma, mean: [sum[0] / n, sum[1] / n, sum[2] / n] };
}

/** Width and height from a PNG header without decoding it. */
export function pngSize(buf: Buffer): { width: number; height: number } | undefined {
  if (buf.length < 24 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** Share of the black (near-black) pixels: the part of an edit mask that will be edited. */
export function blackShare(img: DecodedPng, threshold = 64): number {
  let dark = 0;
  for (const v of img.luma) if (v < threshold) dark++;
  return dark / img.luma.length;
}
