/**
 * Midjourney through a new-api gateway (`relay/relay-mj.go`, `dto/midjourney.go` in new-api; the
 * midjourney-proxy protocol it relays). `POST /mj/submit/imagine` answers
 * `{code, description, result:"<task id>"}`: code 1 is accepted, 21 "already exists" and 22
 * "queued" also carry the task id; any other code is a refusal (banned prompt, busy channel).
 * `GET /mj/task/{id}/fetch` is the task: `status` (NOT_START, SUBMITTED, MODAL, IN_PROGRESS,
 * SUCCESS, FAILURE, CANCEL), `progress` "40%", `imageUrl` (the 2×2 grid, or the upscaled image),
 * and `buttons` (U1–U4, V1–V4, re-roll) whose `customId` goes to `POST /mj/submit/action`.
 * Refusals by the gateway come as HTTP 400 `{description, type:"upstream_error", code}`.
 * one-api has none of these routes (404).
 */
import * as z from '../core/z';
import { BinaryResponse } from '../core/binary';
import { GatewayError } from '../core/errors';
import { pollTask } from '../core/poll';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';
import { percent } from './suno';

import { MJ_PROMPT_LIMIT } from '../../common/mediaLimits';
export { MJ_PROMPT_LIMIT };

export const MjImagineSchema = z.looseObject({
  prompt: z
    .string({ error: 'prompt is required' })
    .trim()
    .min(1, 'prompt must not be empty')
    .max(MJ_PROMPT_LIMIT, `prompt may be at most ${MJ_PROMPT_LIMIT} characters`),
  /** Reference images as data URIs. */
  base64Array: z
    .array(z.string().regex(/^data:image\/(png|jpeg|webp);base64,/, 'each reference must be a PNG, JPEG or WEBP data URI'))
    .max(5, 'at most 5 reference images')
    .optional(),
  botType: z.enum(['MID_JOURNEY', 'NIJI_JOURNEY']).optional(),
});
export type MjImagineRequest = z.input<typeof MjImagineSchema>;

const SubmitSchema = z.looseObject({ code: z.number(), description: z.string().optional(), result: z.union([z.string(), z.number()]).nullish() });

const ButtonSchema = z.looseObject({ customId: z.string(), label: z.string().optional(), emoji: z.string().optional() });
export type MjButton = z.output<typeof ButtonSchema>;

const TaskSchema = z.looseObject({
  id: z.string(),
  action: z.string().optional(),
  prompt: z.string().optional(),
  status: z.string().optional(),
  progress: z.string().optional(),
  imageUrl: z.string().nullish(),
  failReason: z.string().nullish(),
  buttons: z.array(z.unknown()).nullish(),
});

export interface MjTask {
  id: string;
  action?: string;
  /** NOT_START, SUBMITTED, MODAL, IN_PROGRESS, SUCCESS, FAILURE, CANCEL. */
  status: string;
  progress?: number;
  imageUrl?: string;
  failReason?: string;
  /** What can follow: U1–U4 (upscale one image of the grid), V1–V4 (variations), re-roll. */
  buttons: MjButton[];
}

/** Accepted submissions: 1 submitted, 21 the same task exists, 22 queued. */
const ACCEPTED = new Set([1, 21, 22]);

export class MidjourneyFailedError extends GatewayError {
  override readonly name: string = 'MidjourneyFailedError';
  constructor(readonly task: MjTask) {
    super(`Midjourney task failed: ${task.failReason || 'no reason given'}`, { type: 'task_failed' });
  }
}

export interface MjWaitOptions extends RequestOptions {
  intervalMs?: number;
  onProgress?: (task: MjTask) => void;
}

export class Midjourney {
  constructor(
    private readonly transport: Transport,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  ) {}

  private async submit(path: string, json: unknown, opts: RequestOptions): Promise<string> {
    const { data } = await this.transport.json({ method: 'POST', path, auth: 'bearer', json, signal: opts.signal });
    const r = parseResponse(SubmitSchema, data, 'a Midjourney submission');
    if (!ACCEPTED.has(r.code) || r.result === undefined || r.result === null || r.result === '') {
      throw new GatewayError(`Midjourney refused the task: ${r.description || `code ${r.code}`}`, { type: 'task_refused', code: String(r.code) });
    }
    return String(r.result);
  }

  /** Starts a 2×2 grid from a prompt; returns the task id. */
  async imagine(body: MjImagineRequest, opts: RequestOptions = {}): Promise<string> {
    return this.submit('/mj/submit/imagine', validateRequest(MjImagineSchema, body), opts);
  }

  /** A follow-up of a finished task by one of its buttons (U2, V3…); returns the new task id. */
  async action(taskId: string, customId: string, opts: RequestOptions = {}): Promise<string> {
    if (!taskId || !customId) throw new GatewayError('A Midjourney action needs the task id and the button.', { type: 'validation_error' });
    return this.submit('/mj/submit/action', { taskId, customId }, opts);
  }

  async fetch(id: string, opts: RequestOptions = {}): Promise<MjTask> {
    const { data } = await this.transport.json({ method: 'GET', path: `/mj/task/${encodeURIComponent(id)}/fetch`, auth: 'bearer', signal: opts.signal });
    const t = parseResponse(TaskSchema, data, 'a Midjourney task');
    const buttons = (t.buttons ?? []).flatMap((b) => {
      const parsed = ButtonSchema.safeParse(b);
      return parsed.success ? [parsed.data] : [];
    });
    return {
      id: t.id,
      action: t.action,
      status: (t.status || 'NOT_START').toUpperCase(),
      progress: percent(t.progress),
      imageUrl: t.imageUrl || undefined,
      failReason: t.failReason || undefined,
      buttons,
    };
  }

  /** Polls until the task succeeds (returned) or fails or is cancelled (MidjourneyFailedError). */
  waitFor(id: string, opts: MjWaitOptions = {}): Promise<MjTask> {
    return pollTask({
      fetch: () => this.fetch(id, opts),
      done: (task) => task.status === 'SUCCESS',
      failure: (task) => (task.status === 'FAILURE' || task.status === 'CANCEL' ? new MidjourneyFailedError(task) : undefined),
      intervalMs: opts.intervalMs ?? 5_000,
      sleep: this.sleep,
      signal: opts.signal,
      cancelled: 'Waiting for Midjourney was cancelled.',
      onProgress: opts.onProgress,
    });
  }

  /** The task's image, fetched without the key (new-api's `/mj/image/{id}` needs none; others are the upstream's CDN). */
  async image(url: string, opts: RequestOptions = {}): Promise<BinaryResponse> {
    return new BinaryResponse(await this.transport.sendUrl(url, { accept: 'image/*', signal: opts.signal }), 'Midjourney image');
  }
}

/** The label of a button as a person reads it ("U1", "V3", "🔄" → "Re-roll"). */
export function buttonLabel(b: MjButton): string {
  if (b.label) return b.label;
  if (/::reroll::/.test(b.customId)) return 'Re-roll';
  return b.emoji || b.customId.split('::').slice(2, 4).join(' ');
}
