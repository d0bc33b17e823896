import { randomBytes } from 'node:crypto';
import { estimateTokens } from './assistant';
import { openAiError, sendJson, type Ctx } from './server';
import { asText } from './values';

type Json = Record<string, unknown>;

function hash(s: string, seed = 2166136261): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * Hashed word and character-trigram features, L2-normalised: texts that share words are close,
 * so retrieval over the emulator behaves like retrieval over a real embedding model.
 */
export function featureVector(text: string, dim: number): Float32Array {
  const v = new Float32Array(dim);
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  for (const w of words) {
    const h = hash(w);
    v[h % dim] += h & 0x80000000 ? -1 : 1;
    const padded = ` ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) {
      const t = hash(padded.slice(i, i + 3), 40503);
      v[t % dim] += t & 0x80000000 ? -0.25 : 0.25;
    }
  }
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dim; i++) v[i] /= norm;
  return v;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function handleEmbeddings(ctx: Ctx): void {
  const { emu, res } = ctx;
  const begun = emu.beginJson(ctx, 'embedding');
  if (!begun) return;
  const { body, model, auth } = begun;
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.some((t) => typeof t !== 'string' || t.length === 0)) {
    return openAiError(res, 400, 'input must be a non-empty string or an array of non-empty strings.', 'invalid_request_error', 'invalid_parameter');
  }
  if (inputs.length > 2048) return openAiError(res, 400, 'input may hold at most 2048 texts.', 'invalid_request_error', 'invalid_parameter');
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64')
    return openAiError(res, 400, "encoding_format must be 'float' or 'base64'.", 'invalid_request_error', 'invalid_parameter');
  const full = model.dimensions ?? 256;
  const dim = typeof body.dimensions === 'number' && body.dimensions > 0 && body.dimensions <= full ? Math.floor(body.dimensions) : full;
  let tokens = 0;
  const data = (inputs as string[]).map((text, index) => {
    tokens += estimateTokens(text);
    const v = featureVector(text, dim);
    const embedding = format === 'base64' ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') : Array.from(v);
    return { object: 'embedding', index, embedding };
  });
  emu.store.spend(auth.key, tokens * model.ratio, { model: model.id, prompt: tokens });
  emu.stats.embeddingRequests++;
  emu.stats.embeddedInputs += inputs.length;
  // In input order, as one-api and new-api relay them (clients still order by `index`).
  sendJson(res, 200, { object: 'list', data, model: model.id, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

export function handleRerank(ctx: Ctx): void {
  const { emu, res } = ctx;
  const begun = emu.beginJson(ctx, 'rerank');
  if (!begun) return;
  const { body, model, auth } = begun;
  if (typeof body.query !== 'string' || !body.query) return openAiError(res, 400, 'query is required.', 'invalid_request_error', 'invalid_parameter');
  const docs = Array.isArray(body.documents) ? (body.documents as unknown[]).map((d) => (typeof d === 'string' ? d : asText((d as Json)?.text))) : undefined;
  if (!docs || docs.length === 0) return openAiError(res, 400, 'documents must be a non-empty array.', 'invalid_request_error', 'invalid_parameter');
  const topN = body.top_n === undefined ? docs.length : Number(body.top_n);
  if (!Number.isInteger(topN) || topN < 1) return openAiError(res, 400, 'top_n must be a positive integer.', 'invalid_request_error', 'invalid_parameter');
  const q = featureVector(body.query, 256);
  const qWords = new Set(body.query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []);
  const scored = docs.map((text, index) => {
    const words = new Set(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []);
    const overlap = [...qWords].filter((w) => words.has(w)).length / Math.max(1, qWords.size);
    const raw = 0.6 * cosine(q, featureVector(text, 256)) + 0.4 * overlap;
    const relevance_score = Math.round((1 / (1 + Math.exp(-8 * (raw - 0.3)))) * 1e6) / 1e6;
    return { index, relevance_score, ...(body.return_documents === true ? { document: { text } } : {}) };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const tokens = estimateTokens(body.query) * docs.length + docs.reduce((n, d) => n + estimateTokens(d), 0);
  emu.store.spend(auth.key, tokens * model.ratio, { model: model.id, prompt: tokens });
  sendJson(res, 200, { results: scored.slice(0, topN), usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens } });
}

const CATEGORY_WORDS: Record<string, string[]> = {
  harassment: ['idiot', 'loser', 'moron'],
  'harassment/threatening': ['i will hurt you', 'you will regret'],
  hate: ['hate all', 'inferior race'],
  'hate/threatening': ['exterminate them'],
  illicit: ['buy drugs', 'steal a car', 'hack into'],
  'illicit/violent': ['build a bomb', 'make explosives'],
  'self-harm': ['self-harm', 'hurt myself'],
  'self-harm/instructions': ['how to self-harm'],
  'self-harm/intent': ['i want to hurt myself'],
  sexual: ['explicit sex', 'nsfw'],
  'sexual/minors': ['sexual minor'],
  violence: ['kill', 'attack', 'blood'],
  'violence/graphic': ['gore', 'mutilated'],
};
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/instructions', 'self-harm/intent', 'sexual', 'violence', 'violence/graphic']);
const MULTIMODAL_ONLY = new Set(['illicit', 'illicit/violent']);

function imageText(url: string): string {
  if (!url.startsWith('data:')) return url;
  const comma = url.indexOf(',');
  // Words written into an image file's text (e.g. a PNG tEXt chunk) stand in for what it shows.
  return Buffer.from(url.slice(comma + 1), 'base64').toString('latin1');
}

export function handleModerations(ctx: Ctx): void {
  const { emu, res } = ctx;
  const begun = emu.beginJson(ctx, 'moderation', 'omni-moderation-latest');
  if (!begun) return;
  const { body, model } = begun;
  const multimodal = model.id === 'omni-moderation-latest';
  const inputs: { texts: string[]; images: string[] }[] = [];
  if (typeof body.input === 'string') inputs.push({ texts: [body.input], images: [] });
  else if (Array.isArray(body.input) && body.input.every((x) => typeof x === 'string')) for (const t of body.input) inputs.push({ texts: [t], images: [] });
  else if (Array.isArray(body.input)) {
    const one = { texts: [] as string[], images: [] as string[] };
    for (const p of body.input as Json[]) {
      if (p?.type === 'text') one.texts.push(asText(p.text));
      else if (p?.type === 'image_url') {
        if (!multimodal)
          return openAiError(
            res,
            400,
            `Model ${model.id} does not accept image input; use omni-moderation-latest.`,
            'invalid_request_error',
            'invalid_parameter',
          );
        one.images.push(imageText(asText((p.image_url as Json | undefined)?.url)));
      } else return openAiError(res, 400, 'Each input part must be text or image_url.', 'invalid_request_error', 'invalid_parameter');
    }
    inputs.push(one);
  } else return openAiError(res, 400, 'input is required.', 'invalid_request_error', 'invalid_parameter');

  const results = inputs.map(({ texts, images }) => {
    const categories: Record<string, boolean | null> = {};
    const scores: Record<string, number> = {};
    const applied: Record<string, string[]> = {};
    const text = texts.join('\n').toLowerCase();
    const imageBlob = images.join('\n').toLowerCase();
    for (const [cat, words] of Object.entries(CATEGORY_WORDS)) {
      if (!multimodal && MULTIMODAL_ONLY.has(cat)) {
        categories[cat] = null;
        scores[cat] = 0;
        continue;
      }
      const inText = words.some((w) => text.includes(w));
      const inImage = IMAGE_CATEGORIES.has(cat) && words.some((w) => imageBlob.includes(w));
      categories[cat] = inText || inImage;
      scores[cat] = inText || inImage ? 0.91 : 0.0012 + (hash(cat + text) % 100) / 100_000;
      // As the real API: for every category, the input types it was scored on (text always when
      // text was sent; image for the categories that read images), flagged or not.
      applied[cat] = [...(texts.length > 0 ? ['text'] : []), ...(images.length > 0 && IMAGE_CATEGORIES.has(cat) ? ['image'] : [])];
    }
    const r: Json = { flagged: Object.values(categories).some((v) => v === true), categories, category_scores: scores };
    if (multimodal) r.category_applied_input_types = applied;
    return r;
  });
  sendJson(res, 200, { id: `modr-${randomBytes(8).toString('hex')}`, model: model.id, results });
}
