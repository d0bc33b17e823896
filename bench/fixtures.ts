/**
 * Deterministic "recorded" streams for the SSE benchmark, shaped like real captures (see the wire
 * notes): 16,000 text deltas of 1-3 tokens with accents, CJK, emoji and JSON escapes, then two
 * tool calls whose arguments arrive in 4,000 fragments, then the finish and usage chunks.
 */
export interface RecordedStream {
  bytes: Buffer;
  events: number;
  textLength: number;
  argumentLengths: number[];
}

const VOCAB = [
  'the',
  ' stream',
  ' parser',
  ' héllo',
  ' 日本語',
  ' 🚀',
  ' "quoted"',
  ' back\\slash',
  ' tab\there',
  ' line\nbreak',
  ' cache',
  ' token',
  ',',
  '.',
  ' über',
  ' naïve',
  ' 漢字',
  ' 😀😀',
  ' {json}',
  ' </tag>',
  ' 42',
  ' model',
  ' émoji',
];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function textDeltas(count: number, rnd: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rnd() * 3);
    let piece = '';
    for (let j = 0; j < n; j++) piece += VOCAB[Math.floor(rnd() * VOCAB.length)];
    out.push(piece);
  }
  return out;
}

function argumentFragments(callIndex: number, count: number, rnd: () => number): string[] {
  const body = textDeltas(count * 2, rnd).join('');
  const json = JSON.stringify({ path: `src/file_${callIndex}.ts`, content: body });
  const size = Math.ceil(json.length / count);
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

const TEXT_DELTAS = 16_000;
const FRAGMENTS_PER_CALL = 2_000;

export function openAiStream(): RecordedStream {
  const rnd = rng(7);
  const env =
    '"id":"chatcmpl-9tZXbQk2LmTqAF8sJc4wYq1n","object":"chat.completion.chunk","created":1723031665,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_845eaabc1f","service_tier":"default"';
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: {${env},"choices":[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],"usage":null,"obfuscation":"r4N7vQ2m"}\n\n`;
  const parts: string[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  const deltas = textDeltas(TEXT_DELTAS, rnd);
  for (const d of deltas) parts.push(chunk({ content: d }));
  const argumentLengths: number[] = [];
  for (let c = 0; c < 2; c++) {
    const frags = argumentFragments(c, FRAGMENTS_PER_CALL, rnd);
    argumentLengths.push(frags.join('').length);
    parts.push(chunk({ tool_calls: [{ index: c, id: `call_${c}abc`, type: 'function', function: { name: 'write_file', arguments: '' } }] }));
    for (const f of frags) parts.push(chunk({ tool_calls: [{ index: c, function: { arguments: f } }] }));
  }
  parts.push(chunk({}, 'tool_calls'));
  parts.push(`data: {${env},"choices":[],"usage":{"prompt_tokens":1017,"completion_tokens":24000,"total_tokens":25017}}\n\n`);
  parts.push('data: [DONE]\n\n');
  return { bytes: Buffer.from(parts.join(''), 'utf8'), events: parts.length, textLength: deltas.join('').length, argumentLengths };
}

export function anthropicStream(): RecordedStream {
  const rnd = rng(7);
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const parts: string[] = [
    ev('message_start', {
      message: {
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-sonnet-emu',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1017, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ];
  const deltas = textDeltas(TEXT_DELTAS, rnd);
  deltas.forEach((d, i) => {
    if (i % 1000 === 0) parts.push(ev('ping', {}));
    parts.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: d } }));
  });
  parts.push(ev('content_block_stop', { index: 0 }));
  const argumentLengths: number[] = [];
  for (let c = 0; c < 2; c++) {
    const index = c + 1;
    const frags = argumentFragments(c, FRAGMENTS_PER_CALL, rnd);
    argumentLengths.push(frags.join('').length);
    parts.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_0${c}`, name: 'write_file', input: {} } }));
    for (const f of frags) parts.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: f } }));
    parts.push(ev('content_block_stop', { index }));
  }
  parts.push(ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 24000 } }));
  parts.push(ev('message_stop', {}));
  return { bytes: Buffer.from(parts.join(''), 'utf8'), events: parts.length, textLength: deltas.join('').length, argumentLengths };
}
