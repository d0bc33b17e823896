/**
 * `POST /v1/responses` as new-api relays it (one-api has no such route), with the shapes of the
 * official `openai` SDK's types: input items (messages, function calls and their outputs,
 * reasoning items), function tools, `reasoning.effort`/`summary`, `store: false` with
 * `include: ["reasoning.encrypted_content"]`, and the streamed event sequence (`response.created`
 * … `response.completed`, each with a `sequence_number`). The reasoning model refuses a tool step
 * whose function call comes without the reasoning item that produced it, as OpenAI does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { argsObject, estimateTokens, jsonFragments, plan, textPieces, type ToolChoice, type ToolSpec, type Turn } from './assistant';
import { SseWriter } from './faults';
import { openAiError, sendJson, type Ctx } from './server';
import { asText } from './values';

type Json = Record<string, unknown>;

/** Models that reason (reasoning items with summaries and encrypted content). */
export const REASONING_RESPONSES_MODELS = new Set(['gpt-5-codex-emu']);

const SEAL = randomBytes(16).toString('hex');
function seal(text: string): string {
  const body = Buffer.from(JSON.stringify({ t: text })).toString('base64');
  return `${body}.${createHash('sha256')
    .update(SEAL + body)
    .digest('base64url')
    .slice(0, 16)}`;
}
function unseal(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  const [body, mac] = v.split('.');
  return (
    !!body &&
    mac ===
      createHash('sha256')
        .update(SEAL + body)
        .digest('base64url')
        .slice(0, 16)
  );
}
/** The text a sealed item carries (after `unseal` said it is ours). */
function sealedText(v: string): string {
  try {
    return asText((JSON.parse(Buffer.from(v.split('.')[0], 'base64').toString('utf8')) as Json).t);
  } catch {
    return '';
  }
}

function partsText(content: unknown): { text: string; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: '', images: 0 };
  let text = '';
  let images = 0;
  for (const p of content as Json[]) {
    if ((p?.type === 'input_text' || p?.type === 'output_text') && typeof p.text === 'string') text += (text ? '\n' : '') + p.text;
    if (p?.type === 'input_image') images++;
  }
  return { text, images };
}

interface Parsed {
  turns: Turn[];
  tokens: number;
  problem?: string;
  /** The texts of compaction items read. */
  compacted?: string[];
}

/** Input items into the planner's turns; checks the reasoning model's item order. */
function toTurns(input: unknown, instructions: unknown, reasoningModel: boolean): Parsed {
  const items: Json[] = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? (input as Json[]) : [];
  const turns: Turn[] = [];
  const names = new Map<string, string>();
  let tokens = estimateTokens(asText(instructions));
  let reasoningSinceUser = false;
  const compacted: string[] = [];
  for (const [i, item] of items.entries()) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      const { text, images } = partsText(item.content);
      tokens += estimateTokens(text) + images * 765 + 4;
      if (item.role === 'user') {
        // Images right after tool outputs (a tool's screenshot) are read with them, not as a new question.
        const last = turns[turns.length - 1];
        if (images > 0 && last?.role === 'user' && last.toolResults.length > 0) last.images += images;
        else turns.push({ role: 'user', text, images, toolResults: [], toolCalls: [] });
        reasoningSinceUser = false;
      } else if (item.role === 'assistant') {
        const last = turns[turns.length - 1];
        if (last?.role === 'assistant' && last.toolCalls.length === 0) last.text += text;
        else turns.push({ role: 'assistant', text, images: 0, toolResults: [], toolCalls: [] });
      }
    } else if (type === 'reasoning') {
      if (!unseal(item.encrypted_content))
        return { turns, tokens, problem: `Item at input[${i}] of type 'reasoning' has encrypted_content that could not be verified.` };
      reasoningSinceUser = true;
    } else if (type === 'compaction') {
      // What /v1/responses/compact made: the model reads what it kept (counted), nothing else.
      if (!unseal(item.encrypted_content))
        return { turns, tokens, problem: `Item at input[${i}] of type 'compaction' has encrypted_content that could not be verified.` };
      tokens += estimateTokens(sealedText(item.encrypted_content as string));
      compacted.push(sealedText(item.encrypted_content as string));
    } else if (type === 'function_call') {
      // OpenAI's rule: an output item sent back by id needs the reasoning item that came before it.
      if (reasoningModel && item.id !== undefined && !reasoningSinceUser) {
        return {
          turns,
          tokens,
          problem: `Item '${asText(item.id) || `input[${i}]`}' of type 'function_call' was provided without its required 'reasoning' item. With store: false, pass back the reasoning items (include: ["reasoning.encrypted_content"]).`,
        };
      }
      names.set(asText(item.call_id), asText(item.name));
      tokens += estimateTokens(asText(item.arguments));
      const last = turns[turns.length - 1];
      if (last?.role === 'assistant') {
        last.toolCalls.push(asText(item.name));
        (last.callArgs ??= []).push(argsObject(item.arguments));
      } else turns.push({ role: 'assistant', text: '', images: 0, toolResults: [], toolCalls: [asText(item.name)], callArgs: [argsObject(item.arguments)] });
    } else if (type === 'function_call_output') {
      const callId = asText(item.call_id);
      if (!names.has(callId)) return { turns, tokens, problem: `No tool call found for function call output with call_id ${callId}.` };
      const text = typeof item.output === 'string' ? item.output : partsText(item.output).text;
      tokens += estimateTokens(text);
      const result = { name: names.get(callId) ?? 'tool', content: text, isError: /^error\b/i.test(text) };
      const last = turns[turns.length - 1];
      if (last?.role === 'user' && last.toolResults.length > 0) last.toolResults.push(result);
      else turns.push({ role: 'user', text: '', images: 0, toolResults: [result], toolCalls: [] });
    } else {
      return {
        turns,
        tokens,
        problem: `Invalid value: '${asText(type)}'. Supported values are: 'message', 'function_call', 'function_call_output', 'reasoning' and 'compaction'.`,
      };
    }
  }
  return { turns, tokens, compacted };
}

function toolChoiceOf(v: unknown): ToolChoice | undefined {
  if (v === undefined || v === 'auto' || v === 'none' || v === 'required') return v ?? 'auto';
  if (v && typeof v === 'object' && (v as Json).type === 'function' && typeof (v as Json).name === 'string') return { name: (v as Json).name as string };
  return undefined;
}

export async function handleResponses(ctx: Ctx): Promise<void> {
  const { emu, res } = ctx;
  if (emu.profile !== 'new-api') {
    // one-api's router has no such route.
    return sendJson(res, 404, { error: { message: `Invalid URL (POST ${ctx.path})`, type: 'invalid_request_error', param: '', code: '' } });
  }
  const begun = emu.beginJson(ctx, 'chat');
  if (!begun) return;
  const { body, model, auth } = begun;
  if (body.input === undefined) return openAiError(res, 400, "Missing required parameter: 'input'.", 'invalid_request_error', 'missing_required_parameter');
  if (body.messages !== undefined)
    return openAiError(
      res,
      400,
      "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'.",
      'invalid_request_error',
      'unsupported_parameter',
    );
  const effort = (body.reasoning as Json | undefined)?.effort;
  const reasoningModel = REASONING_RESPONSES_MODELS.has(model.id);
  if (effort !== undefined && !['minimal', 'low', 'medium', 'high', 'none', 'xhigh'].includes(asText(effort))) {
    return openAiError(
      res,
      400,
      `Invalid value: '${asText(effort)}'. Supported values are: 'minimal', 'low', 'medium', and 'high'.`,
      'invalid_request_error',
      'invalid_value',
    );
  }
  if (effort !== undefined && !reasoningModel)
    return openAiError(
      res,
      400,
      `Unsupported parameter: 'reasoning.effort' is not supported with this model.`,
      'invalid_request_error',
      'unsupported_parameter',
    );
  const tools: ToolSpec[] = [];
  for (const t of Array.isArray(body.tools) ? (body.tools as Json[]) : []) {
    if (t.type !== 'function' || typeof t.name !== 'string')
      return openAiError(res, 400, "Missing required parameter: 'tools[0].name'.", 'invalid_request_error', 'missing_required_parameter');
    tools.push({ name: t.name, description: asText(t.description), parameters: t.parameters ?? {} });
  }
  const choice = toolChoiceOf(body.tool_choice);
  if (!choice) return openAiError(res, 400, "Invalid value for 'tool_choice'.", 'invalid_request_error', 'invalid_value');
  const parsed = toTurns(body.input, body.instructions, reasoningModel);
  if (parsed.problem) return openAiError(res, 400, parsed.problem, 'invalid_request_error', 'invalid_request_error');
  const promptTokens = parsed.tokens + (tools.length ? estimateTokens(JSON.stringify(body.tools)) : 0);
  if (model.contextWindow && promptTokens > model.contextWindow) {
    return openAiError(
      res,
      400,
      `Your input exceeds the context window of this model. Please adjust your input and try again.`,
      'invalid_request_error',
      'context_length_exceeded',
    );
  }
  const p = plan(model.id, parsed.turns, tools, choice, reasoningModel);
  const calls = (body.parallel_tool_calls === false ? p.toolCalls.slice(0, 1) : p.toolCalls).map((c) => ({
    id: `fc_${randomBytes(12).toString('hex')}`,
    callId: `call_${randomBytes(9).toString('base64url')}`,
    name: c.name,
    args: JSON.stringify(c.arguments),
  }));
  const summary = reasoningModel ? (p.thinking ?? 'Working out what to do next.') : undefined;
  const wantsSummary = (body.reasoning as Json | undefined)?.summary !== undefined;
  const encrypted = Array.isArray(body.include) && (body.include as unknown[]).includes('reasoning.encrypted_content');
  const reasoningTokens = summary ? estimateTokens(summary) * 3 : 0;
  const outputTokens = estimateTokens(p.text) + calls.reduce((n, c) => n + estimateTokens(c.args), 0) + reasoningTokens;
  const cached = emu.automaticCache.lookup(
    auth.key.key,
    [body.instructions, body.tools, ...(Array.isArray(body.input) ? (body.input as unknown[]) : [body.input])],
    promptTokens,
  );
  emu.store.spend(auth.key, (promptTokens - cached * 0.9 + outputTokens * 4) * model.ratio, {
    model: model.id,
    prompt: promptTokens,
    completion: outputTokens,
    stream: body.stream === true,
  });

  const id = `resp_${randomBytes(16).toString('hex')}`;
  const created = Math.floor(emu.clock.now() / 1000);
  const reasoningItem = summary
    ? {
        id: `rs_${randomBytes(12).toString('hex')}`,
        type: 'reasoning',
        summary: wantsSummary ? [{ type: 'summary_text', text: summary }] : [],
        ...(encrypted ? { encrypted_content: seal(summary) } : {}),
      }
    : undefined;
  const messageItem = p.text
    ? {
        id: `msg_${randomBytes(12).toString('hex')}`,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: p.text, annotations: [], logprobs: [] }],
      }
    : undefined;
  const callItems = calls.map((c) => ({ id: c.id, type: 'function_call', status: 'completed', call_id: c.callId, name: c.name, arguments: c.args }));
  const output = [...(reasoningItem ? [reasoningItem] : []), ...(messageItem ? [messageItem] : []), ...callItems];
  const usage = {
    input_tokens: promptTokens,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: promptTokens + outputTokens,
  };
  const response = (status: string, out: unknown[], withUsage: boolean) => ({
    id,
    object: 'response',
    created_at: created,
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: model.id,
    output: out,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: effort ?? null, summary: (body.reasoning as Json | undefined)?.summary ?? null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: withUsage ? usage : null,
    metadata: {},
  });
  if (body.stream !== true) return sendJson(res, 200, response('completed', output, true));

  const writer = new SseWriter(res, ctx.faults, (message) => ({
    event: 'error',
    data: JSON.stringify({ type: 'error', code: 'server_error', message, param: null, sequence_number: 0 }),
  }));
  writer.onClientClose = () => emu.clientClosedStreams++;
  writer.start();
  let seq = 0;
  const send = (type: string, fields: Json) => writer.event(type, JSON.stringify({ type, sequence_number: seq++, ...fields }));
  if (!(await send('response.created', { response: response('in_progress', [], false) }))) return;
  if (!(await send('response.in_progress', { response: response('in_progress', [], false) }))) return;
  let index = 0;
  if (reasoningItem) {
    const at = index++;
    if (!(await send('response.output_item.added', { output_index: at, item: { ...reasoningItem, summary: [] } }))) return;
    if (wantsSummary && summary) {
      const ids = { item_id: reasoningItem.id, output_index: at, summary_index: 0 };
      if (!(await send('response.reasoning_summary_part.added', { ...ids, part: { type: 'summary_text', text: '' } }))) return;
      for (const piece of textPieces(summary)) if (!(await send('response.reasoning_summary_text.delta', { ...ids, delta: piece }))) return;
      if (!(await send('response.reasoning_summary_text.done', { ...ids, text: summary }))) return;
      if (!(await send('response.reasoning_summary_part.done', { ...ids, part: { type: 'summary_text', text: summary } }))) return;
    }
    if (!(await send('response.output_item.done', { output_index: at, item: reasoningItem }))) return;
  }
  if (messageItem) {
    const at = index++;
    const ids = { item_id: messageItem.id, output_index: at, content_index: 0 };
    if (!(await send('response.output_item.added', { output_index: at, item: { ...messageItem, status: 'in_progress', content: [] } }))) return;
    if (!(await send('response.content_part.added', { ...ids, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }))) return;
    for (const piece of textPieces(p.text)) if (!(await send('response.output_text.delta', { ...ids, delta: piece, logprobs: [] }))) return;
    if (!(await send('response.output_text.done', { ...ids, text: p.text, logprobs: [] }))) return;
    if (!(await send('response.content_part.done', { ...ids, part: messageItem.content[0] }))) return;
    if (!(await send('response.output_item.done', { output_index: at, item: messageItem }))) return;
  }
  for (const item of callItems) {
    const at = index++;
    if (!(await send('response.output_item.added', { output_index: at, item: { ...item, status: 'in_progress', arguments: '' } }))) return;
    for (const frag of jsonFragments(item.arguments))
      if (!(await send('response.function_call_arguments.delta', { item_id: item.id, output_index: at, delta: frag }))) return;
    if (!(await send('response.function_call_arguments.done', { item_id: item.id, output_index: at, name: item.name, arguments: item.arguments }))) return;
    if (!(await send('response.output_item.done', { output_index: at, item }))) return;
  }
  if (!(await send('response.completed', { response: response('completed', output, true) }))) return;
  writer.end();
}

/**
 * `POST /v1/responses/compact` (OpenAI's; new-api relays it for Responses models, older new-api and
 * one-api answer 404): the input's user messages kept as they were, then one `compaction` item whose
 * sealed content holds what the assistant's part came to (about a fifth of it). Billed as a
 * response: the input, and the compaction as output.
 */
export function handleResponsesCompact(ctx: Ctx): void {
  const { emu, res } = ctx;
  if (emu.profile !== 'new-api' || !emu.offersCompaction) {
    return sendJson(res, 404, { error: { message: `Invalid URL (POST ${ctx.path})`, type: 'invalid_request_error', param: '', code: '' } });
  }
  const begun = emu.beginJson(ctx, 'chat');
  if (!begun) return;
  const { body, model, auth } = begun;
  if (!model.endpoints?.includes('openai-response'))
    return openAiError(res, 400, `The model ${model.id} does not support compaction.`, 'invalid_request_error', 'unsupported_model');
  if (body.input === undefined) return openAiError(res, 400, "Missing required parameter: 'input'.", 'invalid_request_error', 'missing_required_parameter');
  const parsed = toTurns(body.input, body.instructions, false);
  if (parsed.problem) return openAiError(res, 400, parsed.problem, 'invalid_request_error', 'invalid_request_error');
  const items: Json[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as Json[]);
  const kept = items
    .filter((i) => (i.type ?? 'message') === 'message' && i.role === 'user')
    .map((i) => ({ type: 'message', role: 'user', content: typeof i.content === 'string' ? [{ type: 'input_text', text: i.content }] : i.content }));
  const assistantPart = [
    ...(parsed.compacted ?? []),
    ...parsed.turns.flatMap((t) =>
      t.role === 'assistant' ? [t.text, ...t.toolCalls.map((n) => `called ${n}`)] : t.toolResults.map((r) => `${r.name}: ${r.content}`),
    ),
  ].join('\n');
  const facts = assistantPart.slice(0, Math.max(200, Math.floor(assistantPart.length / 5)));
  const outputTokens = estimateTokens(facts);
  emu.store.spend(auth.key, (parsed.tokens + outputTokens * 4) * model.ratio, { model: model.id, prompt: parsed.tokens, completion: outputTokens });
  sendJson(res, 200, {
    id: `resp_${randomBytes(16).toString('hex')}`,
    object: 'response.compaction',
    created_at: Math.floor(emu.clock.now() / 1000),
    output: [...kept, { id: `cmp_${randomBytes(12).toString('hex')}`, type: 'compaction', encrypted_content: seal(facts) }],
    usage: {
      input_tokens: parsed.tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: parsed.tokens + outputTokens,
    },
  });
}
