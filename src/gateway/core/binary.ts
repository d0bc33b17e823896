import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from './errors';
import { mapTransportError, type RawResponse } from './transport';

/** The most a download may hold, and what sets that limit (named in the error). */
export interface DownloadLimit {
  maxBytes: number;
  /** The setting (or option) that sets `maxBytes`: the error tells the person where to raise it. */
  setting?: string;
}

const megabytes = (n: number) => String(Number((n / (1024 * 1024)).toPrecision(3)));

/** A download past its limit: stopped where it was found out (its Content-Length, or the byte past the limit); nothing is kept. */
export class DownloadTooLargeError extends GatewayError {
  override readonly name: string = 'DownloadTooLargeError';
  constructor(
    what: string,
    readonly limit: DownloadLimit,
    /** The size the answer declared, when it did. */
    readonly declaredBytes?: number,
  ) {
    const size = declaredBytes !== undefined ? `${megabytes(declaredBytes)} MB` : `more than ${megabytes(limit.maxBytes)} MB`;
    const where = limit.setting ? ` (raise ${limit.setting} to allow it)` : '';
    super(`${what} stopped: it is ${size}, over the limit of ${megabytes(limit.maxBytes)} MB${where}. Nothing was saved.`, { type: 'download_too_large' });
  }
}

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

  /**
   * The body, once. With a limit, an answer whose Content-Length is over it is refused here (its
   * connection closed, nothing read), and `counted` stops the stream at the first byte past it.
   */
  private claim(limit: DownloadLimit | undefined) {
    if (this.used) throw new Error(`${this.what}: the body was already read.`);
    this.used = true;
    const declared = this.contentLength;
    if (limit && declared !== undefined && declared > limit.maxBytes) {
      // Closes the connection; the abort error it raises on the body has no one else to hear it.
      this.res.body.once('error', () => undefined).destroy();
      throw new DownloadTooLargeError(this.what, limit, declared);
    }
    let bytes = 0;
    const what = this.what;
    async function* counted(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
      for await (const chunk of source) {
        bytes += chunk.length;
        if (limit && bytes > limit.maxBytes) throw new DownloadTooLargeError(what, limit);
        yield chunk;
      }
    }
    return { body: this.res.body, counted, bytes: () => bytes };
  }

  /** The whole answer in memory; past `limit`, a `DownloadTooLargeError`. */
  async buffer(limit?: DownloadLimit): Promise<Buffer> {
    const { body, counted } = this.claim(limit);
    try {
      if (!limit) return Buffer.from(await body.arrayBuffer());
      const chunks: Buffer[] = [];
      await pipeline(body, counted, async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) chunks.push(chunk);
      });
      return Buffer.concat(chunks);
    } catch (err) {
      throw mapTransportError(err, this.res.endedBy(), this.what);
    }
  }

  async pipeTo(writable: NodeJS.WritableStream, limit?: DownloadLimit): Promise<void> {
    const { body, counted } = this.claim(limit);
    try {
      await pipeline(body, counted, writable);
    } catch (err) {
      throw mapTransportError(err, this.res.endedBy(), this.what);
    }
  }

  /**
   * Streams to `path` through a temporary file beside it, renamed into place once whole; returns
   * the bytes written. Past `limit` (or on any failure) the temporary file is removed: nothing is left.
   */
  async toFile(path: string, limit?: DownloadLimit): Promise<number> {
    const tmp = `${path}.${randomBytes(4).toString('hex')}.part`;
    const { body, counted, bytes } = this.claim(limit);
    try {
      await pipeline(body, counted, createWriteStream(tmp, { flags: 'wx' }));
      await rename(tmp, path);
      return bytes();
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw mapTransportError(err, this.res.endedBy(), this.what);
    }
  }
}
