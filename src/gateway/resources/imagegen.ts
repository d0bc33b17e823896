import { Multipart } from '../core/multipart';
import * as z from '../core/z';
import { BinaryResponse } from '../core/binary';
import { ValidationError } from '../core/errors';
import { contentTypeFor, prepareUpload, type Upload } from '../core/files';
import { checkImageBytes } from '../../common/imageRules';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

export const V3_ASPECT_RATIOS = ['1x3', '3x1', '1x2', '2x1', '9x16', '16x9', '10x16', '16x10', '2x3', '3x2', '3x4', '4x3', '4x5', '5x4', '1x1'] as const;
export const LEGACY_ASPECT_RATIOS = [
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
] as const;
import { LEGACY_EDIT_MODELS, LEGACY_MODELS, RENDERING_SPEEDS } from '../../common/imagePrices';

export {
  imagePrice,
  LEGACY_EDIT_MODELS,
  LEGACY_MODELS,
  RENDERING_SPEEDS,
  type LegacyModel,
  type PriceQuery,
  type RenderingSpeed,
} from '../../common/imagePrices';

const IMAGE_EXTENSIONS = ['png', 'jpg', 'jpeg', 'webp'] as const;
const MAX_IMAGE_UPLOAD = 20 * 1024 * 1024;

// ---------- schemas ----------

const seed = z.number().int('must be a whole number').min(0, 'must be between 0 and 2147483647').max(2147483647, 'must be between 0 and 2147483647');
const weight = (name: string) =>
  z.number().int('must be a whole number').min(1, `${name} must be between 1 and 100`).max(100, `${name} must be between 1 and 100`);
const numImages = z.number().int('must be a whole number').min(1, 'must be between 1 and 8').max(8, 'must be between 1 and 8');
const prompt = z.string({ error: 'prompt is required' }).min(1, 'prompt must not be empty');
const magic = z.enum(['AUTO', 'ON', 'OFF'], { error: 'must be AUTO, ON or OFF' });

const V3Common = {
  prompt,
  rendering_speed: z.enum(RENDERING_SPEEDS, { error: 'must be TURBO, DEFAULT or QUALITY' }).optional(),
  num_images: numImages.optional(),
  aspect_ratio: z.enum(V3_ASPECT_RATIOS, { error: `must be one of ${V3_ASPECT_RATIOS.join(', ')}` }).optional(),
  magic_prompt: magic.optional(),
  style_type: z.enum(['AUTO', 'GENERAL', 'REALISTIC', 'DESIGN'], { error: 'must be AUTO, GENERAL, REALISTIC or DESIGN' }).optional(),
  negative_prompt: z.string().optional(),
  seed: seed.optional(),
  style_reference_images: z.array(z.custom<Upload>()).optional(),
};

const V3Generate = z.looseObject(V3Common);
const V3Remix = z.looseObject({
  ...V3Common,
  image: z.custom<Upload>((v) => v !== undefined, 'image is required'),
  image_weight: weight('image_weight').optional(),
});
const V3Edit = z.looseObject({
  ...V3Common,
  image: z.custom<Upload>((v) => v !== undefined, 'image is required'),
  mask: z.custom<Upload>((v) => v !== undefined, 'mask is required (black = region to edit, white = unchanged)'),
});
const V3ReplaceBackground = z.looseObject({ ...V3Common, image: z.custom<Upload>((v) => v !== undefined, 'image is required') }).superRefine((r, ctx) => {
  for (const f of ['aspect_ratio', 'negative_prompt'] as const) {
    if (r[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: 'replace-background does not accept this field' });
  }
});

export type V3GenerateRequest = z.input<typeof V3Generate>;
export type V3RemixRequest = z.input<typeof V3Remix>;
export type V3EditRequest = z.input<typeof V3Edit>;
export type V3ReplaceBackgroundRequest = z.input<typeof V3ReplaceBackground>;

const LegacyImageRequest = z.looseObject({
  prompt: z.string().optional(),
  negative_prompt: z.string().optional(),
  aspect_ratio: z.enum(LEGACY_ASPECT_RATIOS, { error: `must be one of ${LEGACY_ASPECT_RATIOS.join(', ')}` }).optional(),
  model: z.enum(LEGACY_MODELS, { error: `must be one of ${LEGACY_MODELS.join(', ')}` }).optional(),
  num_images: numImages.optional(),
  magic_prompt_option: magic.optional(),
  style_type: z
    .enum(['AUTO', 'GENERAL', 'REALISTIC', 'DESIGN', 'RENDER_3D', 'ANIME'], { error: 'must be AUTO, GENERAL, REALISTIC, DESIGN, RENDER_3D or ANIME' })
    .optional(),
  seed: seed.optional(),
  image_weight: weight('image_weight').optional(),
  resemblance: weight('resemblance').optional(),
  detail: weight('detail').optional(),
});
export type LegacyImageRequest = z.input<typeof LegacyImageRequest>;

const LegacyGenerate = z.looseObject({ image_request: LegacyImageRequest.extend({ prompt }) });
const LegacyEdit = z.looseObject({
  prompt,
  model: z.enum(LEGACY_EDIT_MODELS, { error: 'edit is supported only by V_2 and V_2_TURBO' }),
  magic_prompt_option: magic.optional(),
  num_images: numImages.optional(),
  style_type: LegacyImageRequest.shape.style_type,
});
export type LegacyEditRequest = z.input<typeof LegacyEdit> & { image_file: Upload; mask: Upload };

const ImageResultSchema = z.looseObject({
  created: z.union([z.string(), z.number()]).optional(),
  data: z.array(
    z.looseObject({
      prompt: z.string().nullable().optional(),
      resolution: z.string().nullable().optional(),
      is_image_safe: z.boolean().optional(),
      seed: z.number().nullable().optional(),
      url: z.string().nullable().optional(),
      style_type: z.string().nullable().optional(),
    }),
  ),
});
export type ImageResult = z.output<typeof ImageResultSchema>;
const DescribeSchema = z.looseObject({ descriptions: z.array(z.looseObject({ text: z.string() })) });

// ---------- resources ----------

async function addImage(form: Multipart, field: string, upload: Upload): Promise<void> {
  const u = await prepareUpload(field, upload, { extensions: IMAGE_EXTENSIONS, maxBytes: MAX_IMAGE_UPLOAD, limitText: '20 MB' });
  // The bytes decide, as in the chat: a GIF named .png is refused before anything is sent.
  const head = new Uint8Array(await u.blob.slice(0, 32).arrayBuffer());
  const problem = checkImageBytes(u.blob.type || contentTypeFor(u.filename), head);
  if (problem) throw new ValidationError([{ path: field, message: `"${u.filename}": ${problem}` }]);
  form.append(field, u.blob, u.filename);
}

function addFields(form: Multipart, fields: Record<string, unknown>, skip: string[]): void {
  for (const [k, v] of Object.entries(fields)) {
    if (skip.includes(k) || v === undefined) continue;
    form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
}

abstract class ImageFamily {
  constructor(protected readonly transport: Transport) {}

  protected async post(path: string, body: { form?: Multipart; json?: unknown }, what: string, opts: RequestOptions): Promise<unknown> {
    const { data } = await this.transport.json({ method: 'POST', path, auth: 'imagegen', ...body, signal: opts.signal });
    return data;
  }

  protected async result(path: string, body: { form?: Multipart; json?: unknown }, what: string, opts: RequestOptions): Promise<ImageResult> {
    return parseResponse(ImageResultSchema, await this.post(path, body, what, opts), what);
  }
}

export class ImagegenV3 extends ImageFamily {
  private async multipart(op: string, fields: Record<string, unknown>, files: Record<string, Upload | undefined>, opts: RequestOptions): Promise<ImageResult> {
    const form = new Multipart();
    addFields(form, fields, ['image', 'mask', 'style_reference_images']);
    for (const [field, upload] of Object.entries(files)) if (upload !== undefined) await addImage(form, field, upload);
    for (const ref of (fields.style_reference_images as Upload[] | undefined) ?? []) await addImage(form, 'style_reference_images', ref);
    return this.result(`/imagegen/v1/imagegen-v3/${op}`, { form }, `an image ${op}`, opts);
  }

  async generate(body: V3GenerateRequest, opts: RequestOptions = {}): Promise<ImageResult> {
    const req = validateRequest(V3Generate, body);
    return this.multipart('generate', req, {}, opts);
  }

  async remix(body: V3RemixRequest, opts: RequestOptions = {}): Promise<ImageResult> {
    const req = validateRequest(V3Remix, body);
    return this.multipart('remix', req, { image: req.image }, opts);
  }

  async edit(body: V3EditRequest, opts: RequestOptions = {}): Promise<ImageResult> {
    const req = validateRequest(V3Edit, body);
    return this.multipart('edit', req, { image: req.image, mask: req.mask }, opts);
  }

  async replaceBackground(body: V3ReplaceBackgroundRequest, opts: RequestOptions = {}): Promise<ImageResult> {
    const req = validateRequest(V3ReplaceBackground, body);
    return this.multipart('replace-background', req, { image: req.image }, opts);
  }
}

export class ImagegenLegacy extends ImageFamily {
  async generate(body: { image_request: LegacyImageRequest & { prompt: string } }, opts: RequestOptions = {}): Promise<ImageResult> {
    const req = validateRequest(LegacyGenerate, body);
    return this.result('/imagegen/generate', { json: req }, 'an image generation', opts);
  }

  async edit(body: LegacyEditRequest, opts: RequestOptions = {}): Promise<ImageResult> {
    const { image_file, mask, ...rest } = body;
    const req = validateRequest(LegacyEdit, rest);
    const form = new Multipart();
    await addImage(form, 'image_file', image_file);
    await addImage(form, 'mask', mask);
    addFields(form, req, []);
    return this.result('/imagegen/edit', { form }, 'an image edit', opts);
  }

  private async withImageRequest(path: string, image_file: Upload, imageRequest: unknown, what: string, opts: RequestOptions): Promise<unknown> {
    const form = new Multipart();
    await addImage(form, 'image_file', image_file);
    if (imageRequest !== undefined) form.append('image_request', JSON.stringify(imageRequest));
    return this.post(path, { form }, what, opts);
  }

  async remix(body: { image_file: Upload; image_request: LegacyImageRequest & { prompt: string } }, opts: RequestOptions = {}): Promise<ImageResult> {
    const req = validateRequest(LegacyGenerate, { image_request: body.image_request });
    return parseResponse(
      ImageResultSchema,
      await this.withImageRequest('/imagegen/remix', body.image_file, req.image_request, 'an image remix', opts),
      'an image remix',
    );
  }

  /** Doubles the resolution. `resemblance` and `detail` (1 to 100, default 50) go inside `image_request`. */
  async upscale(body: { image_file: Upload; image_request?: LegacyImageRequest }, opts: RequestOptions = {}): Promise<ImageResult> {
    const req = validateRequest(LegacyImageRequest, body.image_request ?? {});
    return parseResponse(ImageResultSchema, await this.withImageRequest('/imagegen/upscale', body.image_file, req, 'an upscale', opts), 'an upscale');
  }

  async describe(body: { image_file: Upload }, opts: RequestOptions = {}): Promise<string[]> {
    if (!body || body.image_file === undefined) throw new ValidationError([{ path: 'image_file', message: 'image_file is required' }]);
    const data = await this.withImageRequest('/imagegen/describe', body.image_file, undefined, 'a describe', opts);
    return parseResponse(DescribeSchema, data, 'a describe').descriptions.map((d) => d.text);
  }
}

export class Imagegen {
  readonly v3: ImagegenV3;
  readonly legacy: ImagegenLegacy;
  constructor(private readonly transport: Transport) {
    this.v3 = new ImagegenV3(transport);
    this.legacy = new ImagegenLegacy(transport);
  }

  /**
   * Downloads a result image. The gateway's credential is sent only when the URL is on the
   * gateway's own origin, never to another host.
   */
  async download(url: string, opts: RequestOptions = {}): Promise<BinaryResponse> {
    const res = await this.transport.sendUrl(url, { accept: 'image/*', signal: opts.signal });
    return new BinaryResponse(res, 'Image download');
  }
}
