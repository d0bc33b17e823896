import type pg from 'pg';

/**
 * `COPY (…) TO STDOUT (FORMAT binary)` through node-postgres, its answer as bytes. node-postgres
 * reads a result's fields as UTF-8 text only, so a binary value had to come as base64 text, which
 * the server encodes (most of PGlite's time per vector) and the client decodes. COPY's data
 * arrives as raw bytes: each value in its type's binary form, with nothing to encode or undo.
 * COPY to the client needs only SELECT on the table, on any PostgreSQL since 8.0.
 */
export function copyOut(client: pg.Client, sql: string, scratch?: CopyScratch, maxBytes = Infinity): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => client.query(new CopyOut(sql, scratch ?? { bytes: Buffer.allocUnsafe(1 << 16) }, maxBytes, resolve, reject)));
}

/**
 * A buffer the answers of one caller's statements are written into, one after another: each
 * answer is a view of it, to be read before that caller's next statement. A newcomer's pull is
 * 200 answers of 1.5 MB, and a new, growing buffer for each kept the host's collector marking
 * the whole heap every half second (array buffers count as memory it must reclaim).
 */
export interface CopyScratch {
  bytes: Buffer;
}

/**
 * A query node-postgres runs for us (its `Submittable`): it sends the statement and hands over
 * every message of the answer. Each chunk is copied at once: it is a view of the connection's
 * read buffer, which the next read may overwrite.
 */
class CopyOut implements pg.Submittable {
  private used = 0;
  private settled = false;
  private tooLarge = false;
  /**
   * Set by node-postgres when the client has a `query_timeout`: its wrapper clears the statement's
   * timer, so it is called once the answer is in. Left uncalled, each statement's timer stayed
   * armed for the whole timeout (a minute), holding the statement (500 hashes, 21 KB of text): a
   * newcomer's pull of 200 statements kept them all, and a larger heap for the collector to mark.
   */
  callback?: (err: Error | null) => void;

  constructor(
    private readonly sql: string,
    private readonly scratch: CopyScratch,
    /** More than this and the answer is refused once it ends (a server that sends more than was asked is not held in memory). */
    private readonly maxBytes: number,
    private readonly resolve: (bytes: Buffer) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  submit(connection: pg.Connection): void {
    (connection as unknown as { query(text: string): void }).query(this.sql);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    const chunk = message.chunk;
    if (this.tooLarge || this.used + chunk.length > this.maxBytes) {
      this.tooLarge = true;
      return;
    }
    if (this.used + chunk.length > this.scratch.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.scratch.bytes.length * 2, this.used + chunk.length));
      this.scratch.bytes.copy(grown, 0, 0, this.used);
      this.scratch.bytes = grown;
    }
    chunk.copy(this.scratch.bytes, this.used);
    this.used += chunk.length;
  }

  /** An error from the server (then ready for the next query), from the connection (then closed) or the client's `query_timeout`. */
  handleError(err: Error): void {
    this.settle(err);
  }

  handleReadyForQuery(): void {
    this.settle(this.tooLarge ? new Error(`the answer was larger than the ${this.maxBytes} bytes the rows asked for can take`) : undefined);
  }

  private settle(err: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.callback?.(err ?? null);
    if (err) this.reject(err);
    else this.resolve(this.scratch.bytes.subarray(0, this.used));
  }

  // The other messages of a statement's answer: none carries anything COPY's caller needs.
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  /** A statement that reads from the client (`COPY … FROM STDIN`) is not what this runs: ended at once, as node-postgres's own queries do. */
  handleCopyInResponse(connection: pg.Connection): void {
    (connection as unknown as { sendCopyFail(message: string): void }).sendCopyFail('not a COPY TO STDOUT');
  }
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * The most bytes a binary COPY answer of `rows` rows can take when field f of each is at most
 * `fieldBytes[f]` bytes: the header (signature, flags, an empty extension), per row its field
 * count and each field's length and bytes, and the trailer.
 */
export function binaryCopySize(rows: number, fieldBytes: readonly number[]): number {
  const row = 2 + fieldBytes.reduce((sum, bytes) => sum + 4 + bytes, 0);
  return SIGNATURE.length + 8 + rows * row + 2;
}

/**
 * Where each field of each row of a binary COPY answer lies: field f of row r is
 * `bytes[at[2 * (r * fields + f)] .. at[2 * (r * fields + f) + 1])`, both −1 for NULL. Throws on
 * anything that is not a whole binary COPY answer of `fields` fields per row.
 */
export function binaryCopyFields(bytes: Buffer, fields: number): { rows: number; at: Int32Array } {
  const cut = () => new Error('a binary COPY answer cut short');
  if (bytes.length < SIGNATURE.length + 8 || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY answer');
  let p = SIGNATURE.length + 4;
  const extension = bytes.readInt32BE(p);
  if (extension < 0 || p + 4 + extension > bytes.length) throw cut();
  p += 4 + extension;
  let at = new Int32Array(2 * fields * 64);
  let n = 0;
  for (let rows = 0; ; rows++) {
    if (p + 2 > bytes.length) throw cut();
    const count = bytes.readInt16BE(p);
    p += 2;
    if (count === -1) return { rows, at: at.subarray(0, n) };
    if (count !== fields) throw new Error(`a binary COPY row of ${count} fields where ${fields} were asked`);
    if (n + 2 * fields > at.length) {
      const grown = new Int32Array(at.length * 2);
      grown.set(at);
      at = grown;
    }
    for (let f = 0; f < fields; f++) {
      if (p + 4 > bytes.length) throw cut();
      const length = bytes.readInt32BE(p);
      p += 4;
      if (length < 0) {
        at[n++] = -1;
        at[n++] = -1;
        continue;
      }
      if (p + length > bytes.length) throw cut();
      at[n++] = p;
      at[n++] = p += length;
    }
  }
}
