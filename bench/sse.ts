/**
 * SSE decode-and-merge benchmark: the same recorded 20,000-chunk streams, served on loopback by a
 * separate process in 1-4 KB writes, consumed by our client, the official SDKs (helper and raw
 * stream) and a minimal hand-written parser (the floor). Every run checks the merged text and
 * tool-argument lengths against the recording, so a fast wrong parser cannot win.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { Agent, request } from 'undici';
import { GatewayClient, SSEDecoder } from '../src/gateway';

/** The fields the hand-written floor parser reads from either stream format. */
interface HandEvent {
  choices?: { delta?: { content?: string; tool_calls?: { index: number; function?: { arguments?: string } }[] } }[];
  type?: string;
  index: number;
  delta: { type: string; text: string; partial_json: string };
}

interface Meta {
  bytes: number;
  events: number;
  textLength: number;
  argumentLengths: number[];
}

interface Merged {
  text: string;
  args: string[];
}

type Runner = () => Promise<Merged>;

export interface SseBenchResult {
  format: 'chat completions' | 'messages';
  events: number;
  bytes: number;
  medians: Record<string, number>;
  cpuUsPerEvent: Record<string, number>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function shuffle<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function check(name: string, got: Merged, meta: Meta): void {
  if (got.text.length !== meta.textLength) throw new Error(`${name}: text length ${got.text.length}, expected ${meta.textLength}`);
  meta.argumentLengths.forEach((len, i) => {
    if ((got.args[i] ?? '').length !== len) throw new Error(`${name}: arguments ${i} length ${(got.args[i] ?? '').length}, expected ${len}`);
  });
}

/** The floor: TextDecoder, split on blank lines, JSON.parse, and the least merging that checks out. */
async function handParser(url: string, dispatcher: Agent, format: 'openai' | 'anthropic'): Promise<Merged> {
  const res = await request(url, { method: 'POST', body: '{}', dispatcher });
  const decoder = new TextDecoder();
  let buf = '';
  const text: string[] = [];
  const args: string[][] = [[], [], []];
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk as Buffer, { stream: true });
    const events = buf.split('\n\n');
    buf = events.pop() ?? '';
    for (const ev of events) {
      const at = ev.indexOf('data: ');
      if (at === -1) continue;
      const data = ev.slice(at + 6);
      if (data === '[DONE]') continue;
      const j = JSON.parse(data) as HandEvent;
      if (format === 'openai') {
        const d = j.choices?.[0]?.delta;
        if (!d) continue;
        if (d.content) text.push(d.content);
        if (d.tool_calls) for (const t of d.tool_calls) if (t.function?.arguments) args[t.index].push(t.function.arguments);
      } else if (j.type === 'content_block_delta') {
        if (j.delta.type === 'text_delta') text.push(j.delta.text);
        else if (j.delta.type === 'input_json_delta') args[j.index - 1].push(j.delta.partial_json);
      }
    }
  }
  return { text: text.join(''), args: args.map((a) => a.join('')).filter((a) => a.length > 0) };
}

async function measure(runners: Record<string, Runner>, meta: Meta, warmups = 2, rounds = 3, perRound = 5) {
  const names = Object.keys(runners);
  for (const name of names) for (let i = 0; i < warmups; i++) check(name, await runners[name](), meta);
  const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (const name of shuffle(names, 17 + r)) {
      for (let i = 0; i < perRound; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const got = await runners[name]();
        wall[name].push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        cpu[name].push(c.user + c.system);
        check(name, got, meta);
      }
    }
  }
  return {
    medians: Object.fromEntries(names.map((n) => [n, median(wall[n])])),
    cpuUsPerEvent: Object.fromEntries(names.map((n) => [n, median(cpu[n]) / meta.events])),
  };
}

export async function runSseBench(): Promise<SseBenchResult[]> {
  const server = fork(join(__dirname, 'stream-server.ts'), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const { port, meta } = await new Promise<{ port: number; meta: Record<string, Meta> }>((resolve) => server.once('message', resolve as never));
  const base = `http://127.0.0.1:${port}`;
  const dispatcher = new Agent({ keepAliveTimeout: 60_000 });
  try {
    const ours = new GatewayClient({ baseUrl: `${base}/openai`, apiKey: 'bench' });
    const oursMessages = new GatewayClient({ baseUrl: `${base}/anthropic`, apiKey: 'bench' });
    const openai = new OpenAI({ baseURL: `${base}/openai/v1`, apiKey: 'bench', maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: `${base}/anthropic`, apiKey: 'bench', maxRetries: 0 });
    const chatBody = { model: 'bench', messages: [{ role: 'user' as const, content: 'x' }] };
    const msgBody = { model: 'bench', max_tokens: 32_000, messages: [{ role: 'user' as const, content: 'x' }] };

    const fromCompletion = (c: { choices: { message: { content?: string | null; tool_calls?: unknown[] } }[] }): Merged => ({
      text: c.choices[0].message.content ?? '',
      args: ((c.choices[0].message.tool_calls ?? []) as { function: { arguments: string } }[]).map((t) => t.function.arguments),
    });
    const fromMessage = (m: { content: unknown[] }): Merged => {
      const blocks = m.content as { type: string; text?: string; input?: unknown }[];
      return {
        text: blocks
          .filter((b) => b.type === 'text')
          .map((b) => b.text)
          .join(''),
        // Inputs were parsed at the block end; re-serialised with the recording's key order.
        args: blocks.filter((b) => b.type === 'tool_use').map((b) => JSON.stringify(b.input)),
      };
    };

    const chat = await measure(
      {
        'ours (stream → finalCompletion)': async () => fromCompletion(await ours.chat.completions.stream(chatBody).finalCompletion()),
        'openai-node helper (stream → finalChatCompletion)': async () =>
          fromCompletion(await openai.chat.completions.stream({ ...chatBody, stream: true }).finalChatCompletion()),
        'openai-node raw stream (create stream:true, merged by hand)': async () => {
          const s = await openai.chat.completions.create({ ...chatBody, stream: true });
          const text: string[] = [];
          const args: string[][] = [[], []];
          for await (const c of s) {
            const d = c.choices[0]?.delta;
            if (!d) continue;
            if (d.content) text.push(d.content);
            if (d.tool_calls) for (const t of d.tool_calls) if (t.function?.arguments) args[t.index].push(t.function.arguments);
          }
          return { text: text.join(''), args: args.map((a) => a.join('')) };
        },
        'hand parser (floor)': () => handParser(`${base}/openai/v1/chat/completions`, dispatcher, 'openai'),
      },
      meta['/openai'],
    );

    const messages = await measure(
      {
        'ours (stream → finalMessage)': async () => fromMessage(await oursMessages.messages.stream(msgBody).finalMessage()),
        'anthropic-sdk helper (stream → finalMessage)': async () => fromMessage(await anthropic.messages.stream(msgBody).finalMessage()),
        'anthropic-sdk raw stream (create stream:true, merged by hand)': async () => {
          const s = await anthropic.messages.create({ ...msgBody, stream: true });
          const text: string[] = [];
          const args: string[][] = [[], []];
          for await (const ev of s) {
            if (ev.type !== 'content_block_delta') continue;
            if (ev.delta.type === 'text_delta') text.push(ev.delta.text);
            else if (ev.delta.type === 'input_json_delta') args[ev.index - 1].push(ev.delta.partial_json);
          }
          return { text: text.join(''), args: args.map((a) => a.join('')) };
        },
        'hand parser (floor)': () => handParser(`${base}/anthropic/v1/messages`, dispatcher, 'anthropic'),
      },
      meta['/anthropic'],
    );
    await Promise.all([ours.close(), oursMessages.close(), dispatcher.close()]);
    return [
      { format: 'chat completions', events: meta['/openai'].events, bytes: meta['/openai'].bytes, ...chat },
      { format: 'messages', events: meta['/anthropic'].events, bytes: meta['/anthropic'].bytes, ...messages },
    ];
  } finally {
    server.kill();
  }
}

/** One huge event (a model that sends a whole file in one delta) split into 64 KB reads. */
export function runLargeEventBench(sizesMb: number[] = [8, 32]): { mb: number; ms: number }[] {
  const piece = 'x'.repeat(64 * 1024);
  return sizesMb.map((mb) => {
    const reads = (mb * 1024 * 1024) / piece.length;
    let best = Infinity;
    for (let run = 0; run < 3; run++) {
      const decoder = new SSEDecoder();
      const t = performance.now();
      decoder.feedText('data: ', () => undefined);
      for (let i = 0; i < reads; i++) decoder.feedText(piece, () => undefined);
      decoder.feedText('\n\n', () => undefined);
      best = Math.min(best, performance.now() - t);
    }
    return { mb, ms: best };
  });
}
