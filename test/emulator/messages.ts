import { randomBytes } from 'node:crypto';
import { estimateTokens, jsonFragments, plan, textPieces, type ToolChoice, type ToolSpec, type Turn } from './assistant';
import { SseWriter } from './faults';
import { FIVE_MINUTES, ONE_HOUR, type CacheBlock } from './prompt-cache';
import { claudeError, sendJson, type Ctx } from './server';
import { asText } from './values';
import { messagesImageProblem } from './image-input';

type Json = Record<string, unknown>;

const BETA_TTL = 'extended-cache-ttl-2025-04-11';

function withoutCacheControl(b: Json): string {
  const { cache_control: _ignored, ...rest } = b;
  return JSON.stringify(rest);
}

function blockTokens(b: Json): number {
  if (b.type === 'image') return 1600;
  if (b.type === 'text') return estimateTokens(asText(b.text));
  if (b.type === 'tool_result') {
    const c = b.content;
    if (typeof c === 'string') return estimateTokens(c) + 4;
    if (Array.isArray(c)) return (c as Json[]).reduce((n, x) => n + blockTokens(x), 4);
    return 4;
  }
  return estimateTokens(withoutCacheControl(b));
}

/** Finds the first rule the spec's caching section forbids; returns a message, or undefined. */
function cacheRuleViolation(body: Json, hasBeta: boolean): string | undefined {
  let count = 0;
  const check = (b: Json, where: string): string | undefined => {
    const cc = b.cache_control as Json | undefined;
    if (!cc) return undefined;
    count++;
    if (cc.type !== 'ephemeral') return `${where}.cache_control.type: Input should be 'ephemeral'`;
    if (cc.ttl !== undefined && cc.ttl !== '5m' && cc.ttl !== '1h') return `${where}.cache_control.ttl: Input should be '5m' or '1h'`;
    if (cc.ttl === '1h' && !hasBeta) return `${where}.cache_control.ttl: the 1h TTL requires the anthropic-beta header ${BETA_TTL}`;
    if (b.type === 'thinking' || b.type === 'redacted_thinking') return `${where}: thinking blocks cannot be cached directly`;
    if (b.type === 'text' && asText(b.text) === '') return `${where}: cache_control cannot be set for empty text blocks`;
    return undefined;
  };
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  for (let i = 0; i < tools.length; i++) {
    const v = check(tools[i], `tools.${i}`);
    if (v) return v;
  }
  if (Array.isArray(body.system)) {
    for (let i = 0; i < body.system.length; i++) {
      const v = check((body.system as Json[])[i], `system.${i}`);
      if (v) return v;
    }
  }
  const messages = body.messages as Json[];
  for (let mi = 0; mi < messages.length; mi++) {
    const content = messages[mi].content;
    if (!Array.isArray(content)) continue;
    for (let bi = 0; bi < content.length; bi++) {
      const v = check(content[bi] as Json, `messages.${mi}.content.${bi}`);
      if (v) return v;
    }
  }
  if (count > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${count}.`;
  return undefined;
}

/** Lays the request out in cache order (tools, system, messages) as blocks with their breakpoints. */
function cacheBlocks(body: Json, hasBeta: boolean): CacheBlock[] {
  const blocks: CacheBlock[] = [];
  const ttl = (b: Json): number | undefined => {
    const cc = b.cache_control as Json | undefined;
    if (!cc) return undefined;
    return cc.ttl === '1h' && hasBeta ? ONE_HOUR : FIVE_MINUTES;
  };
  for (const t of (body.tools as Json[] | undefined) ?? []) {
    blocks.push({ identity: `tool:${withoutCacheControl(t)}`, tokens: estimateTokens(withoutCacheControl(t)), breakpointTtlMs: ttl(t) });
  }
  if (typeof body.system === 'string') blocks.push({ identity: `system:${body.system}`, tokens: estimateTokens(body.system) });
  else if (Array.isArray(body.system)) {
    for (const b of body.system as Json[]) blocks.push({ identity: `system:${withoutCacheControl(b)}`, tokens: blockTokens(b), breakpointTtlMs: ttl(b) });
  }
  for (const m of body.messages as Json[]) {
    if (typeof m.content === 'string') {
      blocks.push({ identity: `${String(m.role)}:${JSON.stringify(m.content)}`, tokens: estimateTokens(m.content) + 4 });
    } else {
      for (const b of m.content as Json[]) {
        blocks.push({ identity: `${String(m.role)}:${withoutCacheControl(b)}`, tokens: blockTokens(b), breakpointTtlMs: ttl(b) });
      }
    }
  }
  return blocks;
}

function toTurns(messages: Json[]): Turn[] {
  const names = new Map<string, string>();
  const turns: Turn[] = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : ((m.content as Json[]) ?? []);
    const turn: Turn = { role, text: '', images: 0, toolResults: [], toolCalls: [] };
    for (const b of blocks) {
      // A condensed conversation's summary, sent in one message with the question after it, is
      // read as what it is: an earlier part of the conversation, not the question.
      if (b.type === 'text' && role === 'user' && asText(b.text).startsWith('[The conversation before this point was condensed')) {
        turns.push({ role, text: asText(b.text), images: 0, toolResults: [], toolCalls: [] });
        continue;
      }
      if (b.type === 'text') turn.text += (turn.text ? '\n' : '') + asText(b.text);
      else if (b.type === 'image') turn.images++;
      else if (b.type === 'tool_use') {
        names.set(String(b.id), String(b.name));
        turn.toolCalls.push(String(b.name));
        (turn.callArgs ??= []).push(b.input && typeof b.input === 'object' ? (b.input as Record<string, unknown>) : {});
      } else if (b.type === 'tool_result') {
        const c = b.content;
        const text = typeof c === 'string' ? c : Array.isArray(c) ? (c as Json[]).map((x) => asText(x.text)).join('\n') : '';
        turn.toolResults.push({ name: names.get(String(b.tool_use_id)) ?? 'tool', content: text, isError: b.is_error === true });
      }
    }
    turns.push(turn);
  }
  return turns;
}

function toolChoiceOf(v: unknown): ToolChoice | undefined {
  if (v === undefined) return 'auto';
  const t = (v as Json | null)?.type;
  if (t === 'auto') return 'auto';
  if (t === 'none') return 'none';
  if (t === 'any') return 'required';
  if (t === 'tool' && typeof (v as Json).name === 'string') return { name: String((v as Json).name) };
  return undefined;
}

export async function handleMessages(ctx: Ctx): Promise<void> {
  const { emu, req, res } = ctx;
  // The spec's header is x-api-key; like new-api, a Bearer key is accepted too (newer official
  // SDKs send that).
  const header = typeof req.headers['x-api-key'] === 'string' && req.headers['x-api-key'] ? 'x-api-key' : 'bearer';
  // The spec's version is 2023-06-01; gateways forward the header, and newer SDKs send later
  // dates, so any well-formed version from that one on is accepted.
  // A missing version is filled in (new-api does: 2023-06-01); a malformed or older one is refused.
  const version = asText(req.headers['anthropic-version']) || '2023-06-01';
  if (!/^\d{4}-\d{2}-\d{2}$/.test(version) || version < '2023-06-01') {
    return claudeError(res, 400, `anthropic-version: "${version}" is not a supported version (2023-06-01 or later)`);
  }
  const betas = asText(req.headers['anthropic-beta'])
    .split(',')
    .map((s) => s.trim());
  const hasBeta = betas.includes(BETA_TTL);
  const body = ctx.body as Json | undefined;
  if (!body || typeof body !== 'object') return claudeError(res, 400, 'The request body must be a JSON object.');
  const model = emu.requireModel(ctx, body.model, 'claude');
  if (!model) return;
  const auth = emu.authorize(ctx, header, model, 'claude');
  if (!auth.ok) return;
  if (!Array.isArray(body.messages) || body.messages.length === 0) return claudeError(res, 400, 'messages: at least one message is required');
  for (const [i, m] of (body.messages as Json[]).entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return claudeError(res, 400, `messages.${i}.role: Input should be 'user' or 'assistant'`);
  }
  if (body.temperature !== undefined && !(typeof body.temperature === 'number' && body.temperature > 0 && body.temperature <= 1)) {
    return claudeError(res, 400, 'temperature: must be greater than 0.0 and at most 1.0');
  }
  const imageProblem = messagesImageProblem(body.messages as Json[]);
  if (imageProblem) return claudeError(res, 400, imageProblem);
  const violation = cacheRuleViolation(body, hasBeta);
  if (violation) return claudeError(res, 400, violation);
  const choice = toolChoiceOf(body.tool_choice);
  if (!choice) return claudeError(res, 400, 'tool_choice: type must be auto, any, none or tool');

  const tools: ToolSpec[] = ((body.tools as Json[] | undefined) ?? []).map((t) => ({
    name: String(t.name),
    description: typeof t.description === 'string' ? t.description : undefined,
    parameters: t.input_schema as ToolSpec['parameters'],
  }));
  const thinkingOn = (body.thinking as Json | undefined)?.type === 'enabled';
  const p = plan(model.id, toTurns(body.messages as Json[]), tools, choice, thinkingOn);

  const blocks = cacheBlocks(body, hasBeta);
  const promptTokens = blocks.reduce((n, b) => n + b.tokens, 0);
  // Anthropic's refusal for a prompt over the window.
  if (model.contextWindow && promptTokens > model.contextWindow)
    return claudeError(res, 400, `prompt is too long: ${promptTokens} tokens > ${model.contextWindow} maximum`);
  const usage = emu.cache.process(`org-${auth.user.id}`, `${model.id}\u0000${JSON.stringify(body.tool_choice ?? null)}`, blocks, model.cacheMinTokens);
  // tool_choice.disable_parallel_tool_use allows one tool call per reply.
  const oneCall = (body.tool_choice as Json | undefined)?.disable_parallel_tool_use === true;
  let calls = (oneCall ? p.toolCalls.slice(0, 1) : p.toolCalls).map((c) => ({
    id: `toolu_${randomBytes(12).toString('base64url')}`,
    name: c.name,
    input: c.arguments,
  }));
  let outputTokens = estimateTokens(p.text) + estimateTokens(p.thinking ?? '') + calls.reduce((n, c) => n + estimateTokens(JSON.stringify(c.input)), 0);
  let stopReason = calls.length > 0 ? 'tool_use' : 'end_turn';
  // max_tokens cuts the reply where the model would have stopped.
  const limit = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
  if (limit !== undefined && outputTokens > limit) {
    p.text = p.text.slice(0, Math.max(0, limit - estimateTokens(p.thinking ?? '')) * 4);
    calls = [];
    outputTokens = limit;
    stopReason = 'max_tokens';
  }
  const billedInput =
    usage.input_tokens +
    usage.cache_creation.ephemeral_5m_input_tokens * 1.25 +
    usage.cache_creation.ephemeral_1h_input_tokens * 2 +
    usage.cache_read_input_tokens * 0.1;
  emu.store.spend(auth.key, (billedInput + outputTokens * 4) * model.ratio, {
    model: model.id,
    prompt: usage.input_tokens,
    completion: outputTokens,
    cacheRead: usage.cache_read_input_tokens,
    cacheWrite: usage.cache_creation.ephemeral_5m_input_tokens + usage.cache_creation.ephemeral_1h_input_tokens,
    stream: body.stream === true,
  });

  const id = `msg_${randomBytes(12).toString('base64url')}`;
  const signature = randomBytes(24).toString('base64');
  const content: Json[] = [];
  if (p.thinking) content.push({ type: 'thinking', thinking: p.thinking, signature });
  if (p.text) content.push({ type: 'text', text: p.text });
  for (const c of calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
  const fullUsage = { ...usage, output_tokens: outputTokens, service_tier: 'standard' };

  if (body.stream !== true) {
    return sendJson(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model: model.id,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: fullUsage,
    });
  }

  const writer = new SseWriter(res, ctx.faults, (message) => ({
    event: 'error',
    data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message } }),
  }));
  writer.onClientClose = () => emu.clientClosedStreams++;
  writer.start();
  const send = (type: string, data: Json) => writer.event(type, JSON.stringify({ type, ...data }));
  const startUsage = { ...usage, output_tokens: 1 };
  if (
    !(await send('message_start', {
      message: { id, type: 'message', role: 'assistant', model: model.id, content: [], stop_reason: null, stop_sequence: null, usage: startUsage },
    }))
  )
    return;
  let index = 0;
  if (p.thinking) {
    if (!(await send('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } }))) return;
    for (const piece of textPieces(p.thinking)) {
      if (!(await send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }))) return;
    }
    if (!(await send('content_block_delta', { index, delta: { type: 'signature_delta', signature } }))) return;
    if (!(await send('content_block_stop', { index }))) return;
    index++;
  }
  if (p.text) {
    if (!(await send('content_block_start', { index, content_block: { type: 'text', text: '' } }))) return;
    if (!(await send('ping', {}))) return;
    for (const piece of textPieces(p.text)) {
      if (!(await send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }))) return;
    }
    if (!(await send('content_block_stop', { index }))) return;
    index++;
  }
  for (const c of calls) {
    if (!(await send('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } }))) return;
    for (const frag of ['', ...jsonFragments(JSON.stringify(c.input))]) {
      if (!(await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: frag } }))) return;
    }
    if (!(await send('content_block_stop', { index }))) return;
    index++;
  }
  const deltaUsage = {
    output_tokens: outputTokens,
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
  };
  if (!(await send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: deltaUsage }))) return;
  if (!(await send('message_stop', {}))) return;
  writer.end();
}
