/** The spec's image input rules: PNG, JPEG or WEBP (GIF unsupported), at most 20 MB per image. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

/** What an image's first bytes say it is (magic numbers), whatever its label or file name. */
export type SniffedImage = ImageMediaType | 'image/gif' | 'image/bmp' | 'image/tiff' | 'image/heic' | 'image/avif' | undefined;

export function sniffImageType(bytes: Uint8Array): SniffedImage {
  const at = (i: number, ...v: number[]) => v.every((b, k) => bytes[i + k] === b);
  const ascii = (i: number, text: string) => at(i, ...Array.from(text, (c) => c.charCodeAt(0)));
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'BM')) return 'image/bmp';
  if (at(0, 0x49, 0x49, 0x2a, 0x00) || at(0, 0x4d, 0x4d, 0x00, 0x2a)) return 'image/tiff';
  if (ascii(4, 'ftypheic') || ascii(4, 'ftypheix') || ascii(4, 'ftypmif1')) return 'image/heic';
  if (ascii(4, 'ftypavif')) return 'image/avif';
  return undefined;
}

/** The first bytes of a base64 body (enough for any magic number). */
function headOfBase64(b64: string): Uint8Array {
  const chunk = b64.replace(/\s+/g, '').slice(0, 32);
  const clean = chunk.slice(0, chunk.length - (chunk.length % 4));
  const bin = atob(clean);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/**
 * Checks that the bytes are a supported image and agree with the declared type: GIF bytes
 * labelled image/png are refused, before anything is sent.
 */
export function checkImageBytes(declared: string, bytes: Uint8Array): string | undefined {
  const actual = sniffImageType(bytes);
  if (actual === 'image/gif')
    return `the data is a GIF image${declared !== 'image/gif' ? ` (labelled ${declared})` : ''}; GIF is not supported, use PNG, JPEG or WEBP`;
  if (!actual) return `the data is not a PNG, JPEG or WEBP image (labelled ${declared}, but its bytes are not an image of that type)`;
  if (!(IMAGE_MEDIA_TYPES as readonly string[]).includes(actual)) return `the data is a ${actual.slice(6).toUpperCase()} image; use PNG, JPEG or WEBP`;
  if (actual !== declared.toLowerCase()) return `the data is a ${actual.slice(6).toUpperCase()} image but is labelled ${declared}; label it ${actual}`;
  return undefined;
}

function bytesRule(mediaType: string, b64: string): string | undefined {
  let head: Uint8Array;
  try {
    head = headOfBase64(b64);
  } catch {
    return 'the image data is not valid base64';
  }
  return checkImageBytes(mediaType, head);
}

/** Decoded size of a base64 body without decoding it. */
export function base64DecodedBytes(b64: string): number {
  let len = b64.length;
  while (len > 0 && (b64.charCodeAt(len - 1) === 61 /* = */ || b64.charCodeAt(len - 1) <= 32)) len--;
  return Math.floor((len * 3) / 4);
}

function sizeRule(bytes: number): string | undefined {
  if (bytes > MAX_IMAGE_BYTES) {
    return `image is ${(bytes / 1024 / 1024).toFixed(1)} MB; the limit is 20 MB per image`;
  }
  return undefined;
}

export function checkMediaType(mediaType: string): string | undefined {
  const t = mediaType.toLowerCase();
  if (t === 'image/gif') return 'GIF images are not supported; use PNG, JPEG or WEBP';
  if (!(IMAGE_MEDIA_TYPES as readonly string[]).includes(t)) return `unsupported image type "${mediaType}"; use PNG, JPEG or WEBP`;
  return undefined;
}

/** Checks an image reference: a data URI (type and size) or a public http(s) URL. */
export function checkImageUrl(url: string): string | undefined {
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const header = comma === -1 ? '' : url.slice(5, comma);
    const match = /^([^;,]+)(;[^,]*)?$/.exec(header);
    if (!match || !/;base64$/i.test(header)) return 'data URI must look like data:image/png;base64,<data>';
    const data = url.slice(comma + 1);
    return checkMediaType(match[1]) ?? sizeRule(base64DecodedBytes(data)) ?? bytesRule(match[1], data);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be a public http(s) URL or a data URI with a base64 body';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be a public http(s) URL or a data URI with a base64 body';
  if (/\.gif$/i.test(parsed.pathname)) return 'GIF images are not supported; use PNG, JPEG or WEBP';
  return undefined;
}

export function checkBase64Image(mediaType: string, data: string): string | undefined {
  return checkMediaType(mediaType) ?? sizeRule(base64DecodedBytes(data)) ?? bytesRule(mediaType, data);
}
