/**
 * Embedding throughput over loopback: 10,000 inputs through `createBatched` (batches of 128, 4 in
 * flight) against the emulator running in its own process, base64 on the wire and, for
 * comparison, JSON floats.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { GatewayClient } from '../src/gateway';

export interface EmbeddingBenchResult {
  inputs: number;
  dimensions: number;
  runs: { wire: 'base64' | 'float'; batchSize: number; concurrency: number; ms: number; inputsPerSecond: number; requests: number }[];
}

const KEY = 'sk-emulator-demo-key-0000000000000000';

function corpus(n: number): string[] {
  const words = 'function return const async await stream parse token index vector cache request response error retry'.split(' ');
  return Array.from({ length: n }, (_, i) => {
    const parts: string[] = [];
    for (let j = 0; j < 30; j++) parts.push(words[(i * 7 + j * 13 + ((i * j) % 5)) % words.length]);
    return `// chunk ${i}\n${parts.join(' ')}`;
  });
}

async function startEmulator(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'test', 'emulator', 'cli.ts'), '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`emulator exited ${code}`)));
  });
  return { url, stop: () => child.kill() };
}

export async function runEmbeddingBench(): Promise<EmbeddingBenchResult> {
  const { url, stop } = await startEmulator();
  const texts = corpus(10_000);
  const model = 'text-embedding-3-small';
  const runs: EmbeddingBenchResult['runs'] = [];
  try {
    for (const wire of ['base64', 'float'] as const) {
      const client = new GatewayClient({ baseUrl: url, apiKey: KEY });
      // Warm-up: connections and JIT.
      await client.embeddings.create({ model, input: texts.slice(0, 32), encoding_format: wire });
      const batchSize = 128;
      const concurrency = 4;
      const t0 = performance.now();
      const out = await client.embeddings.createBatched(model, texts, { batchSize, concurrency, encoding_format: wire });
      const ms = performance.now() - t0;
      if (out.vectors.length !== texts.length || out.vectors.some((v) => v.length !== 1536)) throw new Error('embedding bench: wrong result');
      runs.push({ wire, batchSize, concurrency, ms, inputsPerSecond: (texts.length / ms) * 1000, requests: out.requests });
      await client.close();
    }
  } finally {
    stop();
  }
  return { inputs: texts.length, dimensions: 1536, runs };
}
