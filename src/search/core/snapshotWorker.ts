/**
 * The snapshot worker thread: runs one job (`snapshotJob.ts`: a snapshot, or the keyword index
 * stored beside it) per message and answers with its progress, then its parts (their buffers
 * transferred, not copied) or what it wrote, or its error.
 * Bundled as `dist/searchWorker.js`; `snapshotRunner.ts` starts it.
 */
import { parentPort } from 'node:worker_threads';
import { runKeywordsJob, runSnapshotJob, type KeywordsJob, type SnapshotJob } from './snapshotJob';
import type { WorkerReply } from './snapshotRunner';

const port = parentPort;
if (port) {
  port.on('message', (job: SnapshotJob | KeywordsJob) => {
    const post = (reply: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);
    const fail = (err: unknown) => post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    if (job.kind === 'keywords') {
      runKeywordsJob(job).then((written) => post({ type: 'written', ...written }), fail);
      return;
    }
    // A message per block of rows (a few a second): the caller sees how far it got.
    runSnapshotJob(job, (done, total) => post({ type: 'progress', done, total })).then(
      (parts) => {
        const buffers = [parts.mean.buffer, parts.codes.buffer, parts.scales.buffer] as ArrayBuffer[];
        // The row hashes as one string: one string crosses threads at once, 100,000 would each be copied.
        post({ type: 'done', parts: { ...parts, rows: [] }, rowsText: parts.rows.join(' ') }, [...new Set(buffers)]);
      },
      fail,
    );
  });
}
