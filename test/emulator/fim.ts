/**
 * `POST /v1/completions` with fill-in-the-middle, as new-api relays it to a code model: `prompt`
 * (the code before the cursor) and `suffix` (after it). A small deterministic completer finishes
 * the current statement or opens a block's body, so tests can say what the ghost text will be:
 *
 * - a partial word completes to the longest-used identifier of the file that starts with it;
 * - open brackets on the current line are closed (`;` added after a JS/TS-like statement unless
 *   the suffix already has it);
 * - a line ending in `{` gets a body line and the closing brace (unless the suffix closes it).
 *
 * Models: `fim: true` take `suffix`; `plain` completion models refuse it (400, as OpenAI's
 * instruct models do); chat models are not served here (404, OpenAI's words).
 */
import { randomBytes } from 'node:crypto';
import { estimateTokens, textPieces } from './assistant';
import { SseWriter } from './faults';
import { openAiError, sendJson, type Ctx } from './server';

const CLOSERS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** The closers the line still needs, innermost first (strings and comments are not parsed: code samples only). */
function openBrackets(line: string): string[] {
  const stack: string[] = [];
  for (const ch of line) {
    if (ch in CLOSERS) stack.push(ch);
    else if (Object.values(CLOSERS).includes(ch) && stack.length && CLOSERS[stack[stack.length - 1]] === ch) stack.pop();
  }
  return stack.reverse().map((c) => CLOSERS[c]);
}

function identifiers(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/[A-Za-z_$][\w$]*/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  return counts;
}

/** What a code model would put at the cursor. */
export function fillTheMiddle(prefix: string, suffix: string): string {
  const lineStart = prefix.lastIndexOf('\n') + 1;
  const line = prefix.slice(lineStart);
  const indent = /^\s*/.exec(line)?.[0] ?? '';
  const suffixLine = suffix.split('\n')[0];
  const nextLines = suffix.split('\n').slice(1);

  if (/\{\s*$/.test(line) && suffixLine.trim() === '') {
    const name = /(?:function|class|def|fn)\s+([\w$]+)|([\w$]+)\s*\([^)]*\)\s*(?::[^{]*)?\{\s*$/.exec(line);
    const what = name?.[1] ?? name?.[2] ?? 'this block';
    const closed =
      nextLines
        .find((l) => l.trim() !== '')
        ?.trim()
        .startsWith('}') && (nextLines.find((l) => l.trim() !== '') ?? '').startsWith(indent + '}');
    return `\n${indent}  // TODO: implement ${what}${closed ? '' : `\n${indent}}`}`;
  }

  let out = '';
  const word = /[A-Za-z_$][\w$]*$/.exec(line)?.[0];
  if (word) {
    const counts = identifiers(prefix.slice(0, lineStart) + '\n' + suffix);
    const candidates = [...counts.entries()]
      .filter(([id]) => id.startsWith(word) && id !== word)
      .sort((a, b) => b[1] - a[1] || b[0].length - a[0].length || a[0].localeCompare(b[0]));
    if (candidates[0]) out = candidates[0][0].slice(word.length);
  }
  const closers = openBrackets(line + out).join('');
  const restOfLine = suffixLine.trim();
  if (closers && !restOfLine.startsWith(closers)) out += closers;
  const statement = /^\s*(?:return|const|let|var|await|throw)\b|^\s*[\w$.]+\(/.test(line + out);
  // The statement ends here unless the rest of the line (after the cursor) goes on with it.
  // A statement whose last word is whole (nothing to add to it) is ended all the same.
  if (statement && (closers || out || word) && !restOfLine && !/[;{}]$/.test((line + out).trim())) out += ';';
  return out;
}

interface CompletionModelRules {
  fim: boolean;
}

/** Which models this route serves: code models with FIM, an instruct model without it. */
export const COMPLETION_MODELS: Record<string, CompletionModelRules> = {
  'codestral-emu': { fim: true },
  'qwen-coder-emu': { fim: true },
  'gpt-3.5-turbo-instruct-emu': { fim: false },
};

export async function handleCompletions(ctx: Ctx): Promise<void> {
  const { emu, res } = ctx;
  const begun = emu.beginJson(ctx, 'chat');
  if (!begun) return;
  const { body, model, auth } = begun;
  const rules = COMPLETION_MODELS[model.id];
  if (!rules) {
    return openAiError(
      res,
      404,
      'This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?',
      'invalid_request_error',
    );
  }
  if (typeof body.prompt !== 'string') return openAiError(res, 400, "'prompt' is a required property", 'invalid_request_error', 'invalid_parameter');
  if (body.suffix !== undefined && !rules.fim) {
    return openAiError(res, 400, `Unsupported parameter: 'suffix' is not supported with this model.`, 'invalid_request_error', 'unsupported_parameter');
  }
  const prefix = body.prompt;
  const suffix = typeof body.suffix === 'string' ? body.suffix : '';
  let text = emu.codeModel(prefix, suffix);
  let finish = 'stop';
  const stops = (Array.isArray(body.stop) ? body.stop : typeof body.stop === 'string' ? [body.stop] : []).filter(
    (s): s is string => typeof s === 'string' && s.length > 0,
  );
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0) text = text.slice(0, at);
  }
  if (typeof body.max_tokens === 'number' && estimateTokens(text) > body.max_tokens) {
    text = text.slice(0, body.max_tokens * 4);
    finish = 'length';
  }
  const promptTokens = estimateTokens(prefix) + estimateTokens(suffix);
  const completionTokens = estimateTokens(text);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  emu.store.spend(auth.key, (promptTokens + completionTokens * 4) * model.ratio, {
    model: model.id,
    prompt: promptTokens,
    completion: completionTokens,
    stream: body.stream === true,
  });
  const id = `cmpl-${randomBytes(12).toString('base64url')}`;
  const created = Math.floor(emu.clock.now() / 1000);
  const base = { id, object: 'text_completion', created, model: model.id };
  if (body.stream !== true) return sendJson(res, 200, { ...base, choices: [{ text, index: 0, logprobs: null, finish_reason: finish }], usage });

  const writer = new SseWriter(res, ctx.faults, (message) => ({
    data: JSON.stringify({ error: { message, type: 'upstream_error', param: null, code: 'stream_failed' } }),
  }));
  writer.onClientClose = () => emu.clientClosedStreams++;
  writer.start();
  const chunk = (piece: string, finishReason: string | null) =>
    JSON.stringify({ ...base, choices: [{ text: piece, index: 0, logprobs: null, finish_reason: finishReason }] });
  for (const piece of textPieces(text)) if (!(await writer.event(undefined, chunk(piece, null)))) return;
  if (!(await writer.event(undefined, chunk('', finish)))) return;
  const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  if (includeUsage && !(await writer.event(undefined, JSON.stringify({ ...base, choices: [], usage })))) return;
  if (!(await writer.event(undefined, '[DONE]'))) return;
  writer.end();
}
