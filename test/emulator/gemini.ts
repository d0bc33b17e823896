/**
 * Gemini's own format as new-api relays it (`router/relay-router.go`: `/v1beta/models/*path`
 * behind TokenAuth, which takes the key from `?key=`, `x-goog-api-key` or the bearer header, and
 * the model rate limit; `GET /v1beta/models` lists the models in Gemini's shape). Shapes as
 * Google's API and the official `@google/genai` SDK have them: `contents` of `user`/`model`
 * parts, `systemInstruction`, `functionDeclarations`, `generationConfig.thinkingConfig`, thought
 * parts (`thought: true`), `usageMetadata`, SSE chunks with no terminator. The thinking model
 * signs the first function call of each step (`thoughtSignature`) and refuses a history whose
 * model turn comes back without it, as Gemini 3 does. one-api has no such route.
 */
import { createHash, randomBytes } from 'node:crypto';
import { estimateTokens, plan, textPieces, type ToolChoice, type ToolSpec, type Turn } from './assistant';
import { SseWriter } from './faults';
import { MODELS } from './models';
import { sendJson, type Ctx } from './server';
import { asText } from './values';

type Json = Record<string, unknown>;

/** What Gemini 3 accepts in place of a signature on a function call it did not make. */
const SKIP_VALIDATOR = 'skip_thought_signature_validator';

/** Models that think and sign their function calls. */
export const SIGNING_GEMINI_MODELS = new Set(['gemini-3-pro-emu']);

const SEAL = randomBytes(16).toString('hex');
const sign = (what: string): string => {
  const body = Buffer.from(what).toString('base64');
  return `${body}.${createHash('sha256')
    .update(SEAL + body)
    .digest('base64')
    .slice(0, 22)}`;
};
const verified = (v: unknown): boolean => {
  if (typeof v !== 'string') return false;
  // Google's documented value for history another model wrote (ai.google.dev/gemini-api/docs/thought-signatures).
  if (v === SKIP_VALIDATOR) return true;
  const [body, mac] = v.split('.');
  return (
    !!body &&
    mac ===
      createHash('sha256')
        .update(SEAL + body)
        .digest('base64')
        .slice(0, 22)
  );
};

/** Google's error envelope (what an upstream Gemini refusal looks like through the relay). */
function googleError(ctx: Ctx, code: number, message: string, status = 'INVALID_ARGUMENT'): void {
  sendJson(ctx.res, code, { error: { code, message, status } });
}

export function handleGeminiModels(ctx: Ctx): void {
  const { emu } = ctx;
  if (emu.profile !== 'new-api')
    return sendJson(ctx.res, 404, { error: { message: `Invalid URL (GET ${ctx.path})`, type: 'invalid_request_error', param: '', code: '' } });
  const auth = emu.authorize(ctx, 'goog', undefined, 'openai');
  if (!auth.ok) return;
  const allowed = auth.key.models;
  const models = MODELS.filter((m) => m.kind === 'chat' && (!allowed || allowed.includes(m.id))).map((m) => ({
    name: `models/${m.id}`,
    displayName: m.id,
    description: '',
    inputTokenLimit: m.contextWindow ?? 128_000,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
  }));
  // The last page has no nextPageToken (the SDK's pager asks again for any token, even an empty one).
  sendJson(ctx.res, 200, { models });
}

interface Parsed {
  turns: Turn[];
  tokens: number;
  problem?: string;
}

/** `contents` into the planner's turns; the signing model checks every model turn's signature. */
function toTurns(contents: Json[], signing: boolean): Parsed {
  const turns: Turn[] = [];
  let tokens = 0;
  for (const [i, c] of contents.entries()) {
    const parts = Array.isArray(c.parts) ? (c.parts as Json[]) : [];
    if (c.role !== 'user' && c.role !== 'model')
      return { turns, tokens, problem: `Please use a valid role: user, model. (contents[${i}].role: ${asText(c.role)})` };
    if (parts.length === 0) return { turns, tokens, problem: `contents[${i}].parts must not be empty.` };
    if (c.role === 'model') {
      const turn: Turn = { role: 'assistant', text: '', images: 0, toolResults: [], toolCalls: [], callArgs: [] };
      let firstCall = true;
      for (const [j, p] of parts.entries()) {
        if (p.functionCall && typeof p.functionCall === 'object') {
          const fc = p.functionCall as Json;
          if (signing && firstCall && !verified(p.thoughtSignature)) {
            return {
              turns,
              tokens,
              problem:
                p.thoughtSignature === undefined
                  ? `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${asText(fc.name)}\` , position ${j + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`
                  : 'Corrupted thought signature.',
            };
          }
          firstCall = false;
          turn.toolCalls.push(asText(fc.name));
          turn.callArgs!.push(fc.args && typeof fc.args === 'object' ? (fc.args as Json) : {});
          tokens += estimateTokens(JSON.stringify(fc.args ?? {}));
        } else if (typeof p.text === 'string' && !p.thought) {
          turn.text += p.text;
          tokens += estimateTokens(p.text);
        }
      }
      turns.push(turn);
      continue;
    }
    const turn: Turn = { role: 'user', text: '', images: 0, toolResults: [], toolCalls: [] };
    for (const p of parts) {
      if (typeof p.text === 'string') turn.text += (turn.text ? '\n' : '') + p.text;
      if (p.inlineData) turn.images++;
      if (p.functionResponse && typeof p.functionResponse === 'object') {
        const fr = p.functionResponse as Json;
        const r = (fr.response ?? {}) as Json;
        const content =
          typeof r.output === 'string' ? r.output : typeof r.result === 'string' ? r.result : typeof r.error === 'string' ? r.error : JSON.stringify(r);
        turn.toolResults.push({ name: asText(fr.name), content, isError: r.error !== undefined });
        tokens += estimateTokens(content);
      }
    }
    tokens += estimateTokens(turn.text) + turn.images * 258 + 4;
    turns.push(turn);
  }
  return { turns, tokens };
}

function choiceOf(config: unknown): ToolChoice {
  const mode = ((config as Json | undefined)?.functionCallingConfig as Json | undefined)?.mode;
  return mode === 'ANY' ? 'required' : mode === 'NONE' ? 'none' : 'auto';
}

export async function handleGemini(ctx: Ctx, modelId: string, stream: boolean): Promise<void> {
  const { emu, res } = ctx;
  if (emu.profile !== 'new-api')
    return sendJson(res, 404, { error: { message: `Invalid URL (POST ${ctx.path})`, type: 'invalid_request_error', param: '', code: '' } });
  const model = emu.requireModel(ctx, modelId, 'openai', 'chat');
  if (!model) return;
  const auth = emu.authorize(ctx, 'goog', model, 'openai');
  if (!auth.ok) return;
  const body = ctx.body as Json | undefined;
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) return googleError(ctx, 400, 'Invalid JSON payload received.');
  const contents = Array.isArray(body.contents) ? (body.contents as Json[]) : [];
  if (contents.length === 0) return googleError(ctx, 400, '* GenerateContentRequest.contents: contents is not specified');
  const tools: ToolSpec[] = [];
  for (const t of Array.isArray(body.tools) ? (body.tools as Json[]) : []) {
    for (const d of Array.isArray(t.functionDeclarations) ? (t.functionDeclarations as Json[]) : []) {
      if (typeof d.name !== 'string' || !d.name)
        return googleError(ctx, 400, '* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.');
      tools.push({ name: d.name, description: asText(d.description), parameters: d.parametersJsonSchema ?? d.parameters ?? {} });
    }
  }
  const signing = SIGNING_GEMINI_MODELS.has(model.id);
  const parsed = toTurns(contents, signing);
  if (parsed.problem) return googleError(ctx, 400, parsed.problem);
  const system = ((body.systemInstruction as Json | undefined)?.parts as Json[] | undefined)?.map((p) => asText(p.text)).join('\n') ?? '';
  const promptTokens = parsed.tokens + estimateTokens(system) + (tools.length ? estimateTokens(JSON.stringify(body.tools)) : 0);
  if (model.contextWindow && promptTokens > model.contextWindow)
    return googleError(ctx, 400, `The input token count (${promptTokens}) exceeds the maximum number of tokens allowed (${model.contextWindow}).`);
  const thinking = ((body.generationConfig as Json | undefined)?.thinkingConfig ?? {}) as Json;
  const budget = typeof thinking.thinkingBudget === 'number' ? thinking.thinkingBudget : -1;
  const thinks = signing && budget !== 0;
  const p = plan(model.id, parsed.turns, tools, choiceOf(body.toolConfig), thinks);
  const thought = thinks ? (p.thinking ?? 'Working out what to do next.') : undefined;
  const thoughtsTokens = thought ? Math.min(budget > 0 ? budget : Infinity, estimateTokens(thought) * 3) : 0;
  const calls = p.toolCalls.map((c, i) => ({
    functionCall: { name: c.name, args: c.arguments },
    ...(signing && i === 0 ? { thoughtSignature: sign(`${c.name}:${randomBytes(6).toString('hex')}`) } : {}),
  }));
  const outputTokens = estimateTokens(p.text) + calls.reduce((n, c) => n + estimateTokens(JSON.stringify(c.functionCall.args)), 0);
  const cached = emu.automaticCache.lookup(auth.key.key, [body.systemInstruction, body.tools, ...contents], promptTokens);
  emu.store.spend(auth.key, (promptTokens - cached * 0.9 + (outputTokens + thoughtsTokens) * 4) * model.ratio, {
    model: model.id,
    prompt: promptTokens,
    completion: outputTokens + thoughtsTokens,
    cacheRead: cached,
    stream,
  });
  const usageMetadata = {
    promptTokenCount: promptTokens,
    candidatesTokenCount: outputTokens,
    totalTokenCount: promptTokens + outputTokens + thoughtsTokens,
    ...(thoughtsTokens ? { thoughtsTokenCount: thoughtsTokens } : {}),
    ...(cached ? { cachedContentTokenCount: cached } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
  };
  const includeThoughts = thinking.includeThoughts === true;
  const responseId = randomBytes(12).toString('base64url');
  const chunk = (parts: Json[], last: boolean) => ({
    candidates: [{ content: { parts, role: 'model' }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
    usageMetadata: last ? usageMetadata : { promptTokenCount: promptTokens, totalTokenCount: promptTokens },
    modelVersion: model.id,
    responseId,
  });
  const parts: Json[] = [...(thought && includeThoughts ? [{ text: thought, thought: true }] : []), ...(p.text ? [{ text: p.text }] : []), ...calls];
  if (!stream) return sendJson(res, 200, chunk(parts.length ? parts : [{ text: '' }], true));

  const writer = new SseWriter(res, ctx.faults, (message) => ({ data: JSON.stringify({ error: { code: 500, message, status: 'INTERNAL' } }) }));
  writer.onClientClose = () => emu.clientClosedStreams++;
  writer.start();
  const send = (c: Json) => writer.event(undefined, JSON.stringify(c));
  if (thought && includeThoughts) for (const piece of textPieces(thought)) if (!(await send(chunk([{ text: piece, thought: true }], false)))) return;
  const pieces = p.text ? textPieces(p.text) : [];
  for (const [i, piece] of pieces.entries()) {
    const lastPiece = i === pieces.length - 1 && calls.length === 0;
    if (!(await send(chunk([{ text: piece }], lastPiece)))) return;
  }
  if (calls.length > 0 && !(await send(chunk(calls, true)))) return;
  if (pieces.length === 0 && calls.length === 0 && !(await send(chunk([{ text: '' }], true)))) return;
  writer.end();
}
