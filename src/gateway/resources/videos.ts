import * as z from '../core/z';
import { BinaryResponse } from '../core/binary';
import { BadRequestError, GatewayError, NotFoundError } from '../core/errors';
import { pollTask } from '../core/poll';
import { checkImageUrl } from '../../common/imageRules';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';
import { percent } from './suno';

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
  {
    name: 'A',
    match: /^sora-2(-pro)?(-\d{4}-\d{2}-\d{2})?$/,
    seconds: ['4', '8', '12'],
    sizes: ['720x1280', '1280x720', '1024x1792', '1792x1024'],
    queues: true,
  },
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
    seconds: z
      .union([z.string(), z.number()])
      .transform((v) => String(v))
      .optional(),
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

/** new-api's task statuses (`model/task.go`) as the video statuses of `/v1/videos` (its `ToVideoStatus`). */
function videoStatusOf(taskStatus: string): string {
  switch (taskStatus.toUpperCase()) {
    case 'SUCCESS':
      return 'completed';
    case 'FAILURE':
      return 'failed';
    case 'IN_PROGRESS':
      return 'in_progress';
    default:
      return 'queued';
  }
}

/** A 404 for the route itself (new-api's and one-api's `Invalid URL (…)`), not for a task it does not know. */
function routeMissing(err: unknown): boolean {
  return err instanceof NotFoundError && /^Invalid URL \(/.test(err.serverMessage);
}

const UnifiedSubmit = z.looseObject({ task_id: z.string().optional(), id: z.string().optional(), status: z.string().optional() });
const UnifiedTask = z.looseObject({
  code: z.union([z.string(), z.number()]).optional(),
  message: z.string().optional(),
  data: z
    .looseObject({
      task_id: z.string(),
      status: z.string(),
      progress: z.string().optional(),
      fail_reason: z.string().optional(),
      result_url: z.string().optional(),
    })
    .nullish(),
});

export class Videos {
  /**
   * This gateway has no `/v1/videos` (new-api before it had one): its older
   * `/v1/video/generations` relays the same tasks. Learnt from a 404 for the route.
   */
  private unified = false;
  /** Where a unified task's video is, from its status (no content route there). */
  private readonly resultUrls = new Map<string, string>();

  constructor(
    private readonly transport: Transport,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  async create(body: VideoCreateRequest, opts: RequestOptions = {}): Promise<VideoTask> {
    const req = validateRequest(VideoCreateSchema, body);
    if (!this.unified) {
      try {
        const { data } = await this.transport.json({ method: 'POST', path: '/v1/videos', auth: 'bearer', json: req, signal: opts.signal });
        return parseResponse(VideoSchema, data, 'a video creation');
      } catch (err) {
        if (!routeMissing(err)) throw err;
        this.unified = true;
      }
    }
    // new-api's `VideoRequest`: duration in seconds, width and height, the reference as `image`.
    const [width, height] =
      /^(\d+)x(\d+)$/
        .exec(req.size ?? '')
        ?.slice(1)
        .map(Number) ?? [];
    const json = {
      model: req.model,
      prompt: req.prompt,
      ...(req.seconds !== undefined ? { duration: Number(req.seconds) } : {}),
      ...(width ? { width, height } : req.size ? { metadata: { size: req.size } } : {}),
      ...(typeof req.input_reference === 'string' ? { image: req.input_reference } : {}),
    };
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/video/generations', auth: 'bearer', json, signal: opts.signal });
    const r = parseResponse(UnifiedSubmit, data, 'a video creation');
    const id = r.task_id ?? r.id;
    if (!id) throw new GatewayError('The gateway accepted the video but sent no task id.', { type: 'invalid_response' });
    return { id, status: videoStatusOf(r.status ?? 'QUEUED') };
  }

  async retrieve(id: string, opts: RequestOptions = {}): Promise<VideoTask> {
    if (!this.unified) {
      try {
        const { data } = await this.transport.json({ method: 'GET', path: `/v1/videos/${encodeURIComponent(id)}`, auth: 'bearer', signal: opts.signal });
        return parseResponse(VideoSchema, data, 'a video status');
      } catch (err) {
        // A job started before a reload on a gateway without /v1/videos.
        if (!routeMissing(err)) throw err;
        this.unified = true;
      }
    }
    let data: unknown;
    try {
      ({ data } = await this.transport.json({ method: 'GET', path: `/v1/video/generations/${encodeURIComponent(id)}`, auth: 'bearer', signal: opts.signal }));
    } catch (err) {
      // new-api answers an unknown task with 400 `task_not_exist`: the same as OpenAI's 404 to callers.
      if (err instanceof BadRequestError && err.code === 'task_not_exist')
        throw new NotFoundError(404, err.serverMessage, `The gateway does not know the video task ${id}.`, { code: err.code });
      throw err;
    }
    const r = parseResponse(UnifiedTask, data, 'a video status');
    if (!r.data) throw new NotFoundError(404, r.message || 'task_not_exist', `The gateway does not know the video task ${id}.`);
    const t = r.data;
    const done = t.status.toUpperCase() === 'SUCCESS';
    // Older releases kept a finished task's URL in fail_reason (new-api's GetResultURL).
    const url = t.result_url || (done && /^https?:\/\//.test(t.fail_reason ?? '') ? t.fail_reason : undefined);
    if (url) this.resultUrls.set(id, url);
    const status = videoStatusOf(t.status);
    return { id: t.task_id, status, progress: percent(t.progress), ...(status === 'failed' ? { error: { message: t.fail_reason || 'no reason given' } } : {}) };
  }

  /** The MP4 of a completed task, to buffer, pipe, or write to a file. */
  async content(id: string, opts: RequestOptions = {}): Promise<BinaryResponse> {
    if (this.unified) {
      const url = this.resultUrls.get(id) ?? (await this.retrieve(id, opts), this.resultUrls.get(id));
      if (!url) throw new GatewayError('The gateway reported the video done but gave no URL for it.', { type: 'invalid_response' });
      // The key goes only to the gateway's own origin; storage and vendors' CDNs get none.
      const own = url.startsWith(`${this.transport.baseUrl}/`);
      const res = own
        ? await this.transport.send({
            method: 'GET',
            path: url.slice(this.transport.baseUrl.length),
            auth: 'bearer',
            accept: 'application/binary',
            signal: opts.signal,
            followRedirects: true,
          })
        : await this.transport.sendUrl(url, { accept: 'video/*', signal: opts.signal });
      return new BinaryResponse(res, 'Video download');
    }
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
    // The unified route has no delete: the task runs out at the gateway.
    if (this.unified) return;
    await this.transport.json({ method: 'DELETE', path: `/v1/videos/${encodeURIComponent(id)}`, auth: 'bearer', signal: opts.signal });
  }

  /** Polls until the task completes (returned) or fails (VideoFailedError). */
  waitFor(id: string, opts: WaitOptions = {}): Promise<VideoTask> {
    const started = this.now();
    return pollTask({
      fetch: () => this.retrieve(id, opts),
      done: (task) => task.status === 'completed',
      failure: (task) => (task.status === 'failed' ? new VideoFailedError(task) : undefined),
      intervalMs: opts.intervalMs ?? 15_000,
      sleep: this.sleep,
      signal: opts.signal,
      cancelled: 'Waiting for the video was cancelled.',
      onProgress: opts.onProgress && ((task) => opts.onProgress!(task, this.now() - started)),
    });
  }
}
