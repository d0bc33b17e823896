import type { ChatMessage, ChatTool } from '../../gateway';
import type {
  GeminiContent,
  GeminiPart,
  GenerateContentRequest,
  MessageContentBlockParam,
  MessageParam,
  MessagesRequest,
  MessagesTool,
  ResponseFunctionTool,
  ResponseInputItem,
} from '../../gateway';
import type { ToolDefinition } from '../../tools/workspaceTools';
import {
  sentImages,
  steeringText,
  type AssistantTurn,
  type ImageAttachment,
  type Step,
  type ToolCallRecord,
  type Turn,
  type UserTurn,
} from '../../common/conversation';

const NOT_RUN = 'Not run: the turn ended before this call ran.';

/** The text a user turn sends: attached context first, then what the person wrote. */
export function userText(turn: UserTurn): string {
  const context = turn.context.map((c) => `Context from ${c.label}:\n\`\`\`${c.language ?? ''}\n${c.text}\n\`\`\``);
  return [...context, turn.text].filter(Boolean).join('\n\n');
}

/** The images of a step's results, each after a line naming its call (for formats whose tool results are text only). */
function resultImages(calls: readonly ToolCallRecord[]): { label: string; images: ImageAttachment[] }[] {
  return calls.map((c) => ({ label: `Images returned by ${c.name} (call ${c.id}):`, images: sentImages(c) })).filter((x) => x.images.length > 0);
}

function argsObject(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Steps worth sending: a stopped or failed turn keeps its partial text. */
function sentSteps(turn: AssistantTurn) {
  return turn.steps.filter((s) => s.text || s.toolCalls.length > 0 || s.thinking);
}

/**
 * Whether what only the step's own model can read (a thinking signature, encrypted reasoning, a
 * thought signature) goes to `model`: only when that model wrote it (a fallback's steps, or an
 * earlier answer by another model, go without them). No target model: as written.
 */
function readableBy(turn: AssistantTurn, step: Step, model: string | undefined): boolean {
  return model === undefined || (step.model ?? turn.model) === model;
}

/** Gemini 3 refuses a function call of the current turn without a signature; history written by another model carries this one instead (Google's documented value for transferred history). */
const FOREIGN_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

// ---------- chat completions ----------

export function chatTools(defs: readonly ToolDefinition[]): ChatTool[] {
  return defs.map((d) => ({ type: 'function' as const, function: { name: d.name, description: d.description, parameters: d.parameters } }));
}

/**
 * `reasoningBack`: send a tool round's reasoning back as `reasoning_content` (true), never
 * (false), or (absent) where the model streamed it as `reasoning_content`: DeepSeek-style models
 * refuse a tool round without it, and others may refuse the unknown field.
 */
export function toChatMessages(system: string, turns: readonly Turn[], reasoningBack?: boolean): ChatMessage[] {
  // No system message when there is none (VS Code's language-model requests bring their own).
  const out: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const turn of turns) {
    if (turn.role === 'user') {
      const text = userText(turn);
      if (turn.images.length === 0) out.push({ role: 'user', content: text });
      else {
        out.push({
          role: 'user',
          content: [
            ...(text ? [{ type: 'text' as const, text }] : []),
            ...turn.images.map((img) => ({ type: 'image_url' as const, image_url: { url: `data:${img.mediaType};base64,${img.data}`, detail: img.detail } })),
          ],
        });
      }
      continue;
    }
    for (const step of sentSteps(turn)) {
      if (step.toolCalls.length === 0) {
        if (step.text) out.push({ role: 'assistant', content: step.text });
        continue;
      }
      out.push({
        role: 'assistant',
        content: step.text || null,
        tool_calls: step.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.args || '{}' } })),
        // Thinking models (DeepSeek style) refuse a tool round whose assistant message lacks the
        // reasoning they streamed; elsewhere it is left out (some refuse it in plain turns).
        ...(step.thinking && (reasoningBack ?? (step.thinkingVia ?? 'reasoning_content') === 'reasoning_content') ? { reasoning_content: step.thinking } : {}),
      });
      for (const c of step.toolCalls) out.push({ role: 'tool', tool_call_id: c.id, content: c.result ?? NOT_RUN });
      // A tool message holds text only: the results' images follow as the user's.
      const shown = resultImages(step.toolCalls);
      if (shown.length > 0) {
        out.push({
          role: 'user',
          content: shown.flatMap((x) => [
            { type: 'text' as const, text: x.label },
            ...x.images.map((img) => ({ type: 'image_url' as const, image_url: { url: `data:${img.mediaType};base64,${img.data}`, detail: img.detail } })),
          ]),
        });
      }
      if (step.steered?.length) out.push({ role: 'user', content: steeringText(step.steered) });
    }
  }
  return out;
}

// ---------- messages format ----------

export function messagesTools(defs: readonly ToolDefinition[]): MessagesTool[] {
  return defs.map((d) => ({ name: d.name, description: d.description, input_schema: d.parameters }));
}

type Block = MessageContentBlockParam & { cache_control?: { type: 'ephemeral'; ttl?: '5m' | '1h' } };

function pushMessage(out: MessageParam[], role: 'user' | 'assistant', blocks: Block[]): void {
  if (blocks.length === 0) return;
  const last = out[out.length - 1];
  // The format needs user and assistant to alternate: merge neighbours of the same role.
  if (last && last.role === role) (last.content as Block[]).push(...blocks);
  else out.push({ role, content: blocks });
}

function cacheable(b: Block): boolean {
  if (b.type === 'thinking' || b.type === 'redacted_thinking') return false;
  if (b.type === 'text' && !(b as { text: string }).text) return false;
  return true;
}

function markLast(message: MessageParam | undefined, control: NonNullable<Block['cache_control']>): boolean {
  if (!message || typeof message.content === 'string') return false;
  const blocks = message.content as Block[];
  for (let i = blocks.length - 1; i >= 0; i--) {
    if (cacheable(blocks[i])) {
      blocks[i] = { ...blocks[i], cache_control: control };
      return true;
    }
  }
  return false;
}

/**
 * Builds a messages-format request with up to four cache breakpoints, placed so that an agent
 * loop reads the cache on every step: the last tool definition (tools come first in cache order)
 * or, once turns were condensed, the summary that stands for them; the system prompt, the newest user message (this step's tool results or question), and the
 * user message before the latest assistant message (where the previous request put its newest
 * breakpoint, so that prefix matches exactly).
 */
export function toMessagesRequest(
  system: string,
  turns: readonly Turn[],
  tools: readonly ToolDefinition[],
  ttl: '5m' | '1h',
  model?: string,
): Pick<MessagesRequest, 'system' | 'messages' | 'tools'> {
  const control = ttl === '1h' ? ({ type: 'ephemeral', ttl: '1h' } as const) : ({ type: 'ephemeral' } as const);
  const messages: MessageParam[] = [];
  let pinnedBlock: Block | undefined;
  for (const turn of turns) {
    if (turn.role === 'user') {
      const text = userText(turn);
      const blocks: Block[] = [
        ...(text ? [{ type: 'text', text } as Block] : []),
        ...turn.images.map((img): Block => ({ type: 'image', source: { type: 'base64', media_type: img.mediaType, data: img.data } })),
      ];
      if (turn.pinned) pinnedBlock = blocks.at(-1);
      pushMessage(messages, 'user', blocks);
      continue;
    }
    for (const step of sentSteps(turn)) {
      const blocks: Block[] = [];
      if (step.thinking && step.thinkingSignature && readableBy(turn, step, model))
        blocks.push({ type: 'thinking', thinking: step.thinking, signature: step.thinkingSignature });
      if (step.text) blocks.push({ type: 'text', text: step.text });
      for (const c of step.toolCalls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: argsObject(c.args) });
      pushMessage(messages, 'assistant', blocks);
      if (step.toolCalls.length > 0) {
        pushMessage(
          messages,
          'user',
          step.toolCalls
            .map((c): Block => {
              const images = sentImages(c);
              const content = images.length
                ? [
                    { type: 'text' as const, text: c.result ?? NOT_RUN },
                    ...images.map((img) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: img.mediaType, data: img.data } })),
                  ]
                : (c.result ?? NOT_RUN);
              return { type: 'tool_result', tool_use_id: c.id, content, ...(c.isError || !c.result ? { is_error: true } : {}) };
            })
            .concat(step.steered?.length ? [{ type: 'text', text: steeringText(step.steered) }] : []),
        );
      }
    }
  }
  const toolParams = messagesTools(tools);
  // A summary of condensed turns is the new stable start: it takes the tools' breakpoint (the
  // system prompt's breakpoint caches the tools before it anyway), so there are still four.
  if (pinnedBlock && cacheable(pinnedBlock)) pinnedBlock.cache_control = control;
  else if (toolParams.length > 0) toolParams[toolParams.length - 1] = { ...toolParams[toolParams.length - 1], cache_control: control };
  const userIndexes = messages.map((m, i) => (m.role === 'user' ? i : -1)).filter((i) => i >= 0);
  const newest = userIndexes[userIndexes.length - 1];
  markLast(messages[newest], control);
  const previous = userIndexes[userIndexes.length - 2];
  if (previous !== undefined) markLast(messages[previous], control);
  return {
    system: system ? [{ type: 'text', text: system, cache_control: control }] : undefined,
    messages,
    tools: toolParams.length > 0 ? toolParams : undefined,
  };
}

// ---------- responses format ----------

export function responsesTools(defs: readonly ToolDefinition[]): ResponseFunctionTool[] {
  return defs.map((d) => ({ type: 'function' as const, name: d.name, description: d.description, parameters: d.parameters, strict: false }));
}

/**
 * The whole conversation as Responses input items (stateless: `store: false`, nothing kept on the
 * server). A tool step sends back its reasoning items (encrypted) before its calls, as reasoning
 * models require; the system prompt goes as `instructions`. Turns the gateway compacted go as its
 * compaction output when the model is the one that compacted them (the items are opaque and tied
 * to it), else as the summary's text.
 */
export function toResponsesInput(turns: readonly Turn[], model?: string): ResponseInputItem[] {
  const out: ResponseInputItem[] = [];
  for (const turn of turns) {
    if (turn.role === 'user' && turn.pinned && turn.serverItems && turn.serverModel === model) {
      out.push(...(turn.serverItems as ResponseInputItem[]));
      continue;
    }
    if (turn.role === 'user') {
      const text = userText(turn);
      if (turn.images.length === 0) out.push({ role: 'user', content: text });
      else
        out.push({
          role: 'user',
          content: [
            ...(text ? [{ type: 'input_text' as const, text }] : []),
            ...turn.images.map((img) => ({ type: 'input_image' as const, image_url: `data:${img.mediaType};base64,${img.data}`, detail: img.detail })),
          ],
        });
      continue;
    }
    for (const step of sentSteps(turn)) {
      if (step.toolCalls.length > 0 && readableBy(turn, step, model)) {
        for (const r of step.reasoningItems ?? []) {
          if (r.encrypted)
            out.push({
              type: 'reasoning',
              id: r.id,
              summary: r.summary.map((text) => ({ type: 'summary_text' as const, text })),
              encrypted_content: r.encrypted,
            });
        }
      }
      if (step.text) out.push({ role: 'assistant', content: step.text });
      for (const c of step.toolCalls) out.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: c.args || '{}' });
      for (const c of step.toolCalls) out.push({ type: 'function_call_output', call_id: c.id, output: c.result ?? NOT_RUN });
      const shown = resultImages(step.toolCalls);
      if (shown.length > 0) {
        out.push({
          role: 'user',
          content: shown.flatMap((x) => [
            { type: 'input_text' as const, text: x.label },
            ...x.images.map((img) => ({ type: 'input_image' as const, image_url: `data:${img.mediaType};base64,${img.data}`, detail: img.detail })),
          ]),
        });
      }
      if (step.steered?.length) out.push({ role: 'user', content: steeringText(step.steered) });
    }
  }
  return out;
}

// ---------- Gemini's own format ----------

export function geminiTools(defs: readonly ToolDefinition[]): NonNullable<GenerateContentRequest['tools']> {
  return [{ functionDeclarations: defs.map((d) => ({ name: d.name, description: d.description, parametersJsonSchema: d.parameters })) }];
}

function pushContent(out: GeminiContent[], role: 'user' | 'model', parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = out[out.length - 1];
  // Turns alternate: neighbours of the same role become one content.
  if (last && last.role === role) last.parts.push(...parts);
  else out.push({ role, parts });
}

/**
 * The whole conversation as Gemini `contents` (stateless). A model step goes back with the
 * thought signatures it came with (on its first function call, or on a text part): a thinking
 * model refuses a tool round without them. Thought summaries are not sent back (only their
 * signatures matter); tool results go as `functionResponse` parts, their images beside them.
 */
export function toGeminiContents(turns: readonly Turn[], model?: string): GeminiContent[] {
  const out: GeminiContent[] = [];
  const inline = (img: ImageAttachment): GeminiPart => ({ inlineData: { mimeType: img.mediaType, data: img.data } });
  for (const turn of turns) {
    if (turn.role === 'user') {
      const text = userText(turn);
      pushContent(out, 'user', [...(text ? [{ text }] : []), ...turn.images.map(inline)]);
      continue;
    }
    for (const step of sentSteps(turn)) {
      const parts: GeminiPart[] = [];
      const own = readableBy(turn, step, model);
      const textSignature = own ? step.textSignature : undefined;
      if (step.text || textSignature) parts.push({ text: step.text, ...(textSignature ? { thoughtSignature: textSignature } : {}) });
      step.toolCalls.forEach((c, i) => {
        const signature = own ? c.thoughtSignature : i === 0 ? FOREIGN_THOUGHT_SIGNATURE : undefined;
        parts.push({ functionCall: { name: c.name, args: argsObject(c.args) }, ...(signature ? { thoughtSignature: signature } : {}) });
      });
      pushContent(out, 'model', parts);
      if (step.toolCalls.length > 0) {
        pushContent(out, 'user', [
          ...step.toolCalls.map((c): GeminiPart => ({
            functionResponse: { name: c.name, response: c.isError || !c.result ? { error: c.result ?? NOT_RUN } : { output: c.result } },
          })),
          ...resultImages(step.toolCalls).flatMap((x) => [{ text: x.label }, ...x.images.map(inline)]),
          ...(step.steered?.length ? [{ text: steeringText(step.steered) }] : []),
        ]);
      }
    }
  }
  return out;
}
