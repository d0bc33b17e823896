/**
 * Condensing: older turns summarised by the model itself, so a long conversation goes on in the
 * same window. The summariser reads a plain transcript of what the cut covers (after the previous
 * summary, if any); the summary then stands for those turns in every request (`budget.ts`), as
 * the stable start of the prompt with its own cache breakpoint (`wire.ts`).
 */
import type { GatewayClient } from '../../gateway/client';
import { promptLimit, SUMMARY_HEADING, turnsToSummarise, type Cut } from './budget';
import { newId, type Condensation, type Turn, type WireFormat } from '../../common/conversation';
import { tokensOf } from './tokens';
import { toResponsesInput, userText } from './wire';
import type { ResponseInputItem } from '../../gateway/resources/responses';

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
        const shown =
          result.length > resultChars ? `${result.slice(0, resultChars)} […${(result.length - resultChars).toLocaleString('en-US')} more characters]` : result;
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
  /**
   * Responses models: compact on the server (`/v1/responses/compact`) where the gateway has it
   * (cheaper than a summary written by the model, and what the model knew, encrypted reasoning
   * included, is kept). `onNoRoute` hears of a 404, after which the summary is asked for.
   */
  serverCompaction?: { onNoRoute: () => void; onFailed?: (message: string) => void };
}

/** What the summary request cost, as the gateway counted it (0s when it did not say). */
export interface CondenseUsage {
  input: number;
  output: number;
}

/** The excerpt a compacted condensation keeps as its text, for models that cannot read the compaction. */
const EXCERPT_TOKENS = 1_500;

/**
 * The gateway compacts the covered turns (after the previous condensation, in its compacted or
 * its text form). Undefined when the gateway has no such route (404, reported) or refuses the
 * request (reported; the summary is asked for instead).
 */
async function compactOnServer(o: CondenseOptions, covered: readonly Turn[]): Promise<{ items: unknown[]; usage: CondenseUsage } | undefined> {
  const before: ResponseInputItem[] = !o.current
    ? []
    : o.current.serverItems && o.current.model === o.model
      ? (o.current.serverItems as ResponseInputItem[])
      : [{ role: 'user', content: `${SUMMARY_HEADING}\n\n${o.current.summary}` }];
  try {
    const reply = await o.client.responses.compact({ model: o.model, input: [...before, ...toResponsesInput(covered, o.model)] }, { signal: o.signal });
    if (!reply.output.some((i) => i.type === 'compaction')) throw new Error('the gateway answered without a compaction item');
    return { items: reply.output, usage: { input: reply.usage?.input_tokens ?? 0, output: reply.usage?.output_tokens ?? 0 } };
  } catch (err) {
    if (o.signal?.aborted) throw err;
    // By name: the gateway's classes live in its own bundle, loaded on first use.
    if ((err as { name?: string })?.name === 'NotFoundError') o.serverCompaction?.onNoRoute();
    else o.serverCompaction?.onFailed?.(err instanceof Error ? err.message : String(err));
    return undefined;
  }
}

/**
 * Condenses what `cut` covers: compacted by the gateway for a Responses model where it can, else
 * summarised by the model. Throws the gateway's error if the summary fails.
 */
export async function condense(o: CondenseOptions): Promise<{ condensation: Condensation; usage: CondenseUsage }> {
  const covered = turnsToSummarise(o.turns, o.cut, o.current);
  if (o.format === 'responses' && o.serverCompaction) {
    const compacted = await compactOnServer(o, covered);
    if (compacted) {
      const excerpt = transcriptFor(covered, o.current?.summary, EXCERPT_TOKENS);
      const kept = compacted.items.filter((i) => (i as { type?: string }).type !== 'compaction');
      return {
        condensation: {
          id: newId('k'),
          summary: excerpt,
          serverItems: compacted.items,
          ...o.cut,
          tokensBefore: tokensOf(transcriptOf(covered, Infinity).join('\n\n')) + (o.current?.tokensAfter ?? 0),
          // What the model reads: the kept messages and the compaction (its size as the gateway billed it).
          tokensAfter: tokensOf(JSON.stringify(kept)) + compacted.usage.output,
          model: o.model,
          manual: o.manual,
          at: Date.now(),
        },
        usage: compacted.usage,
      };
    }
  }
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
    summary = reply.output
      .flatMap((i) => (i.type === 'message' && Array.isArray(i.content) ? (i.content as { type: string; text?: string }[]) : []))
      .map((c) => (c.type === 'output_text' ? (c.text ?? '') : ''))
      .join('');
    usage.input = reply.usage?.input_tokens ?? 0;
    usage.output = reply.usage?.output_tokens ?? 0;
  } else if (o.format === 'gemini') {
    const reply = await o.client.gemini.generateContent(
      o.model,
      {
        systemInstruction: { parts: [{ text: SUMMARY_INSTRUCTIONS }] },
        contents: [{ role: 'user', parts: [{ text: question }] }],
        generationConfig: { maxOutputTokens: maxTokens },
      },
      { signal: o.signal },
    );
    summary = (reply.candidates?.[0]?.content?.parts ?? []).map((p) => (p.text && !p.thought ? p.text : '')).join('');
    usage.input = reply.usageMetadata?.promptTokenCount ?? 0;
    usage.output = (reply.usageMetadata?.candidatesTokenCount ?? 0) + (reply.usageMetadata?.thoughtsTokenCount ?? 0);
  } else {
    const reply = await o.client.chat.completions.create(
      {
        model: o.model,
        max_tokens: maxTokens,
        messages: [
          { role: 'system', content: SUMMARY_INSTRUCTIONS },
          { role: 'user', content: question },
        ],
      },
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
