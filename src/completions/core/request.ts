/**
 * The two ways to ask for the hole: fill-in-the-middle on `/v1/completions` (`prompt` + `suffix`)
 * where the model has it, else a chat prompt that asks for the hole only (its answer is cleaned by
 * `cleanChatAnswer`). Both stop early: a blank line ends a block, and mid-line only the line is
 * completed.
 */
import type { ChatMessage, CompletionRequest } from '../../gateway';

export interface HoleContext {
  prefix: string;
  suffix: string;
  language: string;
  /** The file's path in the workspace, shown to the model as a comment. */
  path: string;
  /** Code from other files (recently edited, found by search), each with its path. */
  snippets: { path: string; text: string }[];
  maxTokens: number;
}

/** Completing mid-line (code after the cursor on its line): one line at most. */
export function midLine(suffix: string): boolean {
  return suffix.split('\n')[0].trim() !== '';
}

export function stopsFor(ctx: Pick<HoleContext, 'suffix'>): string[] {
  return midLine(ctx.suffix) ? ['\n'] : ['\n\n\n'];
}

function header(ctx: HoleContext): string {
  const files = ctx.snippets.map(
    (s) =>
      `// From ${s.path}:\n${s.text
        .split('\n')
        .map((l) => `// ${l}`)
        .join('\n')}`,
  );
  return [...files, `// ${ctx.path} (${ctx.language})`].join('\n') + '\n';
}

export function fimRequest(model: string, ctx: HoleContext): CompletionRequest {
  return { model, prompt: header(ctx) + ctx.prefix, suffix: ctx.suffix, max_tokens: ctx.maxTokens, temperature: 0, stop: stopsFor(ctx) };
}

/** The prompt without `suffix`, for a model that refused it. */
export function prefixOnlyRequest(model: string, ctx: HoleContext): CompletionRequest {
  return { model, prompt: header(ctx) + ctx.prefix, max_tokens: ctx.maxTokens, temperature: 0, stop: stopsFor(ctx) };
}

export const HOLE = '<HOLE>';

export function chatRequest(
  model: string,
  ctx: HoleContext,
): { model: string; messages: ChatMessage[]; max_tokens: number; temperature: number; stop?: string[] } {
  const context = ctx.snippets.map((s) => `From ${s.path}:\n\`\`\`\n${s.text}\n\`\`\``).join('\n\n');
  return {
    model,
    temperature: 0,
    max_tokens: ctx.maxTokens,
    messages: [
      {
        role: 'system',
        content: `You complete code. Reply with only the code that replaces ${HOLE}: no explanation, no code fences, nothing from before or after ${HOLE}.${midLine(ctx.suffix) ? ' Complete only the current line.' : ''}`,
      },
      { role: 'user', content: `${context ? `${context}\n\n` : ''}${ctx.path} (${ctx.language}):\n\`\`\`\n${ctx.prefix}${HOLE}${ctx.suffix}\n\`\`\`` },
    ],
  };
}

/** At most `maxLines` lines of a completion (a model that keeps going is cut). */
export function limitLines(text: string, maxLines: number): string {
  const lines = text.split('\n');
  return lines.length <= maxLines ? text : lines.slice(0, maxLines).join('\n');
}

/** How a model is asked: fill-in-the-middle, the prompt without suffix, or the chat prompt. */
export type CompletionPath = 'fim' | 'prompt' | 'chat';

/**
 * The path to try after a refusal: a 400 naming `suffix` → the prompt alone; a 404 saying the model
 * is a chat model (OpenAI's and new-api's wording for /v1/completions) → the chat prompt.
 */
export function nextPath(path: CompletionPath, err: unknown): CompletionPath | undefined {
  const e = err as { name?: string; status?: number; message?: string; serverMessage?: string };
  const message = e.serverMessage ?? e.message ?? '';
  if (path === 'fim' && (e.name === 'BadRequestError' || e.status === 400) && /suffix/i.test(message)) return 'prompt';
  if (
    path !== 'chat' &&
    (e.name === 'NotFoundError' || e.status === 404 || e.status === 400) &&
    /chat model|chat\/completions|not supported in the v1\/completions/i.test(message)
  )
    return 'chat';
  return undefined;
}
