/**
 * The process the index crash test kills: it loads the index over a workspace, then rewrites one
 * file after another and updates the index for it, writing each step's number to the ack file
 * once the update has returned (the state the user was told about). Run with `node --import tsx`.
 * Arguments: workspace, store folder, ack file, emulator URL, demo key.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayClient } from '../../../src/gateway';
import { SemanticIndex } from '../../../src/search/core/semanticIndex';
import { FILES, fileName, versionText } from './indexStates';

async function main(): Promise<void> {
  const [workspace, storeDir, ackFile, url, key] = process.argv.slice(2);
  const client = new GatewayClient({ baseUrl: url, apiKey: key });
  const index = new SemanticIndex({
    folders: [{ name: 'ws', path: workspace }],
    excludes: [],
    storeDir,
    model: 'embed-emu-256',
    embed: (texts, signal, onDone) => client.embeddings.createBatched('embed-emu-256', texts, { batchSize: 16, concurrency: 2, signal, onProgress: (d) => onDone?.(d) }),
  });
  const loaded = await index.load();
  const acks = existsSync(ackFile) ? readFileSync(ackFile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
  let step = acks.length ? acks[acks.length - 1] : 0;
  if (loaded !== 'loaded') {
    await index.update();
    appendFileSync(ackFile, '0\n');
  }
  process.stdout.write('ready\n');
  for (;;) {
    step++;
    const file = join(workspace, fileName(step % FILES));
    writeFileSync(file, versionText(step % FILES, step));
    // As the extension does: the watcher's one-file updates, and now and then a whole rescan.
    await (step % 5 === 0 ? index.update() : index.update([file]));
    appendFileSync(ackFile, `${step}\n`);
  }
}

main().catch((err) => {
  process.stderr.write(String((err as Error).stack ?? err));
  process.exit(1);
});
