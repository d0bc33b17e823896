/**
 * VS Code's language-model messages in our conversation model (pure: parts are read by shape, not
 * by class, so this runs in Node's unit tests). A user message's tool results belong to the tool
 * calls of the assistant message before it; images travel as image attachments.
 */
import { IMAGE_TOKENS, tokensOf } from '../../runtime/core/tokens';
import * as z from 'zod/mini';
import { emptyUsage, type AssistantTurn, type ImageAttachment, type ImageMediaType, type Step, type Turn, type UserTurn } from '../../common/conversation';

/** VS Code's message roles: `LanguageModelChatMessageRole.User` is 1, `.Assistant` 2, `.System` 3 (VS Code's own chat sends its instructions so). */
export const ROLE_USER = 1;
export const ROLE_ASSISTANT = 2;
export const ROLE_SYSTEM = 3;

export interface LmMessage {
  role: number;
  content: readonly unknown[];
  name?: string;
}

const IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp'];

/**
 * A thinking part (`LanguageModelThinkingPart`, 1.10x+): it has `id` and `metadata` of its own,
 * where a text part has only `value`.
 */
function isThinking(p: unknown): p is { value: string | string[]; metadata?: unknown } {
  const t = p as { value?: unknown } | undefined;
  return typeof t === 'object' && t !== null && 'metadata' in t && 'id' in t && (typeof t.value === 'string' || Array.isArray(t.value));
}

/** Where our reasoning facts ride in a thinking part's metadata, to come back with the history. */
export const REASONING_METADATA = 'modelGateway';

const ReasoningFacts = z.object({
  thinking: z.optional(z.string()),
  thinkingSignature: z.optional(z.string()),
  thinkingVia: z.optional(z.enum(['reasoning_content', 'reasoning', 'tags'])),
  reasoningItems: z.optional(z.array(z.object({ id: z.string(), summary: z.array(z.string()), encrypted: z.optional(z.string()) }))),
});
type ReasoningFacts = z.infer<typeof ReasoningFacts>;

/**
 * What a reasoning model needs back with its tool calls (deepseek's `reasoning_content`, the
 * messages format's signed thinking, the responses format's encrypted items), for the metadata of
 * the thinking part that ends an answer; undefined when the step did not reason.
 */
export function reasoningMetadata(step: Step | undefined): Record<string, ReasoningFacts> | undefined {
  if (!step || (!step.thinking && !step.reasoningItems?.length)) return undefined;
  const facts: ReasoningFacts = {
    thinking: step.thinking,
    thinkingSignature: step.thinkingSignature,
    thinkingVia: step.thinkingVia,
    reasoningItems: step.reasoningItems,
  };
  return { [REASONING_METADATA]: facts };
}

function isText(p: unknown): p is { value: string } {
  return typeof (p as { value?: unknown })?.value === 'string';
}
function isToolCall(p: unknown): p is { callId: string; name: string; input: object } {
  const c = p as { callId?: unknown; name?: unknown; input?: unknown };
  return typeof c?.callId === 'string' && typeof c.name === 'string' && typeof c.input === 'object';
}
function isToolResult(p: unknown): p is { callId: string; content: readonly unknown[] } {
  const c = p as { callId?: unknown; content?: unknown };
  return typeof c?.callId === 'string' && Array.isArray(c.content);
}
function isData(p: unknown): p is { mimeType: string; data: Uint8Array } {
  const d = p as { mimeType?: unknown; data?: unknown };
  return typeof d?.mimeType === 'string' && d.data instanceof Uint8Array;
}

/** A tool result's content as the text a model reads (text parts, and JSON or text data parts). */
function resultText(content: readonly unknown[]): string {
  return content
    .map((p) => {
      if (isText(p)) return p.value;
      if (isData(p) && (p.mimeType.startsWith('text/') || p.mimeType.includes('json'))) return Buffer.from(p.data).toString('utf8');
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

/** Why a message cannot be sent, when one part cannot (an image type the gateway refuses, say). */
export class UnsupportedPartError extends Error {}

/** The instructions of the system messages, in order: they go where the wire format puts a system prompt. */
export function systemPrompt(messages: readonly LmMessage[]): string {
  return messages
    .filter((m) => m.role === ROLE_SYSTEM)
    .map((m) =>
      m.content
        .filter(isText)
        .map((p) => p.value)
        .join(''),
    )
    .filter(Boolean)
    .join('\n\n');
}

export function toTurns(messages: readonly LmMessage[], model: string): Turn[] {
  const turns: Turn[] = [];
  let n = 0;
  const id = (p: string) => `${p}${n++}`;
  for (const m of messages) {
    if (m.role === ROLE_SYSTEM) continue;
    if (m.role === ROLE_ASSISTANT) {
      const turn: AssistantTurn = {
        id: id('a'),
        role: 'assistant',
        model,
        format: 'chat',
        steps: [{ text: '', toolCalls: [] }],
        status: 'done',
        usage: emptyUsage(),
        at: 0,
      };
      const step = turn.steps[0];
      let thought = '';
      let facts: ReasoningFacts | undefined;
      for (const p of m.content) {
        if (isToolCall(p)) step.toolCalls.push({ id: p.callId, name: p.name, args: JSON.stringify(p.input ?? {}), status: 'done' });
        else if (isThinking(p)) {
          thought += Array.isArray(p.value) ? p.value.join('') : p.value;
          const parsed = ReasoningFacts.safeParse((p.metadata as Record<string, unknown> | undefined)?.[REASONING_METADATA]);
          if (parsed.success) facts = parsed.data;
        } else if (isText(p)) step.text += p.value;
      }
      // Our own facts when the caller kept them; else the thinking text as it was shown.
      const thinking = facts?.thinking ?? thought;
      if (thinking) step.thinking = thinking;
      if (facts?.thinkingSignature) step.thinkingSignature = facts.thinkingSignature;
      if (facts?.thinkingVia) step.thinkingVia = facts.thinkingVia;
      if (facts?.reasoningItems?.length) step.reasoningItems = facts.reasoningItems;
      turns.push(turn);
      continue;
    }
    const images: ImageAttachment[] = [];
    let text = '';
    for (const p of m.content) {
      if (isToolResult(p)) {
        // The result goes to its call in the assistant turn before this message.
        const call = [...turns]
          .reverse()
          .flatMap((t) => (t.role === 'assistant' ? t.steps.flatMap((s) => s.toolCalls) : []))
          .find((c) => c.id === p.callId);
        if (call) call.result = resultText(p.content);
      } else if (isData(p) && p.mimeType.startsWith('image/')) {
        if (!IMAGE_TYPES.includes(p.mimeType)) throw new UnsupportedPartError(`${p.mimeType} images are not supported; send PNG, JPEG or WEBP.`);
        images.push({
          name: `image-${images.length + 1}`,
          mediaType: p.mimeType as ImageMediaType,
          data: Buffer.from(p.data).toString('base64'),
          detail: 'auto',
        });
      } else if (isText(p)) text += (text ? '\n' : '') + p.value;
      else if (isData(p)) text += (text ? '\n' : '') + resultText([p]);
    }
    if (text || images.length > 0) {
      const user: UserTurn = { id: id('u'), role: 'user', text, images, context: [], at: 0 };
      turns.push(user);
    }
  }
  return turns;
}

/** The chat's own estimate (`budget.ts`), for a message as VS Code gives it: the gateway counts no tokens. */
export function estimateTokens(text: string | LmMessage): number {
  if (typeof text === 'string') return tokensOf(text);
  let n = 4;
  for (const p of text.content) {
    if (isText(p)) n += tokensOf(p.value);
    else if (isToolCall(p)) n += tokensOf(p.name + JSON.stringify(p.input ?? {}));
    else if (isToolResult(p)) n += tokensOf(resultText(p.content));
    else if (isData(p)) n += p.mimeType.startsWith('image/') ? IMAGE_TOKENS : Math.ceil(p.data.length / 4);
  }
  return n;
}
