/**
 * A `multipart/form-data` body of text fields and files, as undici's FormData would send it, but
 * without pulling undici's fetch implementation into the bundle (about 280 KB). Files are Blobs
 * (`fs.openAsBlob` streams them from disk), so the body can be produced again for a retry.
 */
import { randomBytes } from 'node:crypto';

type Part = { name: string; value: string } | { name: string; blob: Blob; filename: string };

/** WHATWG's escaping of names and file names in a Content-Disposition header. */
function escape(s: string): string {
  return s.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

export class Multipart {
  private readonly parts: Part[] = [];
  readonly boundary = `----ModelGatewayBoundary${randomBytes(12).toString('hex')}`;

  append(name: string, value: string | Blob, filename?: string): void {
    if (typeof value === 'string') this.parts.push({ name, value });
    else this.parts.push({ name, blob: value, filename: filename ?? 'blob' });
  }

  /** The fields' names in order (tests and error messages). */
  names(): string[] {
    return this.parts.map((p) => p.name);
  }

  get contentType(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }

  private head(p: Part): Buffer {
    const disposition = `Content-Disposition: form-data; name="${escape(p.name)}"${'blob' in p ? `; filename="${escape(p.filename)}"` : ''}`;
    const type = 'blob' in p ? `\r\nContent-Type: ${p.blob.type || 'application/octet-stream'}` : '';
    return Buffer.from(`--${this.boundary}\r\n${disposition}${type}\r\n\r\n`);
  }

  /** The body's length in bytes (sent as Content-Length, as servers that buffer uploads want). */
  get length(): number {
    let n = 0;
    for (const p of this.parts) n += this.head(p).length + ('blob' in p ? p.blob.size : Buffer.byteLength(p.value)) + 2;
    return n + Buffer.byteLength(`--${this.boundary}--\r\n`);
  }

  /** The body, produced afresh on each call (each attempt of a request reads it anew). */
  async *chunks(): AsyncGenerator<Uint8Array> {
    const CRLF = Buffer.from('\r\n');
    for (const p of this.parts) {
      yield this.head(p);
      if ('blob' in p) {
        for await (const chunk of p.blob.stream()) yield chunk as Uint8Array;
      } else yield Buffer.from(p.value);
      yield CRLF;
    }
    yield Buffer.from(`--${this.boundary}--\r\n`);
  }
}
