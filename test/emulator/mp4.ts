/**
 * A playable MP4 (ISO BMFF, fast start: `ftyp`, `moov`, `mdat`) with one real H.264 video track:
 * a key frame of a short real encoding (see `encoded-samples.ts`) shown once a second for the
 * requested length. The track's display size is the size asked for; portrait sizes use the
 * portrait frame. Opens and plays in browsers and ffmpeg.
 */
import { H264 } from './encoded-samples';

function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length + 8, 0);
  head.write(type, 4, 'ascii');
  return Buffer.concat([head, body]);
}

function fullBox(type: string, version: number, flags: number, ...parts: Buffer[]): Buffer {
  const vf = Buffer.alloc(4);
  vf.writeUInt32BE(((version & 0xff) << 24) | (flags & 0xffffff), 0);
  return box(type, vf, ...parts);
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

function u16(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeUInt16BE(v & 0xffff, i * 2));
  return b;
}

const MATRIX = u32(0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000);
const TIMESCALE = 1000;

/** `1280x720`, `720x1280`, `720p`, `1080p`, `4k` as width and height (landscape for the p/k names). */
export function videoSize(size: string | undefined): { width: number; height: number } {
  const wh = /^(\d+)x(\d+)$/.exec(size ?? '');
  if (wh) return { width: Number(wh[1]), height: Number(wh[2]) };
  if (size === '1080p') return { width: 1920, height: 1080 };
  if (size === '4k') return { width: 3840, height: 2160 };
  return { width: 1280, height: 720 };
}

export function mp4(seconds: number, label: string, size?: string): Buffer {
  const display = videoSize(size);
  const frame = display.height > display.width ? H264.portrait : H264.landscape;
  const sps = Buffer.from(frame.sps, 'base64');
  const pps = Buffer.from(frame.pps, 'base64');
  const idr = Buffer.from(frame.idr, 'base64');
  const sample = Buffer.concat([u32(idr.length), idr]);
  const total = Math.max(1, Math.round(seconds * TIMESCALE));
  const count = Math.max(1, Math.ceil(total / TIMESCALE));
  const last = total - (count - 1) * TIMESCALE;

  const avcC = box('avcC', Buffer.from([1, sps[1], sps[2], sps[3], 0xff, 0xe1]), u16(sps.length), sps, Buffer.from([1]), u16(pps.length), pps);
  const compressor = Buffer.alloc(32);
  const avc1 = box(
    'avc1',
    Buffer.alloc(6),
    u16(1), // data reference index
    Buffer.alloc(16), // pre-defined and reserved
    u16(frame.width, frame.height),
    u32(0x00480000, 0x00480000, 0), // 72 dpi, reserved
    u16(1), // one frame per sample
    compressor,
    u16(0x0018, 0xffff), // depth 24, pre-defined -1
    avcC,
  );
  const stts = fullBox(
    'stts',
    0,
    0,
    ...(last === TIMESCALE ? [u32(1, count, TIMESCALE)] : count > 1 ? [u32(2, count - 1, TIMESCALE, 1, last)] : [u32(1, 1, last)]),
  );
  const stsc = fullBox('stsc', 0, 0, u32(1, 1, count, 1));
  const stsz = fullBox('stsz', 0, 0, u32(0, count), ...Array.from({ length: count }, () => u32(sample.length)));
  const build = (mdatOffset: number) => {
    const stbl = box('stbl', fullBox('stsd', 0, 0, u32(1), avc1), stts, stsc, stsz, fullBox('stco', 0, 0, u32(1, mdatOffset)));
    const minf = box('minf', fullBox('vmhd', 0, 1, u16(0, 0, 0, 0)), box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))), stbl);
    const hdlr = fullBox('hdlr', 0, 0, u32(0), Buffer.from('vide'), u32(0, 0, 0), Buffer.from('VideoHandler\0'));
    const mdia = box('mdia', fullBox('mdhd', 0, 0, u32(0, 0, TIMESCALE, total), u16(0x55c4, 0)), hdlr, minf);
    const tkhd = fullBox('tkhd', 0, 3, u32(0, 0, 1, 0, total), u32(0, 0), u16(0, 0, 0, 0), MATRIX, u32(display.width << 16, display.height << 16));
    const mvhd = fullBox('mvhd', 0, 0, u32(0, 0, TIMESCALE, total, 0x00010000), u16(0x0100, 0), u32(0, 0), MATRIX, Buffer.alloc(24), u32(2));
    const note = Buffer.from(label.slice(0, 200));
    const udta = box('udta', box('\u00a9cmt', u16(note.length, 0x55c4), note));
    return box('moov', mvhd, box('trak', tkhd, mdia), udta);
  };
  const ftyp = box('ftyp', Buffer.from('isom'), u32(0x200), Buffer.from('isomiso2avc1mp41'));
  const probe = build(0);
  const moov = build(ftyp.length + probe.length + 8);
  return Buffer.concat([ftyp, moov, box('mdat', ...Array.from({ length: count }, () => sample))]);
}
