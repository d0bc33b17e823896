/**
 * The snapshot worker thread: runs one snapshot job (`snapshotJob.ts`) per message and answers
 * with its progress, then its parts (their buffers transferred, not copied) or its error.
 * Bundled as `dist/searchWorker.js`; `snapshotRunner.ts` starts it.
 */
import { parentPort } from 'node:worker_threads';
import { runSnapshotJob, type SnapshotJob } from './snapshotJob';
import type { WorkerReply } from './snapshotRunner';

const port = parentPort;
if (port) {
  port.on('message', (job: SnapshotJob) => {
    const post = (reply: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);
    // A message per block of rows (a few a second): the caller sees how far it got.
    runSnapshotJob(job, (done, total) => post({ type: 'progress', done, total })).then(
      (parts) => {
        const buffers = [parts.mean.buffer, parts.codes.buffer, parts.scales.buffer, ...(parts.vectors ? [parts.vectors.buffer] : [])] as ArrayBuffer[];
        // The row hashes as one string: one string crosses threads at once, 100,000 would each be copied.
        post({ type: 'done', parts: { ...parts, rows: [] }, rowsText: parts.rows.join(' ') }, [...new Set(buffers)]);
      },
      (err: unknown) => post({ type: 'error', message: err instanceof Error ? err.message : String(err) }),
    );
  });
}
