import { randomBytes } from 'node:crypto';
import { mp4 } from './media';
import { openAiError, parseForm, sendJson, type Ctx } from './server';
import { asText } from './values';

type Json = Record<string, unknown>;

interface Family {
  match: RegExp;
  seconds: string[];
  sizes: string[];
  queues: boolean;
}
const FAMILIES: Family[] = [
  { match: /^sora-2(-pro)?$/, seconds: ['4', '8', '12'], sizes: ['720x1280', '1280x720', '1024x1792', '1792x1024'], queues: true },
  { match: /^veo-3\.1/, seconds: ['4', '6', '8'], sizes: ['720p', '1080p', '4k'], queues: false },
];

export interface VideoTaskState {
  id: string;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  createdAt: number;
  queues: boolean;
  fails: boolean;
}

/** Timeline on the emulator clock: queued 10 s (one family only), generating 60 s, then done. */
const QUEUED_MS = 10_000;
const GENERATING_MS = 60_000;
const FAIL_AFTER_MS = 20_000;

function view(t: VideoTaskState, now: number): Json {
  const age = now - t.createdAt;
  const queuedFor = t.queues ? QUEUED_MS : 0;
  let status: string;
  let progress: number;
  if (t.fails && age >= FAIL_AFTER_MS) {
    status = 'failed';
    progress = 0;
  } else if (age < queuedFor) {
    status = 'queued';
    progress = 0;
  } else if (age < queuedFor + GENERATING_MS) {
    status = 'in_progress';
    progress = Math.floor(((age - queuedFor) / GENERATING_MS) * 100);
  } else {
    status = 'completed';
    progress = 100;
  }
  return {
    id: t.id,
    object: 'video',
    model: t.model,
    status,
    progress,
    created_at: Math.floor(t.createdAt / 1000),
    seconds: t.seconds,
    size: t.size,
    error: status === 'failed' ? { code: 'generation_failed', message: 'The upstream provider rejected the prompt.' } : null,
  };
}

export async function handleVideoCreate(ctx: Ctx): Promise<void> {
  const { emu, res } = ctx;
  // JSON per the spec; multipart too, as the official SDK sends it and gateways pass it on.
  const form = await parseForm(ctx);
  const body = form ? (Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === 'string')) as Json) : (ctx.body as Json | undefined);
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) return openAiError(res, 400, 'The request body must be a JSON object.');
  const task = startVideoTask(ctx, body);
  if (task) sendJson(res, 200, view(task, emu.clock.now()));
}

/** Checks a request against the model's family and starts the task (billed); answers the refusal itself. */
function startVideoTask(ctx: Ctx, body: Json): VideoTaskState | undefined {
  const { emu, res } = ctx;
  const model = emu.requireModel(ctx, body.model, 'openai', 'video');
  if (!model) return;
  const auth = emu.authorize(ctx, 'bearer', model, 'openai');
  if (!auth.ok) return;
  const bad = (m: string) => (openAiError(res, 400, m, 'invalid_request_error', 'invalid_parameter'), undefined);
  if (typeof body.prompt !== 'string' || !body.prompt) return bad('prompt is required.');
  const family = FAMILIES.find((f) => f.match.test(model.id))!;
  const seconds = body.seconds === undefined ? family.seconds[0] : body.seconds;
  if (typeof seconds !== 'string') return bad('seconds must be sent as a string.');
  if (!family.seconds.includes(seconds)) return bad(`seconds must be one of ${family.seconds.join(', ')} for ${model.id}.`);
  const size = body.size === undefined ? family.sizes[0] : asText(body.size);
  if (!family.sizes.includes(size)) return bad(`size must be one of ${family.sizes.join(', ')} for ${model.id}.`);
  const task: VideoTaskState = {
    id: `video_${randomBytes(10).toString('hex')}`,
    model: model.id,
    prompt: body.prompt,
    seconds,
    size,
    createdAt: emu.clock.now(),
    queues: family.queues,
    fails: body.prompt.includes('#fail'),
  };
  emu.videos.set(task.id, task);
  emu.store.spend(auth.key, Number(seconds) * model.ratio, { model: model.id });
  return task;
}

export function handleVideo(ctx: Ctx, id: string, sub: string | undefined): void {
  const { emu, res, req } = ctx;
  const auth = emu.authorize(ctx, 'bearer', undefined, 'openai');
  if (!auth.ok) return;
  const task = emu.videos.get(id);
  if (!task) return openAiError(res, 404, 'Task not found.', 'invalid_request_error', 'not_found');
  const state = view(task, emu.clock.now());
  if (req.method === 'DELETE' && !sub) {
    emu.videos.delete(id);
    return sendJson(res, 200, { id, object: 'video.deleted', deleted: true });
  }
  if (req.method === 'GET' && !sub) return sendJson(res, 200, state);
  if (req.method === 'GET' && sub === 'content') {
    if (state.status !== 'completed') {
      return openAiError(res, 400, `Task is not completed yet, current status: ${String(state.status)}`, 'invalid_request_error', 'task_not_completed');
    }
    const bytes = mp4(Number(task.seconds), `${task.model}: ${task.prompt}`, task.size);
    return emu.sendDownload(res, bytes, 'video/mp4', `${id}.mp4`);
  }
  openAiError(res, 404, `No route for ${req.method} /v1/videos/${id}/${sub ?? ''}.`, 'invalid_request_error', 'not_found');
}

const TASK_STATUS: Record<string, string> = { queued: 'QUEUED', in_progress: 'IN_PROGRESS', completed: 'SUCCESS', failed: 'FAILURE' };

/**
 * `POST /v1/video/generations` (new-api's `VideoRequest`: `duration`, `width`/`height`, `image`,
 * `metadata`), answered `{task_id, status}` (`VideoResponse`). The same tasks as `/v1/videos`.
 */
export function handleUnifiedVideoCreate(ctx: Ctx): void {
  if (ctx.emu.profile !== 'new-api') return openAiError(ctx.res, 404, `Invalid URL (${ctx.req.method} ${ctx.path})`, 'invalid_request_error', '');
  const body = ctx.body as Json | undefined;
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body))
    return sendJson(ctx.res, 400, { code: 'invalid_request', message: 'invalid request body', data: null });
  const size =
    typeof body.width === 'number' && typeof body.height === 'number' ? `${body.width}x${body.height}` : asText((body.metadata as Json | undefined)?.size);
  // /v1/videos's checks and timeline: the same task adaptors behind both routes.
  const task = startVideoTask(ctx, {
    model: body.model,
    prompt: body.prompt,
    ...(body.duration !== undefined ? { seconds: asText(body.duration) } : {}),
    ...(size ? { size } : {}),
  });
  if (task) sendJson(ctx.res, 200, { task_id: task.id, status: TASK_STATUS[asText(view(task, ctx.emu.clock.now()).status)] ?? 'QUEUED' });
}

/** `GET /v1/video/generations/{id}`: `{code:"success", data: TaskDto}`, the video's URL in `result_url` once done (on storage, no key). */
export function handleUnifiedVideo(ctx: Ctx, id: string): void {
  const { emu, res } = ctx;
  if (emu.profile !== 'new-api') return openAiError(res, 404, `Invalid URL (${ctx.req.method} ${ctx.path})`, 'invalid_request_error', '');
  const auth = emu.authorize(ctx, 'bearer', undefined, 'openai');
  if (!auth.ok) return;
  const task = emu.videos.get(id);
  if (!task) return sendJson(res, 400, { code: 'task_not_exist', message: 'task_not_exist', data: null });
  const state = view(task, emu.clock.now());
  const status = TASK_STATUS[asText(state.status)] ?? 'QUEUED';
  const url =
    status === 'SUCCESS' ? emu.storage.put(mp4(Number(task.seconds), `${task.model}: ${task.prompt}`, task.size), 'video/mp4', `${id}.mp4`) : undefined;
  const sec = Math.floor(task.createdAt / 1000);
  sendJson(res, 200, {
    code: 'success',
    message: '',
    data: {
      id: 1,
      created_at: sec,
      updated_at: Math.floor(emu.clock.now() / 1000),
      task_id: id,
      platform: '52',
      user_id: auth.key.userId,
      group: 'default',
      channel_id: 1,
      quota: 0,
      action: 'generate',
      status,
      fail_reason: status === 'FAILURE' ? 'The upstream provider rejected the prompt.' : '',
      ...(url ? { result_url: url } : {}),
      submit_time: sec,
      start_time: sec,
      finish_time: status === 'SUCCESS' || status === 'FAILURE' ? Math.floor(emu.clock.now() / 1000) : 0,
      progress: `${asText(state.progress)}%`,
      properties: { input: task.prompt },
      data: null,
    },
  });
}
