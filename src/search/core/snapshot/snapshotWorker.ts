/**
 * The snapshot worker thread: runs one job (`snapshotJob.ts`: a snapshot, or the keyword index
 * stored beside it) per message, or one streamed first build over several (start, rows…,
 * finish), or a streamed build's keyword index (its own thread: start, texts…, finish), and
 * answers with its progress, then its parts (their buffers transferred, not copied) or what it
 * wrote, or its error.
 * Bundled as `dist/searchWorker.js`; `snapshotRunner.ts` starts it, and requires it on its own
 * thread for a job run there (its exports; nothing starts without a parent port). The extension's
 * bundle requires it too, for the search core's modules (`modules`).
 */
import { parentPort } from 'node:worker_threads';
import { KeywordStream } from '../keywords/keywordSpill';
import { runKeywordsJob, runSnapshotJob, SnapshotBuilder, type KeywordsJob, type SnapshotJob, type SnapshotParts, type StreamMessage } from './snapshotJob';
import type { WorkerReply } from './snapshotRunner';
import { lowerThisThreadsPriority } from './threadPriority';

import * as indexStore from '../store/indexStore';
import * as keywords from '../keywords/keywords';
import * as keywordStore from '../keywords/keywordStore';
import * as snapshotJob from './snapshotJob';
import * as vectorIndex from '../vectors/vectorIndex';

export { runKeywordsJob, runSnapshotJob, SnapshotBuilder };

/**
 * The search core's modules for the extension host's bundle, which takes them from here rather
 * than carrying a second copy (esbuild.js, `searchCoreFromWorker`).
 */
export const modules = { indexStore, keywords, keywordStore, snapshotJob, vectorIndex };

const port = parentPort;
if (port) {
  lowerThisThreadsPriority();
  const post = (reply: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);
  const fail = (err: unknown) => post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  /** `withRows` false: the caller has the rows already (it streamed them). */
  const done = (parts: SnapshotParts, withRows = true) => {
    const buffers = [parts.mean.buffer, parts.codes.buffer, parts.scales.buffer] as ArrayBuffer[];
    // The row hashes as one string: one string crosses threads at once, 100,000 would each be copied.
    post({ type: 'done', parts: { ...parts, rows: [] }, rowsText: withRows ? parts.rows.join(' ') : '' }, [...new Set(buffers)]);
  };
  // A streamed build's messages are handled one after another (its start opens files).
  let stream: Promise<SnapshotBuilder | undefined> | undefined;
  let keywordStream: Promise<KeywordStream | undefined> | undefined;
  port.on('message', (job: SnapshotJob | KeywordsJob | StreamMessage) => {
    if (job.kind === 'keywords') {
      runKeywordsJob(job).then((written) => post({ type: 'written', ...written }), fail);
      return;
    }
    if (job.kind === 'stream') {
      stream = SnapshotBuilder.start(job).catch((err: unknown) => void fail(err));
      return;
    }
    if (job.kind === 'keyword-stream') {
      keywordStream = Promise.resolve(new KeywordStream(job));
      return;
    }
    if (job.kind === 'keyword-texts' || job.kind === 'keyword-finish') {
      keywordStream = keywordStream?.then(async (keywords) => {
        if (!keywords) return undefined;
        try {
          if (job.kind === 'keyword-texts') {
            await keywords.addTexts(job.files);
            post({ type: 'indexed', chunks: job.files.reduce((n, f) => n + f.texts.length, 0) });
            return keywords;
          }
          post({ type: 'written', ...(await keywords.finish(job.dropped)) });
        } catch (err) {
          keywords.discard();
          fail(err);
        }
        return undefined;
      });
      return;
    }
    if (job.kind === 'close') {
      void Promise.all([stream?.then((builder) => builder?.close()), keywordStream?.then((keywords) => keywords?.discard())]).then(() =>
        post({ type: 'closed' }),
      );
      stream = Promise.resolve(undefined);
      keywordStream = Promise.resolve(undefined);
      return;
    }
    if (job.kind === 'rows' || job.kind === 'texts' || job.kind === 'finish') {
      stream = stream?.then(async (builder) => {
        if (!builder) return undefined;
        try {
          if (job.kind === 'texts') await builder.addTexts(job.files);
          else if (job.kind === 'rows') {
            builder.add(job.rowsText ? job.rowsText.split(' ') : [], job.vectors);
            // Written: the buffer goes back to be filled again.
            post({ type: 'rows', written: builder.rowCount, spare: job.vectors }, [job.vectors.buffer as ArrayBuffer]);
          } else done(await builder.finish(job.kept, job.headroom, 'caller', job.keywords), false);
          return builder;
        } catch (err) {
          builder.discard();
          fail(err);
          return undefined;
        }
      });
      return;
    }
    // A message per block of rows (a few a second): the caller sees how far it got.
    runSnapshotJob(job, (done, total) => post({ type: 'progress', done, total })).then(done, fail);
  });
}
