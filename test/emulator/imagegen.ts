import { randomBytes } from 'node:crypto';
import { keyFromRequest } from './auth';
import { decodePng, png, pngSize } from './media';
import { openAiError, parseForm, sendJson, type Ctx } from './server';
import { asText } from './values';

type Json = Record<string, unknown>;

const V3_RATIOS = ['1x3', '3x1', '1x2', '2x1', '9x16', '16x9', '10x16', '16x10', '2x3', '3x2', '3x4', '4x3', '4x5', '5x4', '1x1'];
const LEGACY_MODELS = ['V_2', 'V_2_TURBO', 'V_2A', 'V_2A_TURBO', 'V_1', 'V_1_TURBO'];
const V3_PRICE: Record<string, Record<string, number>> = {
  generate: { TURBO: 0.03, DEFAULT: 0.06, QUALITY: 0.09 },
  remix: { TURBO: 0.03, DEFAULT: 0.06, QUALITY: 0.09 },
  edit: { TURBO: 0.06, DEFAULT: 0.06, QUALITY: 0.09 },
  'replace-background': { TURBO: 0.06, DEFAULT: 0.06, QUALITY: 0.09 },
};
const LEGACY_PRICE: Record<string, number> = { V_2: 0.08, V_2_TURBO: 0.05, V_2A: 0.04, V_2A_TURBO: 0.025, V_1: 0.06, V_1_TURBO: 0.02 };
const QUOTA_PER_DOLLAR = 500_000;
// About one megapixel, like the real service (1x1 is 1024x1024).
const BASE = 1024;

/** Resolution for a `WxH` or `ASPECT_W_H` ratio around BASE² pixels, in multiples of 16. */
export function resolutionFor(ratio: string): { width: number; height: number } {
  const m = /^(?:ASPECT_)?(\d+)[x_](\d+)$/.exec(ratio) ?? ['', '1', '1'];
  const r = Number(m[1]) / Number(m[2]);
  return { width: Math.round((BASE * Math.sqrt(r)) / 16) * 16, height: Math.round(BASE / Math.sqrt(r) / 16) * 16 };
}

class Fail extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function int(v: unknown, name: string, min: number, max: number, fallback: number): number {
  if (v === undefined || v === null || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Fail(400, `${name} must be an integer from ${min} to ${max}.`);
  return n;
}

function oneOf(v: unknown, name: string, allowed: string[], fallback: string): string {
  if (v === undefined || v === null || v === '') return fallback;
  if (!allowed.includes(asText(v))) throw new Fail(400, `${name} must be one of ${allowed.join(', ')}.`);
  return asText(v);
}

async function fileBytes(form: FormData, field: string, required: boolean): Promise<Buffer | undefined> {
  const f = form.get(field);
  if (!f || typeof f === 'string') {
    if (required) throw new Fail(400, `${field} is required.`);
    return undefined;
  }
  return Buffer.from(await f.arrayBuffer());
}

export class ImageStudio {
  private readonly images = new Map<string, Buffer>();

  constructor(private readonly baseUrl: () => string) {}

  image(id: string): Buffer | undefined {
    return this.images.get(id);
  }

  private render(prompt: string, width: number, height: number, n: number, seed: number | undefined, style: string): Json[] {
    return Array.from({ length: n }, (_, i) => {
      const s = (seed ?? Math.floor(Math.random() * 2147483647)) + i;
      const safe = !prompt.includes('#unsafe');
      let url: string | null = null;
      if (safe) {
        const id = randomBytes(8).toString('hex');
        this.images.set(id, png(width, height, s));
        url = `${this.baseUrl()}/emu-images/${id}.png`;
      }
      return { prompt, resolution: `${width}x${height}`, is_image_safe: safe, seed: s, url, style_type: style };
    });
  }

  private result(data: Json[]): Json {
    return { created: new Date().toISOString(), data };
  }

  async handle(ctx: Ctx, op: string, legacy: boolean): Promise<void> {
    const { emu, res } = ctx;
    const secret = keyFromRequest(ctx.req, 'api-key');
    const auth = emu.authorize(ctx, 'api-key', undefined, 'openai');
    if (!auth.ok || !secret) return;
    try {
      const { body, price } = legacy ? await this.legacy(ctx, op) : await this.v3(ctx, op);
      emu.store.spend(auth.key, price * QUOTA_PER_DOLLAR, { model: legacy ? `imagegen-${op}` : `imagegen-v3-${op}` });
      sendJson(res, 200, body);
    } catch (err) {
      if (err instanceof Fail) return openAiError(res, err.status, err.message, 'invalid_request_error', 'invalid_parameter');
      throw err;
    }
  }

  private async v3(ctx: Ctx, op: string): Promise<{ body: Json; price: number }> {
    const form = await parseForm(ctx);
    if (!form) throw new Fail(400, 'The body must be multipart/form-data.');
    const prompt = form.get('prompt');
    if (typeof prompt !== 'string' || !prompt) throw new Fail(400, 'prompt is required.');
    const speed = oneOf(form.get('rendering_speed'), 'rendering_speed', ['TURBO', 'DEFAULT', 'QUALITY'], 'DEFAULT');
    const n = int(form.get('num_images'), 'num_images', 1, 8, 1);
    const seed = form.get('seed') === null ? undefined : int(form.get('seed'), 'seed', 0, 2147483647, 0);
    oneOf(form.get('magic_prompt'), 'magic_prompt', ['AUTO', 'ON', 'OFF'], 'AUTO');
    const style = oneOf(form.get('style_type'), 'style_type', ['AUTO', 'GENERAL', 'REALISTIC', 'DESIGN'], 'AUTO');
    if (op === 'replace-background' && (form.get('aspect_ratio') !== null || form.get('negative_prompt') !== null)) {
      throw new Fail(400, 'replace-background does not accept aspect_ratio or negative_prompt.');
    }
    const ratio = oneOf(form.get('aspect_ratio'), 'aspect_ratio', V3_RATIOS, '1x1');
    if (op !== 'remix' && form.get('image_weight') !== null) throw new Fail(400, 'image_weight is for remix only.');
    int(form.get('image_weight'), 'image_weight', 1, 100, 50);
    let { width, height } = resolutionFor(ratio);
    if (op !== 'generate') {
      const image = await fileBytes(form, 'image', true);
      const size = pngSize(image!);
      if (size && op !== 'remix') ({ width, height } = size);
    }
    if (op === 'edit') await fileBytes(form, 'mask', true);
    return { body: this.result(this.render(prompt, width, height, n, seed, style)), price: V3_PRICE[op][speed] * n };
  }

  private async legacy(ctx: Ctx, op: string): Promise<{ body: Json; price: number }> {
    if (op === 'generate') {
      const r = ((ctx.body as Json | undefined)?.image_request ?? undefined) as Json | undefined;
      if (!r || typeof r.prompt !== 'string' || !r.prompt) throw new Fail(400, 'image_request.prompt is required.');
      const model = oneOf(r.model, 'model', LEGACY_MODELS, 'V_2');
      const n = int(r.num_images, 'num_images', 1, 8, 1);
      const { width, height } = resolutionFor(
        oneOf(
          r.aspect_ratio,
          'aspect_ratio',
          [
            'ASPECT_1_1',
            'ASPECT_3_1',
            'ASPECT_1_3',
            'ASPECT_3_2',
            'ASPECT_2_3',
            'ASPECT_4_3',
            'ASPECT_3_4',
            'ASPECT_16_9',
            'ASPECT_9_16',
            'ASPECT_16_10',
            'ASPECT_10_16',
          ],
          'ASPECT_1_1',
        ),
      );
      const seed = r.seed === undefined ? undefined : int(r.seed, 'seed', 0, 2147483647, 0);
      return { body: this.result(this.render(r.prompt, width, height, n, seed, asText(r.style_type, 'AUTO'))), price: LEGACY_PRICE[model] * n };
    }
    const form = await parseForm(ctx);
    if (!form) throw new Fail(400, 'The body must be multipart/form-data.');
    const image = (await fileBytes(form, 'image_file', true))!;
    const source = decodePng(image);
    const size = pngSize(image) ?? { width: 512, height: 512 };
    const requestText = form.get('image_request');
    let r: Json = {};
    if (typeof requestText === 'string') {
      try {
        r = JSON.parse(requestText) as Json;
      } catch {
        throw new Fail(400, 'image_request must be a JSON string.');
      }
    }
    switch (op) {
      case 'edit': {
        const prompt = form.get('prompt');
        if (typeof prompt !== 'string' || !prompt) throw new Fail(400, 'prompt is required.');
        const model = oneOf(form.get('model'), 'model', LEGACY_MODELS, 'V_2');
        if (model !== 'V_2' && model !== 'V_2_TURBO') throw new Fail(400, 'Edit is supported only by V_2 and V_2_TURBO.');
        const mask = decodePng((await fileBytes(form, 'mask', true))!);
        if (!mask) throw new Fail(400, 'mask must be a PNG.');
        const black = mask.luma.reduce((n, l) => n + (l < 64 ? 1 : 0), 0) / mask.luma.length;
        if (black < 0.1) throw new Fail(400, `The mask's black (edit) region covers ${(black * 100).toFixed(1)}% of the image; at least 10% is needed.`);
        const n = int(form.get('num_images'), 'num_images', 1, 8, 1);
        return { body: this.result(this.render(prompt, size.width, size.height, n, undefined, 'AUTO')), price: (model === 'V_2' ? 0.08 : 0.05) * n };
      }
      case 'remix': {
        if (typeof r.prompt !== 'string' || !r.prompt) throw new Fail(400, 'image_request.prompt is required.');
        int(r.image_weight, 'image_weight', 1, 100, 50);
        const model = oneOf(r.model, 'model', LEGACY_MODELS, 'V_2');
        const n = int(r.num_images, 'num_images', 1, 8, 1);
        return { body: this.result(this.render(r.prompt, size.width, size.height, n, undefined, 'AUTO')), price: LEGACY_PRICE[model] * n };
      }
      case 'upscale': {
        int(r.resemblance, 'resemblance', 1, 100, 50);
        int(r.detail, 'detail', 1, 100, 50);
        const prompt = typeof r.prompt === 'string' && r.prompt ? r.prompt : 'upscaled image';
        return { body: this.result(this.render(prompt, size.width * 2, size.height * 2, 1, undefined, 'AUTO')), price: 0.06 };
      }
      case 'describe': {
        const [red, green, blue] = source?.mean ?? [128, 128, 128];
        const tone = red > green && red > blue ? 'warm red' : green > blue ? 'green' : 'cool blue';
        return { body: { descriptions: [{ text: `A ${size.width}x${size.height} image in ${tone} tones, a smooth gradient.` }] }, price: 0 };
      }
      default:
        throw new Fail(404, `No image operation ${op}.`);
    }
  }
}

export function serveImage(ctx: Ctx, studio: ImageStudio, id: string): void {
  const img = studio.image(id);
  if (!img) return openAiError(ctx.res, 404, 'Image expired or not found.', 'invalid_request_error', 'not_found');
  ctx.emu.sendDownload(ctx.res, img, 'image/png', `${id}.png`);
}
