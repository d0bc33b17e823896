// `npm run bench`: prints the figures the issues ask for, and writes them to bench/results/.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAgentBench, runColdProblemsBench, runProblemsBench } from './agent';
import { runCompletionsBench, runNextEditBench } from './completions';
import { costText, runCostBench } from './cost';
import { CACHE_BENCH_MODELS, runCacheBench, runLongSessionBench } from './cache';
import { runIndexUpdateBench } from './indexUpdate';
import { stallText } from './stalls';
import { runMillionBench } from './vectorsMillion';
import { runFirstBuildBench } from './millionFirstBuild';
import { runEmbeddingBench } from './embeddings';
import { runIndexingBench } from './indexing';
import { runTeamBench, teamText } from './team';
import { runTeamSearchBench, teamSearchText } from './teamSearch';
import { runRenderBench } from './render';
import { runSoakBench } from './soak';
import { runVectorBench } from './vectors';
import { runSandboxBench, sandboxBenchText } from './sandbox';
import { fallbackBenchText, runFallbackBench } from './fallback';
import { runSpeechBench } from './speech';
import { runSubagentBench, subagentBenchText } from './subagents';
import { runUsageBench } from './usage';
import { runLargeEventBench, runSseBench, type SseBenchResult } from './sse';

function printSse(results: SseBenchResult[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`\nSSE decode + merge, ${r.format}: ${r.events} events, ${(r.bytes / 1e6).toFixed(2)} MB, loopback, 1-4 KB writes (median of 15 runs)`);
    const names = Object.keys(r.medians);
    const ours = r.medians[names[0]];
    const floor = r.medians['hand parser (floor)'];
    for (const n of names) {
      const ms = r.medians[n];
      lines.push(
        `  ${n.padEnd(62)} ${ms.toFixed(1).padStart(7)} ms  ${(r.events / ms).toFixed(0).padStart(4)}k ev/s  ` +
          `${r.cpuUsPerEvent[n].toFixed(2).padStart(6)} µs CPU/ev  ${(ms / ours).toFixed(2)}x ours' time`,
      );
    }
    const helper = r.medians[names[1]];
    const target = r.format === 'chat completions' ? 3 : 2.5;
    lines.push(
      `  => ours vs SDK helper: ${(helper / ours).toFixed(2)}x faster (target ≥ ${target}x: ${helper / ours >= target ? 'met' : 'NOT met'}); ` +
        `ours vs floor: ${(ours / floor).toFixed(2)}x${r.format === 'chat completions' ? ` (target ≤ 1.5x: ${ours / floor <= 1.5 ? 'met' : 'NOT met'})` : ''}`,
    );
  }
  return lines;
}

/** The run whose `key` is the median of the runs'. */
function medianBy<T>(runs: T[], key: (r: T) => number): T {
  return [...runs].sort((a, b) => key(a) - key(b))[Math.floor(runs.length / 2)];
}

async function main(): Promise<void> {
  // `npm run bench -- sse render` runs some benchmarks only.
  const only = process.argv.slice(2);
  const want = (name: string) => only.length === 0 || only.includes(name);
  console.log(`Model Gateway benchmarks — node ${process.version}, ${process.platform}/${process.arch}`);
  const results: Record<string, unknown> = { at: new Date().toISOString(), node: process.version };
  if (want('sse')) {
    results.sse = await runSseBench();
    for (const l of printSse(results.sse as SseBenchResult[])) console.log(l);
    const large = runLargeEventBench();
    results.sseLargeEvent = large;
    console.log('\nOne large SSE event in 64 KB reads (best of 3): decoding must stay linear in its size');
    for (const r of large) console.log(`  ${String(r.mb).padStart(3)} MB  ${r.ms.toFixed(1).padStart(7)} ms`);
    console.log(`  => 32 MB costs ${(large[1].ms / large[0].ms).toFixed(1)}x the 8 MB event (linear: 4x; quadratic: 16x)`);
  }
  if (want('embeddings')) {
    const embeddings = await runEmbeddingBench();
    results.embeddings = embeddings;
    console.log(`\nEmbeddings over loopback: ${embeddings.inputs} inputs, dimension ${embeddings.dimensions}, emulator in its own process`);
    for (const r of embeddings.runs) {
      console.log(
        `  wire ${r.wire.padEnd(6)} batches of ${r.batchSize}, ${r.concurrency} in flight: ${r.ms.toFixed(0).padStart(6)} ms  ` +
          `${r.inputsPerSecond.toFixed(0).padStart(6)} inputs/s  ${r.requests} requests`,
      );
    }
  }
  if (want('render')) {
    // Three runs, the median shown (by the empty conversation's time per 1,000 tokens): one run swung 165–215 ms on a busy machine.
    const renders = [await runRenderBench(), await runRenderBench(), await runRenderBench()];
    const render = medianBy(renders, (r) => r.runs[0].msPer1000Tokens);
    results.render = render;
    results.renderRuns = renders.map((r) => r.runs.map((x) => x.msPer1000Tokens));
    console.log(
      `\nChat render, three runs: ${renders.map((r) => `${r.runs[0].msPer1000Tokens.toFixed(0)} ms per 1,000 tokens`).join(', ')}; the median run follows`,
    );
    console.log(
      `\nStreaming a ${render.tokens}-token answer into the chat panel (headless Chromium, 8 tokens every 16 ms posted on the page as VS Code relays them; CDP TaskDuration)`,
    );
    for (const r of render.runs)
      console.log(
        `  ${r.name.padEnd(36)} main thread ${r.mainThreadMs.toFixed(0).padStart(6)} ms = ${r.msPer1000Tokens.toFixed(1).padStart(6)} ms per 1,000 tokens  (wall ${r.wallMs} ms)`,
      );
    const [empty, long, naive] = render.runs;
    console.log(`  => incremental rendering uses ${(naive.mainThreadMs / empty.mainThreadMs).toFixed(1)}x less main-thread time than the naive renderer`);
    console.log(
      `  => ${empty.msPer1000Tokens.toFixed(0)} ms of main thread per 1,000 streamed tokens (target ≤ 200: ${empty.msPer1000Tokens <= 200 ? 'met' : 'NOT met'})`,
    );
    const ratio = long.mainThreadMs / empty.mainThreadMs;
    console.log(
      `  => after 300 earlier turns (the soak’s day in one conversation): ${ratio.toFixed(2)}x the empty conversation's time (target ≤ 1.2x: ${ratio <= 1.2 ? 'met' : 'NOT met'})`,
    );
  }
  if (want('cache')) {
    const perFormat: Record<string, Awaited<ReturnType<typeof runCacheBench>>> = {};
    for (const format of ['messages', 'chat', 'responses'] as const) {
      const cache = await runCacheBench(format);
      perFormat[format] = cache;
      console.log(
        `\nPrompt caching, ${format} format (${CACHE_BENCH_MODELS[format]}), ${cache.steps}-step tool conversation (${cache.requests} requests) on the emulator`,
      );
      console.log(
        `  input ${cache.inputTokens} tokens, read from cache ${cache.cacheRead}, written ${cache.cacheWrite}: cache-read share ${(cache.share * 100).toFixed(1)}% (target ≥ 80%: ${cache.share >= 0.8 ? 'met' : 'NOT met'}); saved $${cache.savedDollarsAt3PerM.toFixed(4)} at $3/M input`,
      );
    }
    results.cache = perFormat.messages;
    results.cacheByFormat = perFormat;
    const long = await runLongSessionBench();
    results.longSession = long;
    const b = long.budgeted;
    const big = long.unbudgetedLargeWindow;
    const same = long.unbudgetedSameWindow;
    const n = (x: number) => x.toLocaleString('en-US');
    console.log(
      `\nLong session: one question, 40 tool steps each reading one of ${long.files} real source files (~${n(long.fileTokensApprox)} tokens in all), messages format`,
    );
    console.log(
      `  32k window with budgeting: ${b.toolSteps} tool steps, ${b.requests} requests (${b.condensations} of them summaries), ${b.error ? `ERROR ${b.error}` : 'no context error'}; ${b.stubbed} results stubbed, ${b.condensations} condensation(s)`,
    );
    console.log(
      `    input ${n(b.inputTokens)} tokens, ${n(b.cacheRead)} read from the cache: cache-read share ${(b.share * 100).toFixed(1)}% (target ≥ 70%: ${b.share >= 0.7 && !b.error ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  same model without budgeting: ${same.error ? `refused after ${same.toolSteps} tool steps (${same.error.split(':')[0]})` : `${same.toolSteps} tool steps`}`,
    );
    console.log(
      `  200k-window model without budgeting: ${big.toolSteps} tool steps, input ${n(big.inputTokens)} tokens (${(big.share * 100).toFixed(1)}% from the cache)`,
    );
    console.log(
      `  => budgeting sends ${(big.inputTokens / b.inputTokens).toFixed(1)}x fewer input tokens than the unbudgeted session; input cost at $3/M (reads 0.1x, writes 1.25x): $${b.inputDollarsAt3PerM.toFixed(3)} vs $${big.inputDollarsAt3PerM.toFixed(3)}`,
    );
  }
  // Indexing runs before the vectors: their million-row part writes 4 GB, and this VM then reclaims
  // memory for minutes (an indexing run in that window gave a 90 ms stall no run on its own shows).
  if (want('indexing')) {
    // Three runs, the median shown (by chunks/s): one run swung 4,456–5,666 on a busy machine.
    const xs = [await runIndexingBench(), await runIndexingBench(), await runIndexingBench()];
    const x = medianBy(xs, (r) => r.chunksPerSecond);
    results.indexing = x;
    results.indexingRuns = xs.map((r) => r.chunksPerSecond);
    console.log(`\nIndexing, three runs: ${xs.map((r) => `${r.chunksPerSecond.toFixed(0)} chunks/s`).join(', ')}; the median run follows`);
    console.log(`\nIndexing a generated workspace against the emulator (own process), 1,536-d, batches of 64, 4 in flight`);
    console.log(
      `  ${x.files} files, ${x.chunks} chunks in ${(x.ms / 1000).toFixed(1)} s: ${x.filesPerSecond.toFixed(0)} files/s, ${x.chunksPerSecond.toFixed(0)} chunks/s, ${x.requests} embedding requests`,
    );
    console.log(`  one file changed: ${x.reindexOne.embedded} chunks embedded in ${x.reindexOne.requests} request(s), ${x.reindexOne.ms} ms`);
    console.log(`  restart: index loaded in ${x.restart.loadMs.toFixed(0)} ms, full rescan embedded ${x.restart.embedded} chunks`);
    console.log(`  memory: ${x.bytesPerChunk} bytes per indexed chunk (float32 vector, 1-bit code, scale, flag)`);
    const p = x.phases;
    console.log(
      `  where the build's time went: scan and chunk ${p.scanMs} ms, waiting for embeddings ${p.embedMs} ms, storing ${p.persistMs} ms, keywords ${p.keywordsMs} ms`,
    );
    console.log(
      `  local work: ${x.cpuUsPerChunk.toFixed(0)} µs of this process's CPU per chunk, worker threads' included (HTTP and decoding too); the emulator's process ${x.emulatorCpuMs === undefined ? 'not measured' : `${x.emulatorCpuMs.toFixed(0)} ms of CPU`} on the same cores; the event loop busy ${x.loopBusyMs.toFixed(0)} ms of the ${x.ms} ms (${((x.loopBusyMs / x.chunks) * 1000).toFixed(0)} µs per chunk)`,
    );
    console.log(`  => ${x.chunksPerSecond.toFixed(0)} chunks/s (target ≥ 5,000: ${x.chunksPerSecond >= 5000 ? 'met' : 'NOT met'}); ${stallText(x.stalls)}`);
    const u = await runIndexUpdateBench();
    results.indexUpdate = u;
    const ms = (v: number) => `${v.toFixed(v < 10 ? 1 : 0)} ms`;
    console.log(
      `\nOne changed file in a ${u.chunks.toLocaleString('en-US')}-chunk index (${u.files.toLocaleString('en-US')} files, ${u.dim}-d, local stand-in embeddings), the extension host's event loop watched throughout`,
    );
    console.log(
      `  build: ${u.buildSeconds.toFixed(1)} s, the host holding at most ${u.buildPeakMB.toFixed(0)} MB (heap and buffers; vectors alone are ${((u.chunks * u.dim * 4) / 2 ** 20).toFixed(0)} MB); ${stallText(u.buildStalls)}`,
    );
    console.log(
      `  ten one-file changes, the tenth folding the log into a new snapshot (in a worker, ${(u.foldMs / 1000).toFixed(1)} s after the change returned):`,
    );
    console.log(
      `    stored durably median ${ms(u.persistMs.median)}, worst ${ms(u.persistMs.max)}; whole update median ${ms(u.updateMs.median)}, worst ${ms(u.updateMs.max)}: change ${u.updateMs.worst + 1} of 10, its flush ${ms(u.updateMs.worstPersistMs)} (target ≤ 50 ms: ${u.updateMs.max <= 50 ? 'met' : 'NOT met'})`,
    );
    console.log(`    ${stallText(u.updateStalls)}`);
    console.log(`  load after the changes: ${ms(u.loadMs)} (target ≤ 500 ms: ${u.loadMs <= 500 ? 'met' : 'NOT met'}); ${stallText(u.loadStalls)}`);
    console.log(`  keyword index refilled from the files after the load (in the background): ${ms(u.keywordsMs)}; ${stallText(u.keywordsStalls)}`);
    console.log(`  hybrid query (vectors + BM25 + fusion, 40 queries): median ${ms(u.queryMs.median)}, p95 ${ms(u.queryMs.p95)}; ${stallText(u.queryStalls)}`);
  }
  if (want('vectors')) {
    const v = await runVectorBench();
    results.vectors = v;
    console.log(
      `\nVector search: top-10 over ${v.n.toLocaleString('en-US')} x ${v.dim}, 30 queries per set, recall@10 against exact float32 search, median time`,
    );
    for (const s of v.sets) {
      const line = s.ours.map((o) => `${o.candidates} candidates: ${o.medianMs.toFixed(2)} ms, recall ${o.recall.toFixed(3)}`).join(' | ');
      console.log(
        `  ${`${s.shape} (seed ${s.seed})`.padEnd(22)} top-1 cos ${s.top1.toFixed(2)}, top-10 ${s.top10.toFixed(2)}; build ${(s.buildMs / 1000).toFixed(1)} s; ${line}; plain loop ${s.plainLoopMedianMs.toFixed(0)} ms`,
      );
    }
    const hard = v.sets.filter((s) => s.shape !== 'easy').map((s) => s.ours.find((o) => o.candidates === 500)!);
    const worst = Math.min(...hard.map((o) => o.recall));
    const slowest = Math.max(...hard.map((o) => o.medianMs));
    console.log(
      `  => hard sets at the default 500 candidates: recall ≥ ${worst.toFixed(3)}, median ≤ ${slowest.toFixed(2)} ms (targets ≥ 0.99, ≤ 10 ms: ${worst >= 0.99 && slowest <= 10 ? 'met' : 'NOT met'}); memory ${v.bytesPerVector} bytes per vector`,
    );
    if (v.vectra10k)
      console.log(
        `  vectra at 10,000 vectors: insert ${(v.vectra10k.insertMs / 1000).toFixed(1)} s, query ${v.vectra10k.medianMs.toFixed(2)} ms vs ours ${v.vectra10k.oursMedianMs.toFixed(2)} ms: ours ${v.vectra10k.ratio.toFixed(1)}x faster`,
      );
    const m = runMillionBench();
    results.million = m;
    console.log(
      `\nOne machine, a monorepo: ${m.n.toLocaleString('en-US')} x ${m.dim} (${m.shape} shape), built block by block to files in ${m.buildSeconds.toFixed(0)} s (vectors ${m.fileMB.vectors.toFixed(0)} MB on disk, codes and scales ${m.fileMB.codes.toFixed(0)} MB)`,
    );
    console.log(
      `  fresh process: load ${m.loadMs.toFixed(0)} ms; resident ${m.vectorsResidentMB.toFixed(0)} MB (${(m.vectorsResidentMB - m.residentBeforeMB).toFixed(0)} MB over the bare process)`,
    );
    for (const r of m.runs)
      console.log(
        `  ${r.candidates} candidates re-scored from the file: median ${r.medianMs.toFixed(1)} ms, p95 ${r.p95Ms.toFixed(1)} ms, recall@10 ${r.recall.toFixed(3)} (${m.hybrid.queries} queries, right after the build)`,
      );
    const best = m.runs[0];
    const met = m.vectorsResidentMB <= 1500 && m.loadMs <= 1000 && best.medianMs <= 50 && best.p95Ms <= 100 && best.recall >= 0.99;
    console.log(
      `  => vectors alone (resident ≤ 1.5 GB, load ≤ 1 s, query median ≤ 50 ms and p95 ≤ 100 ms, recall ≥ 0.99): ${met ? 'met' : 'NOT met'} at the default 500 candidates`,
    );
    const k = m.keywords;
    const h = m.hybrid;
    console.log(
      `  keywords of ${m.n.toLocaleString('en-US')} code-like chunks: indexed in ${k.indexSeconds.toFixed(0)} s, stored in ${k.storeSeconds.toFixed(1)} s (${k.terms.toLocaleString('en-US')} terms, ${k.postings.toLocaleString('en-US')} postings, ${k.fileMB.toFixed(0)} MB on disk, postings read per query term)`,
    );
    console.log(
      `  keywords opened in ${h.keywordLoadMs.toFixed(0)} ms (vectors and keywords together: ${(m.loadMs + h.keywordLoadMs).toFixed(0)} ms); resident with both ${m.residentMB.toFixed(0)} MB (vectors alone ${m.vectorsResidentMB.toFixed(0)} MB)`,
    );
    console.log(
      `  hybrid (30 by vectors at 500 candidates + 30 by BM25, fused, top 10; ${h.queries} queries right after the build): median ${h.medianMs.toFixed(1)} ms, p95 ${h.p95Ms.toFixed(1)} ms (the keyword part: median ${h.keywordMedianMs.toFixed(1)} ms, p95 ${h.keywordP95Ms.toFixed(1)} ms); recall@10 ${h.recall.toFixed(3)} against the exact fusion, keywords alone ${h.keywordRecall.toFixed(3)}`,
    );
    const loadBoth = m.loadMs + h.keywordLoadMs;
    const hybridMet = m.residentMB <= 1500 && loadBoth <= 1000 && h.medianMs <= 50 && h.p95Ms <= 100 && h.recall >= 0.99;
    console.log(
      `  => a million chunks whole, keywords on disk (resident ≤ 1.5 GB, load ≤ 1 s, hybrid median ≤ 50 ms and p95 ≤ 100 ms, recall ≥ 0.99): ${hybridMet ? 'met' : 'NOT met'}`,
    );
  }
  // A million chunks' first build through the index as the extension runs it, in a fresh process (about 6 minutes).
  if (want('vectors') || want('first-build')) {
    const runs = [runFirstBuildBench(), ...(want('first-build') && process.env.MG_BENCH_WHOLE_KEYWORDS ? [runFirstBuildBench(undefined, undefined, 0)] : [])];
    results.firstBuild = runs;
    for (const f of runs) {
      console.log(
        `\nA first build of ${f.chunks.toLocaleString('en-US')} chunks (${f.files.toLocaleString('en-US')} generated files, ${f.dim}-d, local stand-in embeddings; keywords ${f.spillChunks ? `in batches of ${f.spillChunks.toLocaleString('en-US')} chunks${f.firstSpillChunks !== f.spillChunks ? `, the first of ${f.firstSpillChunks.toLocaleString('en-US')}` : ''}` : 'held whole'}), SemanticIndex.update in its own process`,
      );
      console.log(
        `  ${f.buildSeconds.toFixed(0)} s (${f.chunksPerSecond.toFixed(0)} chunks/s); the host thread held at most ${f.hostPeakMB.toFixed(0)} MB (heap and buffers); keyword index stored by the worker: ${f.keywordsStored ? 'yes' : 'NO'}`,
      );
      console.log(
        `  => peak resident memory of the process, worker threads included: ${f.peakMB.toFixed(0)} MB (${f.startMB.toFixed(0)} MB before the build; target ≤ 1,500 MB: ${f.peakMB <= 1500 ? 'met' : 'NOT met'})`,
      );
    }
  }
  if (want('usage')) {
    const usage = await runUsageBench();
    results.usage = usage;
    console.log('\nUsage view figures from a busy account (calls over the last 30 days), emulator over loopback');
    for (const r of usage) {
      console.log(
        `  ${r.profile.padEnd(8)} ${String(r.calls).padStart(5)} calls, ${String(r.rangeDays).padStart(2)} days: ${r.ms.toFixed(0).padStart(5)} ms, ${String(r.requests).padStart(3)} requests, ` +
          `${r.complete ? 'whole log' : 'log cap, then buckets'}; shown $${r.totalDollars.toFixed(2)} vs billed $${r.billedDollars.toFixed(2)}`,
      );
    }
  }
  if (want('speech')) {
    const sp = runSpeechBench();
    results.speech = sp;
    console.log(`\nLong speech: ${sp.characters.toLocaleString('en-US')} characters (median of 15 / 7 runs)`);
    console.log(`  split at sentence ends into ${sp.parts} parts of at most 4,096 characters: ${sp.splitMs.toFixed(2)} ms`);
    console.log(
      `  ${sp.parts} WAV parts joined into one ${(sp.wavBytes / 1e6).toFixed(0)} MB file (${(sp.audioSeconds / 60).toFixed(0)} min of audio): ${sp.joinMs.toFixed(1)} ms`,
    );
  }
  if (want('team')) {
    const t = await runTeamBench();
    results.team = t;
    for (const l of teamText(t)) console.log(l);
  }
  // Minutes (two HNSW builds of 100,000 rows): run by name only.
  if (only.includes('team-search')) {
    const t = await runTeamSearchBench();
    results.teamSearch = t;
    for (const l of teamSearchText(t)) console.log(l);
  }
  // The index crash battery with its full kill counts (100 calm, 100 stormy: some 4 minutes);
  // `npm test` runs a short one (test/unit/index-crash.test.ts). By name only.
  if (only.includes('crash')) {
    console.log('\nThe index crash battery, full: 100 kills on 60 files (calm), 100 on 12 with 15% refusals (stormy)');
    const r = spawnSync(process.execPath, [join(__dirname, '..', 'scripts', 'run-mocha.cjs'), 'test/unit', 'crash battery'], {
      cwd: join(__dirname, '..'),
      stdio: 'inherit',
      env: { ...process.env, MODEL_GATEWAY_CRASH_KILLS: '100', MOCHA_GREP: 'killed mid-update' },
    });
    results.crash = { exitCode: r.status };
    if (r.status !== 0) process.exitCode = 1;
  }
  if (want('cost')) {
    const cost = await runCostBench();
    results.cost = cost;
    for (const l of costText(cost)) console.log(l);
  }
  if (want('subagents')) {
    const s = await runSubagentBench();
    results.subagents = s;
    for (const l of subagentBenchText(s)) console.log(l);
    // Without the prompt's reading (a fixed wait only), the gain is the parallel rounds alone.
    const fixed = await runSubagentBench(3, { firstByteMs: 400, msPer1kPromptTokens: 0 });
    results.subagentsFixedLatency = fixed;
    console.log(
      `  with a fixed 400 ms wait only (no prefill): ${fixed.timeRatio.toFixed(2)}× the one-context time (${(fixed.subagents.ms / 1000).toFixed(1)} s against ${(fixed.oneContext.ms / 1000).toFixed(1)} s)`,
    );
  }
  if (want('fallback')) {
    const f = await runFallbackBench();
    results.fallback = f;
    for (const l of fallbackBenchText(f)) console.log(l);
  }
  if (want('sandbox')) {
    const s = await runSandboxBench();
    results.sandbox = s;
    for (const l of sandboxBenchText(s)) console.log(l);
  }
  if (want('agent')) {
    const a = await runAgentBench();
    results.agent = a;
    console.log('\nAgent overheads');
    console.log(
      `  approval → the command's first output line (bash, median of ${a.firstLineRuns}): ${a.firstLineMs.toFixed(1)} ms (target ≤ 50 ms: ${a.firstLineMs <= 50 ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  MCP round trip over stdio, everything server's echo (median of ${a.mcpCalls}): ${a.mcpRoundTripMs.toFixed(2)} ms (target ≤ 5 ms: ${a.mcpRoundTripMs <= 5 ? 'met' : 'NOT met'})`,
    );
    const p = runProblemsBench();
    results.agentProblems = p;
    if ('error' in p) console.log(`  problems after an edit: not measured (${p.error})`);
    else
      console.log(
        `  an accepted edit → its problems reported (tsserver in VS Code ${p.vscode}, ${p.edits} edits: 8 that break the build, their 8 fixes, 4 comment-only): median ${p.medianMs.toFixed(0)} ms, p95 ${p.p95Ms.toFixed(0)} ms, max ${p.maxMs.toFixed(0)} ms (target p95 ≤ 1,500 ms: ${p.p95Ms <= 1500 ? 'met' : 'NOT met'}; Cline waits a fixed 3,500 ms)`,
      );
  }
  if (want('problems-cold')) {
    const runs = Number(process.env.MG_COLD_RUNS ?? 20);
    console.log(`\nProblems after the first edit in a cold window (${runs} fresh windows, tsserver not started, the edit written unasked)`);
    const c = runColdProblemsBench(runs);
    results.problemsCold = c;
    const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length * q) - 1)] ?? NaN;
    console.log(`  VS Code ${c.vscode}: ${c.runs} runs (${c.coldWindows} with no tsserver running before the question), ${c.failures.length} failed to run`);
    console.log(
      `  first report: ${c.firstSaid.error} named the error, ${c.firstSaid.unchecked} said "not checked", ${c.firstSaid.clean} said clean (target 0)`,
    );
    console.log(
      `  in the end:   ${c.finalSaid.error} named the error, ${c.finalSaid.unchecked} still "not checked", ${c.finalSaid.clean} said clean (target 0)`,
    );
    console.log(
      `  question → error known: median ${p(c.knownMs, 0.5).toFixed(0)} ms, p95 ${p(c.knownMs, 0.95).toFixed(0)} ms; write → first report: median ${p(c.writeToReportMs, 0.5).toFixed(0)} ms, p95 ${p(c.writeToReportMs, 0.95).toFixed(0)} ms (target p95 ≤ 3,000 ms)`,
    );
  }
  if (want('completions')) {
    const c = await runCompletionsBench();
    results.completions = c;
    console.log(
      `\nInline completions: a typing session of ${c.keysInSession} keys over this repository's source (gaps around 120 ms, pauses; the model stand-in right 7 times in 10), emulator with ${c.latencyMs} ms model latency`,
    );
    const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : '—');
    const share = (shown: number, of: number) => (of ? (100 * shown) / of : NaN);
    for (const r of [c.ours, c.fixed, c.oursSkipping]) {
      console.log(`  ${r.name}`);
      console.log(
        `    pauses with a suggestion shown: IntelliSense open ${r.pauses.listOpenShown} of ${r.pauses.listOpen} (${share(r.pauses.listOpenShown, r.pauses.listOpen).toFixed(0)}%), closed ${r.pauses.listClosedShown} of ${r.pauses.listClosed} (${share(r.pauses.listClosedShown, r.pauses.listClosed).toFixed(0)}%)`,
      );
      console.log(
        `    ${r.keystrokes} keys typed · ${r.requestsSent} requests sent, ${r.requestsCancelled} cancelled · ${r.cacheHits} cache hits · ${r.suggestionsShown} suggestions shown · ${r.acceptedChars} characters accepted`,
      );
      console.log(
        `    keystroke → ghost text p50 ${ms(r.p50Ms)}, p95 ${ms(r.p95Ms)} (from the model only: p50 ${ms(r.modelP50Ms)}, p95 ${ms(r.modelP95Ms)}) · beyond the pause and the model: p50 ${r.overheadP50Ms.toFixed(1)} ms, p95 ${r.overheadP95Ms.toFixed(1)} ms · ${r.tokensPerAcceptedChar.toFixed(0)} tokens sent per accepted character`,
      );
    }
    const perChar = (r: typeof c.ours) => (r.acceptedChars ? (r.requestsSent / r.acceptedChars) * 100 : Infinity);
    const fewer = c.ours.requestsSent < c.fixed.requestsSent;
    console.log(
      `  => requests: ${c.ours.requestsSent} vs ${c.fixed.requestsSent} (fewer: ${fewer ? 'met' : 'NOT met'}); per 100 accepted characters ${perChar(c.ours).toFixed(1)} vs ${perChar(c.fixed).toFixed(1)}; characters accepted ${c.ours.acceptedChars} vs ${c.fixed.acceptedChars}`,
    );
    console.log(
      `  => keystroke → ghost text p50 ${ms(c.ours.p50Ms)} vs ${ms(c.fixed.p50Ms)}, from the model ${ms(c.ours.modelP50Ms)} vs ${ms(c.fixed.modelP50Ms)} (lower: ${c.ours.p50Ms < c.fixed.p50Ms && c.ours.modelP50Ms < c.fixed.modelP50Ms ? 'met' : 'NOT met'})`,
    );
    const open = share(c.ours.pauses.listOpenShown, c.ours.pauses.listOpen);
    const closed = share(c.ours.pauses.listClosedShown, c.ours.pauses.listClosed);
    console.log(
      `  => shown at pauses with IntelliSense open ${open.toFixed(0)}% vs closed ${closed.toFixed(0)}% (target within 10 points: ${Math.abs(open - closed) <= 10 ? 'met' : 'NOT met'}); before this change ${share(c.oursSkipping.pauses.listOpenShown, c.oursSkipping.pauses.listOpen).toFixed(0)}% with it open`,
    );
    const n = await runNextEditBench();
    results.nextEdits = n;
    console.log(
      `\nNext-edit suggestions: ${n.renames} renames in this repository's files (each use renamed, then an unrelated comment line), emulator with ${c.latencyMs} ms model latency`,
    );
    console.log(
      `  ${n.edits} edits: ${n.accepted} accepted from suggestions, ${n.byHand} by hand · ${n.requests} requests (${((100 * n.requests) / n.edits).toFixed(0)} per 100 edits), ${n.shown} suggestions shown, ${n.accepted} accepted (${((100 * n.accepted) / Math.max(1, n.shown)).toFixed(0)}%) · ${Math.round(n.tokensSent / n.requests)} input tokens a request`,
    );
    console.log(
      `  => our overhead per request p50 ${n.overheadP50Ms.toFixed(2)} ms, p95 ${n.overheadP95Ms.toFixed(2)} ms (target ≤ 10 ms: ${n.overheadP95Ms <= 10 ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  => our overhead p95 ${c.ours.overheadP95Ms.toFixed(1)} ms (target ≤ 10 ms: ${c.ours.overheadP95Ms <= 10 ? 'met' : 'NOT met'}); tokens per accepted character ${c.ours.tokensPerAcceptedChar.toFixed(0)} vs ${c.fixed.tokensPerAcceptedChar.toFixed(0)}`,
    );
  }
  // The day in one window takes some 40 minutes: only when asked for by name.
  if (only.includes('soak')) {
    const s = runSoakBench();
    results.soak = s;
    const m = s.metrics;
    console.log(
      `\nA working day in one window (VS Code ${s.vscode}; 300 turns, 2,000 completions, 50 MCP kills, 500 saves, 30 Usage refreshes, 20 switches, a reload halfway, 5% of requests failing)`,
    );
    if (s.report) console.log(s.report);
    const pct = (v: number | undefined) => (v === undefined ? '—' : `${v >= 0 ? '+' : ''}${v.toFixed(1)}%`);
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    for (const h of [1, 2]) {
      const heap = m[`soakHalf${h}HeapGrowthPct`];
      const rss = m[`soakHalf${h}RssGrowthPct`];
      console.log(`  half ${h}: heap ${pct(heap)}, RSS ${pct(rss)} (target ≤ 10%: ${met(heap <= 10 && rss <= 10)})`);
    }
    console.log(
      `  turns: ${m.soakAnswered} answered, ${m.soakErrorCards} error cards (${m.soakPartialKept} kept their partial text), ${m.soakUnended} unended (target 0: ${met(m.soakUnended === 0)})`,
    );
    console.log(
      `  work: ${m.soakReads} reads, ${m.soakEditsAccepted} edits accepted, ${m.soakEditsRejected} rejected, ${m.soakCommands} commands, ${m.soakCompletionsAnswered} of ${m.soakCompletionsAsked} completions answered, ${m.soakKills} MCP kills, ${m.soakSaves} saves in ${m.soakIndexUpdates} index updates, ${m.soakRefreshes} Usage refreshes, ${m.soakSwitches} switches`,
    );
    console.log(
      `  faults: ${m.soakFaultedAnswers} chat answers began with an error status; requests sent again after their answer began: ${m.soakPaidTwice} (target 0: ${met(m.soakPaidTwice === 0)})`,
    );
    console.log(
      `  books: the gateway billed ${m.soakBilledCalls} calls, $${m.soakBilledDollars?.toFixed(6)}; the Usage view shows ${m.soakUsageViewRequests} calls, $${m.soakUsageViewDollars?.toFixed(6)} (target equal: ${met(m.soakBilledCalls === m.soakUsageViewRequests && Math.abs(m.soakBilledDollars - m.soakUsageViewDollars) < 1e-6)})`,
    );
    console.log(`  webview: ${m.soakWebviewNodesFirst} elements at the first row, at most ${m.soakWebviewNodesMax}`);
    console.log(`  => ${s.passed ? 'every bound held' : `FAILED:\n${s.failure}`}`);
  }
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(results, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
