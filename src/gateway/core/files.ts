import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { ValidationError } from './errors';

/** A file to upload: a path on disk (streamed, never read whole) or bytes in memory. */
export type Upload = string | { data: Uint8Array; filename: string; contentType?: string };

export interface PreparedUpload {
  blob: Blob;
  filename: string;
  size: number;
}

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp3': 'audio/mpeg',
  '.mpga': 'audio/mpeg',
  '.mpeg': 'audio/mpeg',
  '.mp4': 'video/mp4',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
  '.webm': 'audio/webm',
};

export function contentTypeFor(filename: string): string {
  return TYPES[extname(filename).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Checks an upload's extension and size before anything is sent, naming the field and the limit;
 * returns a Blob that streams from disk when the upload is a path.
 */
export async function prepareUpload(
  field: string,
  upload: Upload,
  rules: { extensions: readonly string[]; maxBytes: number; limitText: string },
): Promise<PreparedUpload> {
  const filename = typeof upload === 'string' ? basename(upload) : upload.filename;
  const ext = extname(filename).slice(1).toLowerCase();
  if (!rules.extensions.includes(ext)) {
    throw new ValidationError([{ path: field, message: `"${filename}" is not one of ${rules.extensions.join(', ')}` }]);
  }
  let size: number;
  let blob: Blob;
  if (typeof upload === 'string') {
    try {
      size = (await stat(upload)).size;
    } catch {
      throw new ValidationError([{ path: field, message: `cannot read "${upload}"` }]);
    }
    if (size > rules.maxBytes) {
      throw new ValidationError([{ path: field, message: `"${filename}" is ${(size / 1024 / 1024).toFixed(1)} MB; the limit is ${rules.limitText}` }]);
    }
    blob = await openAsBlob(upload, { type: contentTypeFor(filename) });
  } else {
    size = upload.data.byteLength;
    if (size > rules.maxBytes) {
      throw new ValidationError([{ path: field, message: `"${filename}" is ${(size / 1024 / 1024).toFixed(1)} MB; the limit is ${rules.limitText}` }]);
    }
    blob = new Blob([upload.data], { type: upload.contentType ?? contentTypeFor(filename) });
  }
  return { blob, filename, size };
}
