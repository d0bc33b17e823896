import * as z from '../core/z';
import { BinaryResponse } from '../core/binary';
import { AbortError, GatewayError } from '../core/errors';
import { checkImageUrl } from '../../common/imageRules';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

/**
 * Duration and size options per model family (spec table). Families are matched by model id; the
 * spec omits vendor ids, so only families whose ids gateways publish are listed, and a model that
 * matches none is passed through unchecked.
 */
export interface VideoFamily {
  name: string;
  match: RegExp;
  seconds: readonly string[];
  sizes: readonly string[];
  /** Whether tasks of this family pass through `queued` (spec: only one family does). */
  queues: boolean;
}

export const VIDEO_FAMILIES: VideoFamily[] = [
  { name: 'A', match: /^sora-2(-pro)?(-\d{4}-\d{2}-\d{2})?$/, seconds: ['4', '8', '12'], sizes: ['720x1280', '1280x720', '1024x1792', '1792x1024'], queues: true },
  { name: 'B, newer', match: /^veo-3\.1(-fast)?-generate/, seconds: ['4', '6', '8'], sizes: ['720p', '1080p', '4k'], queues: false },
  { name: 'B, older', match: /^veo-3\.0(-fast)?-generate/, seconds: ['4', '6', '8'], sizes: ['720p', '1080p'], queues: false },
];

export function videoFamilyOf(model: string): VideoFamily | undefined {
  return VIDEO_FAMILIES.find((f) => f.match.test(model));
}

export const VideoCreateSchema = z
  .looseObject({
    model: z.string({ error: 'model is required' }).min(1, 'model must not be empty'),
    prompt: z.string({ error: 'prompt is required' }).min(1, 'prompt must not be empty'),
    seconds: z.union([z.string(), z.number()]).transform((v) => String(v)).optional(),
    size: z.string().optional(),
    input_reference: z
      .union([z.string(), z.looseObject({})])
      .superRefine((v, ctx) => {
        if (typeof v !== 'string') return;
        // A bare base64 string is allowed (spec); URLs and data URIs follow the image rules.
        if (/^(https?:|data:)/.test(v)) {
          const problem = checkImageUrl(v);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }
      })
      .optional(),
  })
  .superRefine((r, ctx) => {
    const family = videoFamilyOf(r.model);
    if (!family) return;
    if (r.seconds !== undefined && !family.seconds.includes(r.seconds)) {
      ctx.addIssue({ code: 'custom', path: ['seconds'], message: `${r.model} takes ${family.seconds.join(', ')} seconds` });
    }
    if (r.size !== undefined && !family.sizes.includes(r.size)) {
      ctx.addIssue({ code: 'custom', path: ['size'], message: `${r.model} takes sizes ${family.sizes.join(', ')}` });
    }
  });

export type VideoCreateRequest = z.input<typeof VideoCreateSchema>;

const VideoSchema = z.looseObject({
  id: z.string(),
  status: z.enum(['queued', 'in_progress', 'completed', 'failed']).or(z.string()),
  progress: z.number().optional(),
  error: z.unknown().optional(),
});
export type VideoTask = z.output<typeof VideoSchema>;

export interface WaitOptions extends RequestOptions {
  /** Time between status checks (spec: every 15 s). */
  intervalMs?: number;
  onProgress?: (task: VideoTask, elapsedMs: number) => void;
}

export class VideoFailedError extends GatewayError {
  override readonly name: string = 'VideoFailedError';
  constructor(readonly task: VideoTask) {
    const e = task.error as { message?: string } | string | undefined;
    const detail = typeof e === 'string' ? e : (e?.message ?? 'no reason given');
    super(`Video generation failed: ${detail}`, { type: 'video_failed' });
  }
}

export class Videos {
  constructor(
    private readonly transport: Transport,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  async create(body: VideoCreateRequest, opts: RequestOptions = {}): Promise<VideoTask> {
    const req = validateRequest(VideoCreateSchema, body);
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/videos', auth: 'bearer', json: req, signal: opts.signal });
    return parseResponse(VideoSchema, data, 'a video creation');
  }

  async retrieve(id: string, opts: RequestOptions = {}): Promise<VideoTask> {
    const { data } = await this.transport.json({ method: 'GET', path: `/v1/videos/${encodeURIComponent(id)}`, auth: 'bearer', signal: opts.signal });
    return parseResponse(VideoSchema, data, 'a video status');
  }

  /** The MP4 of a completed task, to buffer, pipe, or write to a file. */
  async content(id: string, opts: RequestOptions = {}): Promise<BinaryResponse> {
    const res = await this.transport.send({
      method: 'GET',
      path: `/v1/videos/${encodeURIComponent(id)}/content`,
      auth: 'bearer',
      accept: 'application/binary',
      signal: opts.signal,
      // Real gateways answer with a redirect to their storage: followed, without the key.
      followRedirects: true,
    });
    return new BinaryResponse(res, 'Video download');
  }

  async delete(id: string, opts: RequestOptions = {}): Promise<void> {
    await this.transport.json({ method: 'DELETE', path: `/v1/videos/${encodeURIComponent(id)}`, auth: 'bearer', signal: opts.signal });
  }

  /** Polls until the task completes (returned) or fails (VideoFailedError). */
  async waitFor(id: string, opts: WaitOptions = {}): Promise<VideoTask> {
    const interval = opts.intervalMs ?? 15_000;
    const started = this.now();
    for (;;) {
      if (opts.signal?.aborted) throw new AbortError('Waiting for the video was cancelled.');
      const task = await this.retrieve(id, opts);
      opts.onProgress?.(task, this.now() - started);
      if (task.status === 'completed') return task;
      if (task.status === 'failed') throw new VideoFailedError(task);
      await this.sleep(interval, opts.signal);
    }
  }
}
