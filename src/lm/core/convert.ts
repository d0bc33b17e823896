/**
 * VS Code's language-model messages in our conversation model (pure: parts are read by shape, not
 * by class, so this runs in Node's unit tests). A user message's tool results belong to the tool
 * calls of the assistant message before it; images travel as image attachments.
 */
import { IMAGE_TOKENS, tokensOf } from '../../chat/core/tokens';
import { emptyUsage, type AssistantTurn, type ImageAttachment, type ImageMediaType, type Turn, type UserTurn } from '../../common/conversation';

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
    .map((m) => m.content.filter(isText).map((p) => p.value).join(''))
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
      const turn: AssistantTurn = { id: id('a'), role: 'assistant', model, format: 'chat', steps: [{ text: '', toolCalls: [] }], status: 'done', usage: emptyUsage(), at: 0 };
      const step = turn.steps[0];
      for (const p of m.content) {
        if (isToolCall(p)) step.toolCalls.push({ id: p.callId, name: p.name, args: JSON.stringify(p.input ?? {}), status: 'done' });
        else if (isText(p)) step.text += p.value;
      }
      turns.push(turn);
      continue;
    }
    const images: ImageAttachment[] = [];
    let text = '';
    for (const p of m.content) {
      if (isToolResult(p)) {
        // The result goes to its call in the assistant turn before this message.
        const call = [...turns].reverse().flatMap((t) => (t.role === 'assistant' ? t.steps.flatMap((s) => s.toolCalls) : [])).find((c) => c.id === p.callId);
        if (call) call.result = resultText(p.content);
      } else if (isData(p) && p.mimeType.startsWith('image/')) {
        if (!IMAGE_TYPES.includes(p.mimeType)) throw new UnsupportedPartError(`${p.mimeType} images are not supported; send PNG, JPEG or WEBP.`);
        images.push({ name: `image-${images.length + 1}`, mediaType: p.mimeType as ImageMediaType, data: Buffer.from(p.data).toString('base64'), detail: 'auto' });
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
