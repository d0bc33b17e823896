/**
 * Condensing: older turns summarised by the model itself, so a long conversation goes on in the
 * same window. The summariser reads a plain transcript of what the cut covers (after the previous
 * summary, if any); the summary then stands for those turns in every request (`budget.ts`), as
 * the stable start of the prompt with its own cache breakpoint (`wire.ts`).
 */
import type { GatewayClient } from '../../gateway/client';
import { promptLimit, turnsToSummarise, type Cut } from './budget';
import { newId, type Condensation, type Turn, type WireFormat } from '../../common/conversation';
import { tokensOf } from './tokens';
import { userText } from './wire';

export const SUMMARY_INSTRUCTIONS = [
  "You condense a coding assistant's conversation so that the assistant can carry on without the original messages.",
  'Write what it needs to continue: the requests and constraints of the person (quote exact wording where it matters), decisions made,',
  'files read or changed with the facts learned from them (paths, names, line numbers), tool calls that failed and why, what is left to do and the next step.',
  'Short headed sections and bullet points. Nothing invented, no preamble.',
].join(' ');

export const SUMMARY_REQUEST = 'Summarise the conversation below for the assistant to continue from.';

/** Each tool result in the transcript at most (the summary needs the facts, not whole files). */
const RESULT_CHARS = 1_500;
const CHARS_PER_TOKEN = 3.5;

function transcriptOf(turns: readonly Turn[], resultChars: number): string[] {
  const lines: string[] = [];
  for (const t of turns) {
    if (t.role === 'user') {
      const images = t.images.length ? ` (${t.images.length} image${t.images.length > 1 ? 's' : ''} attached)` : '';
      lines.push(`User${images}: ${userText(t)}`);
      continue;
    }
    for (const s of t.steps) {
      if (s.text) lines.push(`Assistant: ${s.text}`);
      for (const c of s.toolCalls) {
        const result = c.result ?? '(not run)';
        const shown = result.length > resultChars ? `${result.slice(0, resultChars)} […${(result.length - resultChars).toLocaleString('en-US')} more characters]` : result;
        lines.push(`Assistant called ${c.name}(${c.args})${c.isError ? ' and it failed' : ''}:\n${shown}`);
      }
    }
    if (t.status === 'error' && t.error) lines.push(`(The answer failed: ${t.error.message})`);
  }
  return lines;
}

/** The transcript, fitted to `budget` tokens: results shortened first, then the oldest lines dropped. */
export function transcriptFor(turns: readonly Turn[], previousSummary: string | undefined, budget: number): string {
  const head = previousSummary ? [`Summary of what came before:\n${previousSummary}`] : [];
  for (const resultChars of [RESULT_CHARS, 400]) {
    const text = [...head, ...transcriptOf(turns, resultChars)].join('\n\n');
    if (tokensOf(text) <= budget) return text;
  }
  const lines = transcriptOf(turns, 400);
  const headText = head.join('');
  let room = Math.floor((budget - tokensOf(headText)) * CHARS_PER_TOKEN);
  const kept: string[] = [];
  for (let i = lines.length - 1; i >= 0 && room > 0; i--) {
    const line = lines[i].length > room ? `…${lines[i].slice(lines[i].length - room)}` : lines[i];
    kept.unshift(line);
    room -= line.length + 2;
  }
  return [...head, '(Older messages left out.)', ...kept].join('\n\n');
}

export interface CondenseOptions {
  client: GatewayClient;
  model: string;
  format: WireFormat;
  /** The stored conversation (history and the answer in progress). */
  turns: readonly Turn[];
  cut: Cut;
  current?: Condensation;
  window: number;
  manual: boolean;
  signal?: AbortSignal;
}

/** What the summary request cost, as the gateway counted it (0s when it did not say). */
export interface CondenseUsage {
  input: number;
  output: number;
}

/** Asks the model for a summary of what `cut` covers; throws the gateway's error if it fails. */
export async function condense(o: CondenseOptions): Promise<{ condensation: Condensation; usage: CondenseUsage }> {
  const covered = turnsToSummarise(o.turns, o.cut, o.current);
  const maxTokens = Math.max(256, Math.min(2_000, Math.floor(o.window * 0.08)));
  const budget = promptLimit(o.window, maxTokens) - tokensOf(SUMMARY_INSTRUCTIONS) - 200;
  const transcript = transcriptFor(covered, o.current?.summary, budget);
  const question = `${SUMMARY_REQUEST}\n\n<conversation>\n${transcript}\n</conversation>`;
  let summary: string;
  const usage: CondenseUsage = { input: 0, output: 0 };
  if (o.format === 'messages') {
    const reply = await o.client.messages.create(
      { model: o.model, max_tokens: maxTokens, system: SUMMARY_INSTRUCTIONS, messages: [{ role: 'user', content: question }] },
      { signal: o.signal },
    );
    summary = reply.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    usage.input = reply.usage.input_tokens + (reply.usage.cache_read_input_tokens ?? 0) + (reply.usage.cache_creation_input_tokens ?? 0);
    usage.output = reply.usage.output_tokens;
  } else if (o.format === 'responses') {
    const reply = await o.client.responses.create(
      { model: o.model, max_output_tokens: maxTokens, instructions: SUMMARY_INSTRUCTIONS, input: [{ role: 'user', content: question }], store: false },
      { signal: o.signal },
    );
    summary = reply.output.flatMap((i) => (i.type === 'message' && Array.isArray(i.content) ? (i.content as { type: string; text?: string }[]) : [])).map((c) => (c.type === 'output_text' ? (c.text ?? '') : '')).join('');
    usage.input = reply.usage?.input_tokens ?? 0;
    usage.output = reply.usage?.output_tokens ?? 0;
  } else if (o.format === 'gemini') {
    const reply = await o.client.gemini.generateContent(
      o.model,
      { systemInstruction: { parts: [{ text: SUMMARY_INSTRUCTIONS }] }, contents: [{ role: 'user', parts: [{ text: question }] }], generationConfig: { maxOutputTokens: maxTokens } },
      { signal: o.signal },
    );
    summary = (reply.candidates?.[0]?.content?.parts ?? []).map((p) => (p.text && !p.thought ? p.text : '')).join('');
    usage.input = reply.usageMetadata?.promptTokenCount ?? 0;
    usage.output = (reply.usageMetadata?.candidatesTokenCount ?? 0) + (reply.usageMetadata?.thoughtsTokenCount ?? 0);
  } else {
    const reply = await o.client.chat.completions.create(
      { model: o.model, max_tokens: maxTokens, messages: [{ role: 'system', content: SUMMARY_INSTRUCTIONS }, { role: 'user', content: question }] },
      { signal: o.signal },
    );
    const content = reply.choices[0]?.message.content;
    summary = typeof content === 'string' ? content : '';
    usage.input = reply.usage?.prompt_tokens ?? 0;
    usage.output = reply.usage?.completion_tokens ?? 0;
  }
  summary = summary.trim();
  if (!summary) throw new Error('The model returned an empty summary: the conversation was not condensed.');
  const before = transcriptOf(covered, Infinity).join('\n\n');
  const condensation = {
    id: newId('k'),
    summary,
    ...o.cut,
    tokensBefore: tokensOf(before) + (o.current?.tokensAfter ?? 0),
    tokensAfter: tokensOf(summary),
    model: o.model,
    manual: o.manual,
    at: Date.now(),
  };
  return { condensation, usage };
}
