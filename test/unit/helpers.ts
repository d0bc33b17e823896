// Where a unit file runs: every file in the new-api pass; a file whose first lines say
// `// @profile-dependent: why` (it reads what one-api and new-api answer differently: the account
// API, usage and logs, relay errors, prices) runs in the one-api pass too. docs/testing.md.
import { strict as assert } from 'node:assert';
import { GatewayClient, ValidationError, type GatewayClientOptions } from '../../src/gateway';
import { GatewayEmulator } from '../emulator/server';

export const DEMO_KEY = GatewayEmulator.demoKey;

/** Starts an emulator for a suite and stops it after; `ctx.emu` is fresh per suite. */
export function useEmulator(): { emu: GatewayEmulator } {
  const holder = {} as { emu: GatewayEmulator };
  before(async () => {
    holder.emu = await GatewayEmulator.start();
  });
  after(async () => {
    await holder.emu.close();
  });
  return holder;
}

/** A client against the emulator with no real waits between retries; waits are recorded. */
export function clientFor(emu: GatewayEmulator, options: Partial<GatewayClientOptions> = {}) {
  const waits: number[] = [];
  const client = new GatewayClient({
    baseUrl: emu.url,
    apiKey: DEMO_KEY,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    ...options,
  });
  return { client, waits };
}

export const readFileTool = {
  type: 'function' as const,
  function: {
    name: 'read_file',
    description: 'Read a file of the workspace',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
};

export const listDirTool = {
  type: 'function' as const,
  function: {
    name: 'list_dir',
    description: 'List a folder of the workspace',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
};

/** Resolves when `check` is true, polling; rejects after `ms`. */
export async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Asserts that a call is refused before sending, with a message matching `pattern`. */
export async function refusedBeforeSending(emu: { requests: unknown[] }, call: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  const before = emu.requests.length;
  await assert.rejects(call(), (e: unknown) => e instanceof ValidationError && pattern.test(e.message));
  assert.equal(emu.requests.length, before, 'nothing was sent');
}

/** A deterministic stand-in for an embedding: the text's FNV-1a hash seeds `dim` values in [-0.5, 0.5). */
export function hashVector(text: string, dim: number): Float32Array {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return Float32Array.from({ length: dim }, (_, d) => {
    h = Math.imul(h ^ d, 16777619) >>> 0;
    return (h % 1000) / 1000 - 0.5;
  });
}
