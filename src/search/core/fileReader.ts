import { Worker } from 'node:worker_threads';
import { readNew } from './fileChunks';

/** A file's bytes with its size and time, or why there are none. */
export type FileRead = { size: number; mtimeMs: number; bytes: Buffer } | 'gone' | 'skipped';

/** Files asked for at once: a full build keeps this many reads in flight, one message each way per batch (64 made the host's work burstier for no gain). */
export const READ_BATCH = 16;

/** Reads handed to their callers per turn of the event loop (as many as a scan on this thread had in flight). */
const DELIVER_AT_ONCE = 8;

/**
 * The reading thread (plain JavaScript, so it runs the same from source and from the bundle): each
 * batch opened, measured and read with blocking calls on its own thread, and answered with all
 * its bytes in one buffer, handed over.
 */
const READER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', ({ id, files }) => {
  const results = [];
  const open = [];
  let total = 0;
  for (const [path, maxBytes] of files) {
    let fd;
    try {
      fd = fs.openSync(path, 'r');
      const s = fs.fstatSync(fd);
      if (!s.isFile()) results.push({ kind: 'gone' });
      else if (s.size === 0 || s.size > maxBytes) results.push({ kind: 'skipped' });
      else {
        results.push({ kind: 'read', size: s.size, mtimeMs: s.mtimeMs, length: 0 });
        open.push([results.length - 1, fd, s.size]);
        total += s.size;
        fd = undefined;
      }
    } catch {
      results.push({ kind: 'gone' });
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const [i, fd, size] of open) {
    let n = 0;
    try {
      while (n < size) {
        const got = fs.readSync(fd, bytes, at + n, size - n, n);
        if (got <= 0) break;
        n += got;
      }
      results[i].length = n;
    } catch {
      results[i] = { kind: 'gone' };
      n = 0;
    } finally {
      fs.closeSync(fd);
    }
    // Each file's bytes follow the previous file's: one that shrank meanwhile leaves room at the end.
    at += n;
  }
  const buffer = bytes.buffer.slice(0, at);
  parentPort.postMessage({ id, results, buffer }, [buffer]);
});
`;

type Result = { kind: 'gone' | 'skipped' } | { kind: 'read'; size: number; mtimeMs: number; length: number };
interface Asked {
  path: string;
  maxBytes: number;
  resolve: (read: FileRead) => void;
}

/**
 * Reads the files of a full build on a thread of its own. On the extension host's thread each
 * file took four file-system requests (open, stat, read, close), each queued to the thread pool
 * and its answer handled, the largest share of that thread's work in a build; here the thread
 * handles one message per batch of files. Should the thread fail, reads go on as before.
 */
export class FileReader {
  private worker: Worker | undefined;
  private failed = false;
  private queue: Asked[] = [];
  private readonly sent = new Map<number, Asked[]>();
  private nextId = 0;
  private flushing = false;

  /** A file's bytes when it is a file of 1 to `maxBytes` bytes (`skipped` otherwise, `gone` when it cannot be read). */
  read(path: string, maxBytes: number): Promise<FileRead> {
    if (this.failed) return readHere(path, maxBytes);
    return new Promise((resolve) => {
      this.queue.push({ path, maxBytes, resolve });
      if (this.queue.length >= READ_BATCH) this.flush();
      else if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => {
          this.flushing = false;
          this.flush();
        });
      }
    });
  }

  /** Stops the thread; reads still out are finished on this one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failed = true;
    await worker?.terminate();
    this.readOutstandingHere();
  }

  private flush(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const worker = this.start();
    if (!worker) {
      for (const a of batch) void readHere(a.path, a.maxBytes).then(a.resolve);
      return;
    }
    const id = this.nextId++;
    this.sent.set(id, batch);
    worker.postMessage({ id, files: batch.map((a) => [a.path, a.maxBytes]) });
  }

  private start(): Worker | undefined {
    if (this.failed) return undefined;
    if (this.worker) return this.worker;
    try {
      const worker = new Worker(READER_SOURCE, { eval: true, execArgv: [] });
      worker.on('message', (m: { id: number; results: Result[]; buffer: ArrayBuffer }) => this.answer(m));
      const fail = () => {
        if (this.worker !== worker) return;
        this.worker = undefined;
        this.failed = true;
        this.readOutstandingHere();
      };
      worker.on('error', fail);
      worker.on('exit', fail);
      this.worker = worker;
      return worker;
    } catch {
      this.failed = true;
      return undefined;
    }
  }

  private answer({ id, results, buffer }: { id: number; results: Result[]; buffer: ArrayBuffer }): void {
    const batch = this.sent.get(id);
    if (!batch) return;
    this.sent.delete(id);
    let at = 0;
    const reads = results.map((r): FileRead => {
      if (r.kind !== 'read') return r.kind;
      const bytes = Buffer.from(buffer, at, r.length);
      at += r.length;
      return { size: r.size, mtimeMs: r.mtimeMs, bytes };
    });
    // Handed over a few at a time, one turn of the event loop each: whoever awaits a read chunks
    // its file at once, and a whole batch in one turn held the extension host's thread too long.
    const deliver = (from: number) => {
      for (let i = from; i < Math.min(from + DELIVER_AT_ONCE, reads.length); i++) batch[i].resolve(reads[i]);
      if (from + DELIVER_AT_ONCE < reads.length) setImmediate(deliver, from + DELIVER_AT_ONCE);
    };
    deliver(0);
  }

  private readOutstandingHere(): void {
    const outstanding = [...this.sent.values()].flat().concat(this.queue);
    this.sent.clear();
    this.queue = [];
    for (const a of outstanding) void readHere(a.path, a.maxBytes).then(a.resolve);
  }
}

/** The same read on this thread, through the thread pool. */
export async function readHere(path: string, maxBytes: number): Promise<FileRead> {
  const got = await readNew(path, (size) => size > 0 && size <= maxBytes);
  return typeof got === 'string' ? got : { size: got.stat.size, mtimeMs: got.stat.mtimeMs, bytes: got.bytes };
}
