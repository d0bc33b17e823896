/** The build process of `millionFirstBuild.ts`: one first build, then its figures as a JSON line. */
import { readFileSync } from 'node:fs';
import { FIRST_SPILL_CHUNKS, SPILL_CHUNKS } from '../src/search/core/keywords/keywordSpill';
import { SemanticIndex } from '../src/search/core/semanticIndex';
import { FIRST_BUILD_CHUNK_TOKENS } from './millionFirstBuild';
import { withPeakMemory } from './stalls';
import { standInEmbeddings } from './vectorData';

const status = (field: 'VmHWM' | 'VmRSS') => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

async function main() {
  const [root, storeDir, dimText, spillText] = process.argv.slice(2);
  const dim = Number(dimText);
  const { embed } = standInEmbeddings(dim, 9);
  const errors: string[] = [];
  const index = new SemanticIndex({
    folders: [{ name: 'bench', path: root }],
    excludes: [],
    storeDir,
    model: 'bench',
    embed,
    chunkTokens: FIRST_BUILD_CHUNK_TOKENS,
    // 0: the keyword index held whole in the worker, as before it was kept in batches.
    ...(spillText === '' ? {} : { keywordSpillChunks: Number(spillText) || Number.MAX_SAFE_INTEGER }),
    onBackgroundError: (e) => errors.push(String(e)),
  });
  await index.load();
  const startMB = status('VmRSS');
  // MG_BENCH_TIMELINE=1: the process's memory every two seconds on stderr (where the peak falls).
  const timeline = process.env.MG_BENCH_TIMELINE
    ? setInterval(() => {
        const m = process.memoryUsage();
        console.error(
          `${((performance.now() - t0) / 1000).toFixed(0)} s rss ${status('VmRSS').toFixed(0)} heap ${(m.heapUsed / 2 ** 20).toFixed(0)} buffers ${(m.arrayBuffers / 2 ** 20).toFixed(0)} external ${(m.external / 2 ** 20).toFixed(0)}`,
        );
      }, 2000)
    : undefined;
  const t0 = performance.now();
  const { result: stats, peakMB: hostPeakMB } = await withPeakMemory(() => index.update());
  await index.idle();
  const buildSeconds = (performance.now() - t0) / 1000;
  await index.keywordsReady;
  const keywordsStored = index.keywordSearch('return', 1).length === 1 && errors.length === 0;
  const peakMB = status('VmHWM');
  clearInterval(timeline);
  await index.close();
  if (errors.length) console.error(errors.join('\n'));
  console.log(
    JSON.stringify({
      chunks: stats.chunks,
      dim,
      spillChunks: spillText === '' ? SPILL_CHUNKS : Number(spillText),
      firstSpillChunks: spillText === '' ? FIRST_SPILL_CHUNKS : Number(spillText),
      buildSeconds,
      chunksPerSecond: stats.chunks / buildSeconds,
      peakMB,
      startMB,
      hostPeakMB,
      keywordsStored,
    }),
  );
}

void main();
