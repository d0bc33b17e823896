/** The spec's image input rules: PNG, JPEG or WEBP (GIF unsupported), at most 20 MB per image. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

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
    return checkMediaType(match[1]) ?? sizeRule(base64DecodedBytes(url.slice(comma + 1)));
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
  return checkMediaType(mediaType) ?? sizeRule(base64DecodedBytes(data));
}
