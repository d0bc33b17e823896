/**
 * The process the index crash test kills: it loads the index over a workspace, then rewrites one
 * file after another and updates the index for it, writing each step's number to the ack file
 * once the update has returned (the state the user was told about). The test bundles it (with the
 * snapshot worker beside it) and runs the bundle with `node`.
 * Arguments: workspace, store folder, ack file, emulator URL, demo key, number of files, mode.
 * Mode `calm`: every update finishes. Mode `stormy`, as the extension lives: the gateway refuses
 * some embedding requests (the test injects it) and the update stops with `IndexingStopped`, and
 * one update in four is cancelled part way (a newer save superseding it); the loop goes on.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayClient } from '../../../src/gateway';
import { IndexingStopped, SemanticIndex } from '../../../src/search/core/semanticIndex';
import { fileName, versionText } from './indexStates';

async function main(): Promise<void> {
  const [workspace, storeDir, ackFile, url, key, count, mode] = process.argv.slice(2);
  const files = Number(count);
  const stormy = mode === 'stormy';
  const client = new GatewayClient({ baseUrl: url, apiKey: key, maxRetries: 0 });
  const index = new SemanticIndex({
    folders: [{ name: 'ws', path: workspace }],
    excludes: [],
    storeDir,
    model: 'embed-emu-256',
    embed: (texts, signal, onDone) =>
      client.embeddings.createBatched('embed-emu-256', texts, { batchSize: 16, concurrency: 2, signal, onProgress: (d) => onDone?.(d) }),
  });
  const loaded = await index.load();
  const acks = existsSync(ackFile) ? readFileSync(ackFile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
  let step = acks.length ? acks[acks.length - 1] : 0;
  if (loaded !== 'loaded') {
    // A first build the gateway refused part of stores nothing: it is tried again until whole.
    for (;;) {
      try {
        await index.update();
        break;
      } catch (err) {
        if (!stormy || !(err instanceof IndexingStopped)) throw err;
      }
    }
    appendFileSync(ackFile, '0\n');
  }
  process.stdout.write('ready\n');
  for (;;) {
    step++;
    const file = join(workspace, fileName(step % files));
    writeFileSync(file, versionText(step % files, step));
    const signal = stormy && Math.random() < 0.25 ? AbortSignal.timeout(Math.floor(Math.random() * 20)) : undefined;
    // As the extension does: the watcher's one-file updates, and now and then a whole rescan.
    try {
      await (step % 5 === 0 ? index.update(undefined, signal) : index.update([file], signal));
    } catch (err) {
      if (!stormy || !(err instanceof IndexingStopped)) throw err;
    }
    appendFileSync(ackFile, `${step}\n`);
  }
}

main().catch((err) => {
  process.stderr.write(String((err as Error).stack ?? err));
  process.exit(1);
});
