import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { mapTransportError, type RawResponse } from './transport';

/**
 * A binary answer (audio, video, images), read once: as a Buffer, piped to a writable, or
 * written to a file atomically (a temporary file renamed into place, so a failure midway leaves
 * no truncated file behind).
 */
export class BinaryResponse {
  private used = false;

  constructor(
    private readonly res: RawResponse,
    private readonly what: string,
  ) {}

  get contentType(): string | undefined {
    const v = this.res.headers['content-type'];
    return Array.isArray(v) ? v[0] : v;
  }

  get contentLength(): number | undefined {
    const v = Number(this.res.headers['content-length']);
    return Number.isFinite(v) ? v : undefined;
  }

  private claim() {
    if (this.used) throw new Error(`${this.what}: the body was already read.`);
    this.used = true;
    return this.res.body;
  }

  async buffer(): Promise<Buffer> {
    const body = this.claim();
    try {
      return Buffer.from(await body.arrayBuffer());
    } catch (err) {
      throw mapTransportError(err, this.res.endedBy(), this.what);
    }
  }

  async pipeTo(writable: NodeJS.WritableStream): Promise<void> {
    const body = this.claim();
    try {
      await pipeline(body, writable);
    } catch (err) {
      throw mapTransportError(err, this.res.endedBy(), this.what);
    }
  }

  /** Streams to `path` through a temporary file; returns the bytes written. */
  async toFile(path: string): Promise<number> {
    const tmp = `${path}.${randomBytes(4).toString('hex')}.part`;
    let bytes = 0;
    const body = this.claim();
    body.on('data', (c: Buffer) => (bytes += c.length));
    try {
      await pipeline(body, createWriteStream(tmp));
      await rename(tmp, path);
      return bytes;
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw mapTransportError(err, this.res.endedBy(), this.what);
    }
  }
}
