import { randomBytes } from 'node:crypto';
import { argsObject, estimateTokens, jsonFragments, plan, textPieces, type ToolChoice, type ToolSpec, type Turn } from './assistant';
import { SseWriter } from './faults';
import { openAiError, sendJson, type Ctx } from './server';
import { asText } from './values';
import { chatImageProblem } from './image-input';
import { fillTheMiddle } from './fim';

type Json = Record<string, unknown>;

function textOf(content: unknown): { text: string; images: number; imageTokens: number } {
  if (typeof content === 'string') return { text: content, images: 0, imageTokens: 0 };
  if (!Array.isArray(content)) return { text: '', images: 0, imageTokens: 0 };
  let text = '';
  let images = 0;
  let imageTokens = 0;
  for (const part of content as Json[]) {
    if (part?.type === 'text' && typeof part.text === 'string') text += (text ? '\n' : '') + part.text;
    if (part?.type === 'image_url') {
      images++;
      imageTokens += (part.image_url as Json | undefined)?.detail === 'low' ? 85 : 765;
    }
  }
  return { text, images, imageTokens };
}

/** Turns chat-completions messages into the planner's turns. */
function toTurns(messages: Json[]): { turns: Turn[]; promptTokens: number } {
  const turns: Turn[] = [];
  const callNames = new Map<string, string>();
  let promptTokens = 0;
  for (const m of messages) {
    const { text, images, imageTokens } = textOf(m.content);
    promptTokens += estimateTokens(text) + imageTokens + 4;
    if (m.role === 'assistant') {
      const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Json[]) : [];
      for (const c of calls) {
        const fn = c.function as Json | undefined;
        callNames.set(String(c.id), asText(fn?.name));
        promptTokens += estimateTokens(asText(fn?.arguments));
      }
      turns.push({
        role: 'assistant',
        text,
        images: 0,
        toolResults: [],
        toolCalls: calls.map((c) => String((c.function as Json)?.name)),
        callArgs: calls.map((c) => argsObject((c.function as Json)?.arguments)),
      });
    } else if (m.role === 'tool') {
      const result = { name: callNames.get(String(m.tool_call_id)) ?? 'tool', content: text, isError: /^error\b/i.test(text) };
      const last = turns[turns.length - 1];
      if (last && last.role === 'user' && last.toolResults.length > 0) last.toolResults.push(result);
      else turns.push({ role: 'user', text: '', images: 0, toolResults: [result], toolCalls: [] });
    } else if (m.role === 'user') {
      // Images right after tool results (a tool's screenshot, as clients send them in this format)
      // are read with those results, not as a new question.
      const last = turns[turns.length - 1];
      if (images > 0 && last?.role === 'user' && last.toolResults.length > 0) last.images += images;
      else turns.push({ role: 'user', text, images, toolResults: [], toolCalls: [] });
    }
  }
  return { turns, promptTokens };
}

/**
 * A chat model asked to fill a hole in code (the inline-completion fallback for models without
 * fill-in-the-middle): it answers with the code in a fence, repeating the line's start, as chat
 * models tend to, so the client's cleaning is exercised.
 */
function holeAnswer(messages: Json[]): { text: string; toolCalls: [] } | undefined {
  const system = messages.find((m) => m.role === 'system');
  const user = messages.at(-1);
  if (typeof system?.content !== 'string' || !system.content.startsWith('You complete code') || typeof user?.content !== 'string') return undefined;
  const code = /```\n([\s\S]*)\n```\s*$/.exec(user.content)?.[1];
  if (!code || !code.includes('<HOLE>')) return undefined;
  const [prefix, suffix] = code.split('<HOLE>');
  const line = prefix.slice(prefix.lastIndexOf('\n') + 1);
  return { text: `\`\`\`\n${line}${fillTheMiddle(prefix, suffix)}\n\`\`\``, toolCalls: [] };
}

/** The tool choice asked for, or the message that refuses it. */
function toolChoiceOf(v: unknown): ToolChoice | { refused: string } {
  if (v === undefined) return 'auto';
  if (v === 'auto' || v === 'none' || v === 'required') return v;
  if (v && typeof v === 'object' && (v as Json).type === 'function') {
    const name = ((v as Json).function as Json | undefined)?.name;
    if (typeof name === 'string') return { name };
  }
  return { refused: 'tool_choice must be "auto", "none", "required" or {type:"function",function:{name}}' };
}

export async function handleChatCompletions(ctx: Ctx): Promise<void> {
  const { emu, res } = ctx;
  const begun = emu.beginJson(ctx, 'chat');
  if (!begun) return;
  const { body, model, auth } = begun;
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return openAiError(res, 400, 'messages must be a non-empty array.', 'invalid_request_error', 'invalid_parameter');
  }
  if (body.temperature !== undefined && !(typeof body.temperature === 'number' && body.temperature >= 0 && body.temperature <= 2)) {
    return openAiError(res, 400, 'temperature must be between 0 and 2.', 'invalid_request_error', 'invalid_parameter');
  }
  const tools: ToolSpec[] = Array.isArray(body.tools)
    ? (body.tools as Json[]).map((t) => t.function as ToolSpec).filter((f) => f && typeof f.name === 'string')
    : [];
  const asked = toolChoiceOf(body.tool_choice);
  if (typeof asked === 'object' && 'refused' in asked) return openAiError(res, 400, asked.refused, 'invalid_request_error', 'invalid_parameter');
  const choice: ToolChoice = asked;
  if (typeof choice === 'object' && !tools.some((t) => t.name === choice.name)) {
    return openAiError(res, 400, `tool_choice names ${choice.name}, which is not among the tools.`, 'invalid_request_error', 'invalid_parameter');
  }

  if (model.id === 'gpt-3.5-turbo-instruct-emu') {
    return openAiError(
      res,
      404,
      'This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use v1/completions?',
      'invalid_request_error',
    );
  }
  if (model.endpoints && !model.endpoints.includes('openai')) {
    return openAiError(
      res,
      400,
      `This model is only supported in v1/responses and not in v1/chat/completions.`,
      'invalid_request_error',
      'unsupported_api_for_model',
    );
  }
  if (model.id === 'legacy-upstream-emu' && body.stream_options !== undefined) {
    return openAiError(
      res,
      400,
      'stream_options: Extra inputs are not permitted (this upstream does not support stream_options)',
      'invalid_request_error',
      'invalid_parameter',
    );
  }
  if (model.id === 'deepseek-reasoner-emu') {
    // Thinking mode with tools: each assistant message of a tool round must carry its reasoning.
    const at = (body.messages as Json[]).findIndex((m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && typeof m.reasoning_content !== 'string');
    if (at !== -1)
      return openAiError(
        res,
        400,
        `Missing \`reasoning_content\` field in the assistant message at message index ${at}. Pass it back in thinking mode.`,
        'invalid_request_error',
        'invalid_request_error',
      );
  }
  const imageProblem = chatImageProblem(body.messages as Json[]);
  if (imageProblem) return openAiError(res, 400, imageProblem, 'invalid_request_error', 'invalid_image');
  const { turns, promptTokens: messageTokens } = toTurns(body.messages as Json[]);
  const p = holeAnswer(body.messages as Json[]) ?? plan(model.id, turns, tools, choice, false);
  const promptTokens = messageTokens + (tools.length ? estimateTokens(JSON.stringify(body.tools)) : 0);
  // The upstream's own refusal, as OpenAI words it, when the prompt is over the window.
  if (model.contextWindow && promptTokens > model.contextWindow) {
    return openAiError(
      res,
      400,
      `This model's maximum context length is ${model.contextWindow} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
      'invalid_request_error',
      'context_length_exceeded',
    );
  }
  // parallel_tool_calls: false allows one call per reply.
  const planned = body.parallel_tool_calls === false ? p.toolCalls.slice(0, 1) : p.toolCalls;
  let calls = planned.map((c) => ({ id: `call_${randomBytes(9).toString('base64url')}`, name: c.name, args: JSON.stringify(c.arguments) }));
  let text = p.text;
  let finish = calls.length > 0 ? 'tool_calls' : 'stop';
  // max_tokens (or max_completion_tokens) cuts the reply where the model would have stopped.
  const limit = typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
  if (limit !== undefined && estimateTokens(text) + calls.reduce((n, c) => n + estimateTokens(c.args), 0) > limit) {
    text = text.slice(0, limit * 4);
    calls = [];
    finish = 'length';
  }
  const completionTokens = estimateTokens(text) + calls.reduce((n, c) => n + estimateTokens(c.args), 0);
  const cached = emu.automaticCache.lookup(auth.key.key, [body.tools, ...(body.messages as unknown[])], promptTokens);
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
  };
  // new-api bills cache reads at its cache ratio (0.1); one-api bills every prompt token in full.
  const cacheDiscount = emu.profile === 'new-api' ? 0.9 : 0;
  emu.store.spend(auth.key, (promptTokens - cached * cacheDiscount + completionTokens * 4) * model.ratio, {
    model: model.id,
    prompt: promptTokens,
    completion: completionTokens,
    stream: body.stream === true,
  });

  const id = `chatcmpl-${randomBytes(12).toString('base64url')}`;
  const created = Math.floor(emu.clock.now() / 1000);
  const thought = `Thinking it through: ${text.slice(0, 60) || 'which tool to call'}…`;
  const reasoning = model.id === 'deepseek-reasoner-emu' || model.id === 'vllm-reasoner-emu' ? thought : undefined;
  const reasoningField = model.id === 'vllm-reasoner-emu' ? 'reasoning' : 'reasoning_content';
  if (model.id === 'r1-distill-emu') text = `<think>\n${thought}\n</think>\n\n${text}`;
  if (reasoning) Object.assign(usage, { completion_tokens_details: { reasoning_tokens: estimateTokens(reasoning) } });
  if (body.stream === true) {
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true && model.id !== 'legacy-upstream-emu';
    return streamCompletion(ctx, { id, created, model: model.id, text, calls, finish, reasoning, reasoningField, usage: includeUsage ? usage : undefined });
  }
  const message: Json = { role: 'assistant', content: calls.length > 0 && !text ? null : text, ...(reasoning ? { [reasoningField]: reasoning } : {}) };
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
  }
  sendJson(res, 200, {
    id,
    object: 'chat.completion',
    created,
    model: model.id,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage,
  });
}

interface StreamPlan {
  id: string;
  created: number;
  model: string;
  text: string;
  calls: { id: string; name: string; args: string }[];
  finish: string;
  reasoning?: string;
  reasoningField?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

async function streamCompletion(ctx: Ctx, s: StreamPlan): Promise<void> {
  const writer = new SseWriter(ctx.res, ctx.faults, (message) => ({
    data: JSON.stringify({ error: { message, type: 'upstream_error', param: null, code: 'stream_failed' } }),
  }));
  writer.onClientClose = () => ctx.emu.clientClosedStreams++;
  writer.start();
  const base = { id: s.id, object: 'chat.completion.chunk', created: s.created, model: s.model };
  const usageField = s.usage ? { usage: null } : {};
  const chunk = (delta: Json, finish: string | null = null) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...usageField });

  if (!(await writer.event(undefined, chunk({ role: 'assistant', content: '' })))) return;
  for (const piece of s.reasoning ? textPieces(s.reasoning) : []) {
    if (!(await writer.event(undefined, chunk({ [s.reasoningField ?? 'reasoning_content']: piece })))) return;
  }
  for (const piece of s.text ? textPieces(s.text) : []) {
    if (!(await writer.event(undefined, chunk({ content: piece })))) return;
  }
  for (let i = 0; i < s.calls.length; i++) {
    const c = s.calls[i];
    const head = { tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] };
    if (!(await writer.event(undefined, chunk(head)))) return;
    for (const frag of jsonFragments(c.args)) {
      if (!(await writer.event(undefined, chunk({ tool_calls: [{ index: i, function: { arguments: frag } }] })))) return;
    }
  }
  if (!(await writer.event(undefined, chunk({}, s.finish)))) return;
  if (s.usage && !(await writer.event(undefined, JSON.stringify({ ...base, choices: [], usage: s.usage })))) return;
  if (!(await writer.event(undefined, '[DONE]'))) return;
  writer.end();
}
