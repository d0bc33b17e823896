/**
 * Music through a new-api gateway's Suno task routes (`relay/channel/task/suno` in new-api):
 * `POST /suno/submit/{music|lyrics}` answers `{code:"success", data:"<task id>"}`; the task is read
 * with `GET /suno/fetch/{id}` (or `POST /suno/fetch` with `{ids}`), a `TaskDto` whose `status` is
 * NOT_START, SUBMITTED, QUEUED, IN_PROGRESS, SUCCESS or FAILURE, whose `progress` is "40%", and
 * whose `data` holds the clips (a song's `audio_url`, `image_url`, `title`, `metadata.duration`).
 * one-api has none of these routes (404): the caller turns music off for that gateway.
 */
import * as z from '../core/z';
import { BinaryResponse } from '../core/binary';
import { GatewayError } from '../core/errors';
import { pollTask } from '../core/poll';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

import { SUNO_LIMITS } from '../../common/mediaLimits';
export { SUNO_LIMITS };

export const SunoMusicSchema = z
  .looseObject({
    /** Describe the song; Suno writes lyrics and style (description mode). */
    gpt_description_prompt: z.string().max(SUNO_LIMITS.description, `gpt_description_prompt may be at most ${SUNO_LIMITS.description} characters`).optional(),
    /** The lyrics (custom mode). */
    prompt: z.string().max(SUNO_LIMITS.lyrics, `prompt (the lyrics) may be at most ${SUNO_LIMITS.lyrics} characters`).optional(),
    tags: z.string().max(SUNO_LIMITS.tags, `tags (the style) may be at most ${SUNO_LIMITS.tags} characters`).optional(),
    title: z.string().max(SUNO_LIMITS.title, `title may be at most ${SUNO_LIMITS.title} characters`).optional(),
    /** Suno's model version (`chirp-v3-5`, `chirp-v4`…); the gateway's default when absent. */
    mv: z.string().optional(),
    make_instrumental: z.boolean().optional(),
    continue_clip_id: z.string().optional(),
    continue_at: z.number().nonnegative().optional(),
    task_id: z.string().optional(),
  })
  .superRefine((r, ctx) => {
    if (!r.gpt_description_prompt?.trim() && !r.prompt?.trim())
      ctx.addIssue({ code: 'custom', path: ['prompt'], message: 'give a description (gpt_description_prompt) or the lyrics (prompt)' });
    if (r.continue_clip_id && !r.task_id)
      ctx.addIssue({ code: 'custom', path: ['task_id'], message: 'task_id is required with continue_clip_id (new-api refuses without it)' });
  });
export type SunoMusicRequest = z.input<typeof SunoMusicSchema>;

const SongSchema = z.looseObject({
  id: z.string(),
  title: z.string().optional(),
  audio_url: z.string().optional(),
  image_url: z.string().optional(),
  video_url: z.string().optional(),
  status: z.string().optional(),
  model_name: z.string().optional(),
  text: z.string().optional(),
  metadata: z.looseObject({ tags: z.string().optional(), prompt: z.string().optional(), duration: z.unknown().optional() }).optional(),
});
export type SunoSong = z.output<typeof SongSchema>;

const TaskSchema = z.looseObject({
  task_id: z.string(),
  action: z.string().optional(),
  status: z.string(),
  fail_reason: z.string().optional(),
  progress: z.string().optional(),
  submit_time: z.number().optional(),
  finish_time: z.number().optional(),
  data: z.unknown().optional(),
});

/** new-api's task envelope: `code` is "success", else the failure's code and `message`. */
const Envelope = z.looseObject({ code: z.union([z.string(), z.number()]).optional(), message: z.string().optional(), data: z.unknown().optional() });

export interface SunoTask {
  id: string;
  /** new-api's status, upper case: NOT_START, SUBMITTED, QUEUED, IN_PROGRESS, SUCCESS, FAILURE. */
  status: string;
  /** 0–100, from "40%". */
  progress?: number;
  failReason?: string;
  /** The clips (a music task makes two); lyrics for a lyrics task. */
  songs: SunoSong[];
}

export class SunoFailedError extends GatewayError {
  override readonly name: string = 'SunoFailedError';
  constructor(readonly task: SunoTask) {
    super(`Music generation failed: ${task.failReason || 'no reason given'}`, { type: 'task_failed' });
  }
}

/** "40%" → 40; anything else → undefined. */
export function percent(text: string | undefined): number | undefined {
  const m = /^(\d{1,3})%$/.exec(text?.trim() ?? '');
  return m ? Math.min(100, Number(m[1])) : undefined;
}

function songsOf(data: unknown): SunoSong[] {
  const list = Array.isArray(data)
    ? data
    : data && typeof data === 'object' && Array.isArray((data as { clips?: unknown }).clips)
      ? (data as { clips: unknown[] }).clips
      : [];
  return list.flatMap((s) => {
    const parsed = SongSchema.safeParse(s);
    return parsed.success ? [parsed.data] : [];
  });
}

function unwrap(data: unknown, what: string): unknown {
  const env = parseResponse(Envelope, data, what);
  if (env.code !== undefined && env.code !== 'success')
    throw new GatewayError(`The gateway refused ${what}: ${env.message || String(env.code)}`, { type: 'task_error', code: String(env.code) });
  return env.data;
}

export interface SunoWaitOptions extends RequestOptions {
  intervalMs?: number;
  onProgress?: (task: SunoTask) => void;
}

export class Suno {
  constructor(
    private readonly transport: Transport,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  ) {}

  /** Starts a song; returns the task id. */
  async music(body: SunoMusicRequest, opts: RequestOptions = {}): Promise<string> {
    const req = validateRequest(SunoMusicSchema, body);
    const { data } = await this.transport.json({ method: 'POST', path: '/suno/submit/music', auth: 'bearer', json: req, signal: opts.signal });
    const id = unwrap(data, 'the music task');
    if (typeof id !== 'string' || !id) throw new GatewayError('The gateway accepted the music task but sent no task id.', { type: 'invalid_response' });
    return id;
  }

  async fetch(id: string, opts: RequestOptions = {}): Promise<SunoTask> {
    const { data } = await this.transport.json({ method: 'GET', path: `/suno/fetch/${encodeURIComponent(id)}`, auth: 'bearer', signal: opts.signal });
    const t = parseResponse(TaskSchema, unwrap(data, 'the music task status'), 'a music task');
    return { id: t.task_id, status: t.status.toUpperCase(), progress: percent(t.progress), failReason: t.fail_reason || undefined, songs: songsOf(t.data) };
  }

  /** Polls until the task succeeds (returned) or fails (SunoFailedError). */
  waitFor(id: string, opts: SunoWaitOptions = {}): Promise<SunoTask> {
    return pollTask({
      fetch: () => this.fetch(id, opts),
      done: (task) => task.status === 'SUCCESS',
      failure: (task) => (task.status === 'FAILURE' ? new SunoFailedError(task) : undefined),
      intervalMs: opts.intervalMs ?? 10_000,
      sleep: this.sleep,
      signal: opts.signal,
      cancelled: 'Waiting for the music was cancelled.',
      onProgress: opts.onProgress,
    });
  }

  /** A clip's audio (or cover image), fetched without the key: the URL is often the upstream's storage. */
  async download(url: string, opts: RequestOptions = {}): Promise<BinaryResponse> {
    return new BinaryResponse(await this.transport.sendUrl(url, { accept: 'audio/*, image/*', signal: opts.signal }), 'Music download');
  }
}
