/** Models the emulator serves. Ids are case-sensitive, as on a real gateway. */
export type ModelKind = 'chat' | 'embedding' | 'rerank' | 'moderation' | 'speech' | 'transcription' | 'video' | 'task';

export interface EmulatedModel {
  id: string;
  kind: ModelKind;
  ownedBy: string;
  /** Quota units per token (input; output costs 4 times this), or per unit of work. */
  ratio: number;
  /** Chat: smallest prefix, in tokens, that the prompt cache will store. */
  cacheMinTokens: number;
  /** Embeddings: vector dimension. */
  dimensions?: number;
  /** Chat: the most prompt tokens (messages, system and tools) a request may carry. */
  contextWindow?: number;
  /** new-api's `supported_endpoint_types` for the model (chat completions only when absent). */
  endpoints?: string[];
}

const chat = (id: string, ratio: number, cacheMinTokens = 1024, contextWindow = 128_000): EmulatedModel => ({
  id,
  kind: 'chat',
  ownedBy: 'emulator',
  ratio,
  cacheMinTokens,
  contextWindow,
});
const other = (id: string, kind: ModelKind, ratio: number, extra: Partial<EmulatedModel> = {}): EmulatedModel => ({
  id,
  kind,
  ownedBy: 'emulator',
  ratio,
  cacheMinTokens: 0,
  ...extra,
});

export const MODELS: EmulatedModel[] = [
  chat('gpt-4o-mini', 0.15),
  chat('gpt-4o', 2.5),
  chat('claude-sonnet-emu', 3, 1024, 200_000),
  // The smallest model series needs a 2,048-token prefix before anything is cached.
  chat('claude-haiku-emu', 1, 2048, 200_000),
  // Small context windows, one per wire format: long agent sessions must be budgeted to fit.
  chat('small-context-emu', 0.2, 1024, 32_000),
  chat('claude-small-context-emu', 1, 1024, 32_000),
  // Upstream quirks users meet through gateways: a thinking model that streams reasoning_content
  // and wants it back on the assistant message of a tool round; an upstream that refuses
  // stream_options and never reports usage in a stream.
  chat('deepseek-reasoner-emu', 0.55),
  chat('legacy-upstream-emu', 0.5),
  // Reasoning in the other shapes gateways pass through: `delta.reasoning` (vLLM, OpenRouter) and
  // `<think>…</think>` at the start of the content (R1 distills served raw).
  chat('vllm-reasoner-emu', 0.3),
  // Code models for inline completions on /v1/completions: two with fill-in-the-middle (suffix),
  // an instruct model without it (it refuses suffix).
  chat('codestral-emu', 0.3, 1024, 32_000),
  chat('qwen-coder-emu', 0.1, 1024, 32_000),
  chat('gpt-3.5-turbo-instruct-emu', 1.5, 1024, 4_096),
  chat('r1-distill-emu', 0.3),
  // A reasoning model served only through /v1/responses (as OpenAI's codex models are), with
  // encrypted reasoning items that a stateless tool loop must carry back.
  { ...chat('gpt-5-codex-emu', 1.25, 1024, 400_000), endpoints: ['openai-response'] },
  // A thinking Gemini model in its own format (and chat completions), whose function calls carry
  // a thought signature that must come back with them, as Gemini 3 requires.
  { ...chat('gemini-3-pro-emu', 1.25, 1024, 1_000_000), endpoints: ['gemini', 'openai'] },
  other('text-embedding-3-small', 'embedding', 0.02, { dimensions: 1536 }),
  other('embed-emu-256', 'embedding', 0.01, { dimensions: 256 }),
  other('rerank-emu', 'rerank', 0.02),
  other('omni-moderation-latest', 'moderation', 0),
  other('text-moderation-latest', 'moderation', 0),
  other('tts-1', 'speech', 15),
  other('tts-1-hd', 'speech', 30),
  other('gpt-4o-mini-tts', 'speech', 12),
  other('gemini-2.5-flash-preview-tts', 'speech', 10),
  other('whisper-1', 'transcription', 100),
  other('gpt-4o-transcribe', 'transcription', 100),
  other('sora-2', 'video', 50_000),
  other('sora-2-pro', 'video', 150_000),
  other('veo-3.1-fast-generate-preview', 'video', 75_000),
  // new-api's task models, billed per call (Suno music and lyrics, Midjourney actions).
  other('suno_music', 'task', 0),
  other('suno_lyrics', 'task', 0),
  other('mj_imagine', 'task', 0),
  other('mj_variation', 'task', 0),
  other('mj_reroll', 'task', 0),
  other('mj_upscale', 'task', 0),
];

export function findModel(id: unknown): EmulatedModel | undefined {
  return typeof id === 'string' ? MODELS.find((m) => m.id === id) : undefined;
}
