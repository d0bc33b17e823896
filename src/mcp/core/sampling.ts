/**
 * MCP sampling (`sampling/createMessage`): a server asks the client's model for a completion. The
 * pure part: which gateway model answers, what the request becomes on the wire, what it may cost,
 * what the person is shown, and what goes back. No `vscode` here.
 */
import { tokensOf } from '../../runtime/core/tokens';
import { checkBase64Image } from '../../common/imageRules';
import type { TokenUsage } from '../../common/prices';
import { FALLBACK_PRICE_PER_MTOK } from '../../runtime/core/limits';

export interface SamplingContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
}

export interface SamplingParams {
  messages: { role: 'user' | 'assistant'; content: SamplingContent | SamplingContent[] }[];
  systemPrompt?: string;
  maxTokens: number;
  temperature?: number;
  stopSequences?: string[];
  modelPreferences?: { hints?: { name?: string }[]; costPriority?: number; speedPriority?: number; intelligencePriority?: number };
  includeContext?: string;
  tools?: unknown[];
}

/** What a chat completion request is made of here (the gateway client validates it again). */
export type SamplingRequest = {
  model: string;
  messages: (
    | { role: 'system' | 'assistant'; content: string }
    | { role: 'user'; content: string | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] }
  )[];
  max_tokens: number;
  temperature?: number;
  stop?: string[];
};

/** A request this client does not carry out, with the reason the server gets. */
export class SamplingRefusal extends Error {}

/** Tokens counted for one image in the estimate (the chat's own figure for a picture). */
const IMAGE_TOKENS = 1000;
/** Characters of each message shown in the approval (the whole request is in the log). */
const SHOWN_CHARS = 1200;

const contents = (c: SamplingContent | SamplingContent[]): SamplingContent[] => (Array.isArray(c) ? c : [c]);

/**
 * The model that answers: the first of the server's hints a listed model matches (its exact id,
 * else the shortest id that contains it: hints are substrings, MCP says), else the model the
 * person chats with.
 */
export function chooseModel(
  prefs: SamplingParams['modelPreferences'],
  listed: readonly string[],
  fallback: string | undefined,
): { model: string; why: string } | undefined {
  for (const hint of prefs?.hints ?? []) {
    const name = hint.name?.trim().toLowerCase();
    if (!name) continue;
    const exact = listed.find((m) => m.toLowerCase() === name);
    if (exact) return { model: exact, why: `the server asked for "${hint.name}"` };
    const near = listed.filter((m) => m.toLowerCase().includes(name)).sort((a, b) => a.length - b.length || a.localeCompare(b))[0];
    if (near) return { model: near, why: `the server's hint "${hint.name}"` };
  }
  const model = fallback && (listed.length === 0 || listed.includes(fallback)) ? fallback : listed[0];
  if (!model) return undefined;
  const hinted = (prefs?.hints ?? []).map((h) => h.name).filter(Boolean);
  return { model, why: hinted.length ? `no model of the gateway matches the server's hints (${hinted.join(', ')}): your chat model` : 'your chat model' };
}

/** The chat completion the request becomes; refused for content a chat model cannot take. */
export function toChatRequest(p: SamplingParams, model: string): SamplingRequest {
  if (p.tools?.length) throw new SamplingRefusal('sampling with tools is not supported by this client');
  if (!Number.isInteger(p.maxTokens) || p.maxTokens < 1) throw new SamplingRefusal('maxTokens must be a whole number of at least 1');
  const messages: SamplingRequest['messages'] = [];
  if (p.systemPrompt?.trim()) messages.push({ role: 'system', content: p.systemPrompt });
  for (const m of p.messages) {
    const parts: ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] = [];
    for (const c of contents(m.content)) {
      if (c.type === 'text') parts.push({ type: 'text', text: c.text ?? '' });
      else if (c.type === 'image' && m.role === 'user') {
        const problem = checkBase64Image(c.mimeType ?? '', c.data ?? '');
        if (problem) throw new SamplingRefusal(`an image of the request: ${problem}`);
        parts.push({ type: 'image_url', image_url: { url: `data:${c.mimeType};base64,${c.data ?? ''}` } });
      } else throw new SamplingRefusal(`${c.type} content${c.type === 'image' ? ' from the assistant' : ''} is not supported in sampling by this client`);
    }
    const texts = parts.flatMap((x) => (x.type === 'text' ? [x.text] : []));
    if (m.role === 'assistant') messages.push({ role: 'assistant', content: texts.join('\n') });
    else messages.push({ role: 'user', content: texts.length === parts.length ? texts.join('\n') : parts });
  }
  return {
    model,
    messages,
    max_tokens: p.maxTokens,
    ...(p.temperature !== undefined ? { temperature: Math.min(2, Math.max(0, p.temperature)) } : {}),
    ...(p.stopSequences?.length ? { stop: p.stopSequences.slice(0, 4) } : {}),
  };
}

/** Tokens the request sends, as the chat estimates them (the gateway counts none beforehand). */
export function inputTokens(p: SamplingParams): number {
  let n = p.systemPrompt ? tokensOf(p.systemPrompt) + 4 : 0;
  for (const m of p.messages) {
    n += 4;
    for (const c of contents(m.content)) n += c.type === 'text' ? tokensOf(c.text ?? '') : c.type === 'image' ? IMAGE_TOKENS : 0;
  }
  return n;
}

/**
 * The most the request can cost: its input and every token it may answer with, at the model's
 * price, or at a deliberately high price when the model's is unknown.
 */
export function worstCaseDollars(p: SamplingParams, price: ((usage: TokenUsage) => number | undefined) | undefined): { dollars: number; priced: boolean } {
  const usage: TokenUsage = { input: inputTokens(p), output: p.maxTokens, cacheRead: 0, cacheWrite: 0 };
  const known = price?.(usage);
  if (known !== undefined) return { dollars: known, priced: true };
  return { dollars: fallbackDollars(usage), priced: false };
}

/** A reply's cost at the deliberately high price counted for a model whose price is unknown. */
export function fallbackDollars(usage: TokenUsage): number {
  return (usage.input * FALLBACK_PRICE_PER_MTOK.input + usage.output * FALLBACK_PRICE_PER_MTOK.output) / 1e6;
}

/** The request as the person reads it before allowing it: who speaks, what, and the limits. */
export function describeRequest(p: SamplingParams): string {
  const clip = (s: string) => (s.length > SHOWN_CHARS ? `${s.slice(0, SHOWN_CHARS)}… (${s.length - SHOWN_CHARS} more characters)` : s);
  const lines: string[] = [];
  if (p.systemPrompt?.trim()) lines.push(`System: ${clip(p.systemPrompt.trim())}`);
  for (const m of p.messages) {
    const text = contents(m.content)
      .map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}${c.mimeType ? ` ${c.mimeType}` : ''}]`))
      .join('\n');
    lines.push(`${m.role === 'user' ? 'User' : 'Assistant'}: ${clip(text)}`);
  }
  const limits = [`at most ${p.maxTokens} tokens`, ...(p.temperature !== undefined ? [`temperature ${p.temperature}`] : [])];
  lines.push(`(${limits.join(', ')})`);
  return lines.join('\n\n');
}

/** The stop reason MCP names for the gateway's `finish_reason`. */
export function stopReasonOf(finish: string | null | undefined): string {
  if (finish === 'length') return 'maxTokens';
  if (finish === 'stop' || finish === 'tool_calls' || !finish) return 'endTurn';
  return finish;
}
