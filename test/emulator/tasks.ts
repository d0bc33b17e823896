/**
 * new-api's task routes for music (Suno) and Midjourney, with the shapes of its source:
 * `dto/suno.go`, `dto/task.go`, `relay/relay_task.go` (fetch builders, `TaskModel2Dto`),
 * `model/task.go` (statuses), `dto/midjourney.go`, `relay/relay-mj.go` and the controller's error
 * path (`{description, type:"upstream_error", code}` with HTTP 400). one-api has none of them: 404.
 *
 * Each task runs on the emulator's clock: submitted, then in progress with a rising percentage,
 * then done (a prompt with `#fail` fails half-way, and new-api gives the quota back).
 */
import { randomBytes } from 'node:crypto';
import { mp3, png } from './media';
import { openAiError, sendJson, type Ctx } from './server';
import type { EmuKey } from './store';

type Json = Record<string, unknown>;

/** new-api's default per-call prices (dollars) for these models (`setting/ratio_setting/model_ratio.go`). */
export const TASK_MODEL_PRICES: Record<string, number> = {
  suno_music: 0.1,
  suno_lyrics: 0.01,
  mj_imagine: 0.1,
  mj_variation: 0.1,
  mj_reroll: 0.1,
  mj_upscale: 0.05,
};

const SUNO_STARTS_MS = 5_000;
const SUNO_TAKES_MS = 40_000;
const MJ_STARTS_MS = 3_000;
const MJ_TAKES_MS = 30_000;

export interface EmuTask {
  kind: 'suno' | 'mj';
  id: string;
  /** new-api's row id. */
  seq: number;
  /** `MUSIC`, `LYRICS`; `IMAGINE`, `UPSCALE`, `VARIATION`, `REROLL`. */
  action: string;
  prompt: string;
  model: string;
  createdAt: number;
  fails: boolean;
  key: EmuKey;
  quota: number;
  refunded: boolean;
  /** Midjourney: the grid a U/V button came from, and which image (1–4). */
  parent?: string;
  index?: number;
  title?: string;
  tags?: string;
  instrumental?: boolean;
}

function phase(t: EmuTask, now: number): { status: string; progress: number } {
  const [starts, takes] = t.kind === 'suno' ? [SUNO_STARTS_MS, SUNO_TAKES_MS] : [MJ_STARTS_MS, MJ_TAKES_MS];
  const age = now - t.createdAt;
  if (age < starts) return { status: 'SUBMITTED', progress: 0 };
  if (t.fails && age >= starts + takes / 2) return { status: 'FAILURE', progress: 100 };
  if (age < starts + takes) return { status: 'IN_PROGRESS', progress: Math.max(1, Math.floor(((age - starts) / takes) * 100)) };
  return { status: 'SUCCESS', progress: 100 };
}

/** A failed task's quota goes back to the key, once (new-api's task polling refunds failures). */
function settle(ctx: Ctx, t: EmuTask, status: string): void {
  if (status !== 'FAILURE' || t.refunded) return;
  t.refunded = true;
  ctx.emu.store.refund(t.key, t.quota);
}

function notOnOneApi(ctx: Ctx): boolean {
  if (ctx.emu.profile === 'new-api') return false;
  openAiError(ctx.res, 404, `Invalid URL (${ctx.req.method} ${ctx.path})`, 'invalid_request_error', '');
  return true;
}

function taskError(ctx: Ctx, status: number, code: string, message = code): void {
  sendJson(ctx.res, status, { code, message, data: null });
}

function submitTask(ctx: Ctx, kind: EmuTask['kind'], modelId: string, init: Partial<EmuTask> & { action: string; prompt: string }): EmuTask | undefined {
  const model = ctx.emu.requireModel(ctx, modelId, 'openai', 'task');
  if (!model) return undefined;
  const auth = ctx.emu.authorize(ctx, 'bearer', model, 'openai');
  if (!auth.ok) return undefined;
  const quota = Math.round((TASK_MODEL_PRICES[modelId] ?? 0.1) * 500_000);
  const task: EmuTask = {
    kind,
    seq: ctx.emu.tasks.size + 1,
    id: kind === 'suno' ? `task_${randomBytes(16).toString('hex')}` : String(Date.now() * 1000 + ctx.emu.tasks.size),
    model: modelId,
    createdAt: ctx.emu.clock.now(),
    fails: init.prompt.includes('#fail'),
    key: auth.key,
    quota,
    refunded: false,
    ...init,
  };
  ctx.emu.tasks.set(task.id, task);
  // new-api bills a task when it is accepted.
  ctx.emu.store.spend(auth.key, quota, { model: modelId });
  return task;
}

// ---- Suno ----

/** `POST /suno/submit/{action}`: music or lyrics; `{code:"success", message:"", data:"<task id>"}`. */
export function handleSunoSubmit(ctx: Ctx, action: string): void {
  if (notOnOneApi(ctx)) return;
  const body = (ctx.body ?? {}) as Json;
  if (typeof body !== 'object' || Buffer.isBuffer(body)) return taskError(ctx, 400, 'invalid_request', 'invalid character in request body');
  const act = action.toUpperCase();
  if (act !== 'MUSIC' && act !== 'LYRICS') return taskError(ctx, 400, 'invalid_request', 'invalid_action');
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  const description = typeof body.gpt_description_prompt === 'string' ? body.gpt_description_prompt : '';
  if (act === 'LYRICS' && !prompt) return taskError(ctx, 400, 'invalid_request', 'prompt_empty');
  // The upstream refuses a song with neither a description nor lyrics.
  if (act === 'MUSIC' && !prompt && !description) return taskError(ctx, 400, 'invalid_request', 'prompt_empty');
  const task = submitTask(ctx, 'suno', act === 'MUSIC' ? 'suno_music' : 'suno_lyrics', {
    action: act,
    prompt: prompt || description,
    title: typeof body.title === 'string' && body.title ? body.title : (description || prompt).split(/\s+/).slice(0, 4).join(' '),
    tags: typeof body.tags === 'string' ? body.tags : 'emulated pop',
    instrumental: body.make_instrumental === true,
  });
  if (task) sendJson(ctx.res, 200, { code: 'success', message: '', data: task.id });
}

function sunoDto(ctx: Ctx, t: EmuTask): Json {
  const { status, progress } = phase(t, ctx.emu.clock.now());
  settle(ctx, t, status);
  const done = status === 'SUCCESS';
  const songs = done
    ? [1, 2].map((n) => ({
        id: `${t.id.slice(5, 13)}-${n}`,
        title: t.title,
        status: 'complete',
        model_name: 'chirp-v3-5',
        audio_url: `${ctx.emu.url}/emu-audio/${t.id}-${n}.mp3`,
        image_url: `${ctx.emu.url}/emu-audio/${t.id}-${n}.png`,
        text: t.instrumental ? '' : `[Verse]\n${t.prompt}`,
        metadata: { tags: t.tags, prompt: t.prompt, duration: 12 + n },
      }))
    : [];
  const sec = Math.floor(t.createdAt / 1000);
  return {
    id: t.seq,
    created_at: sec,
    updated_at: Math.floor(ctx.emu.clock.now() / 1000),
    task_id: t.id,
    platform: 'suno',
    user_id: t.key.userId,
    group: 'default',
    channel_id: 1,
    quota: t.quota,
    action: t.action,
    status,
    fail_reason: status === 'FAILURE' ? 'The upstream provider rejected the prompt.' : '',
    submit_time: sec,
    start_time: status === 'SUBMITTED' ? 0 : sec + SUNO_STARTS_MS / 1000,
    finish_time: status === 'SUCCESS' || status === 'FAILURE' ? Math.floor(ctx.emu.clock.now() / 1000) : 0,
    progress: `${progress}%`,
    properties: { input: t.prompt },
    data: songs,
  };
}

/** `GET /suno/fetch/{id}`; `POST /suno/fetch` with `{ids}`. */
export function handleSunoFetch(ctx: Ctx, id: string | undefined): void {
  if (notOnOneApi(ctx)) return;
  const auth = ctx.emu.authorize(ctx, 'bearer', undefined, 'openai');
  if (!auth.ok) return;
  const own = (taskId: unknown) => {
    const t = typeof taskId === 'string' ? ctx.emu.tasks.get(taskId) : undefined;
    return t && t.kind === 'suno' && t.key.userId === auth.key.userId ? t : undefined;
  };
  if (id !== undefined) {
    const t = own(id);
    if (!t) return taskError(ctx, 400, 'task_not_exist');
    return sendJson(ctx.res, 200, { code: 'success', message: '', data: sunoDto(ctx, t) });
  }
  const ids = Array.isArray((ctx.body as Json | undefined)?.ids) ? ((ctx.body as Json).ids as unknown[]) : [];
  sendJson(ctx.res, 200, { code: 'success', message: '', data: ids.flatMap((i) => (own(i) ? [sunoDto(ctx, own(i)!)] : [])) });
}

/** The clips' audio and cover, as the upstream's storage serves them (no key). */
export function serveTaskAudio(ctx: Ctx, name: string, ext: string): void {
  const m = /^(task_[0-9a-f]+)-([12])$/.exec(name);
  const t = m ? ctx.emu.tasks.get(m[1]) : undefined;
  if (!t || phase(t, ctx.emu.clock.now()).status !== 'SUCCESS') return openAiError(ctx.res, 404, 'Not found.', 'invalid_request_error', 'not_found');
  const bytes = ext === 'mp3' ? mp3(`${t.title ?? ''}: ${t.prompt}`, 12 + Number(m![2])) : png(256, 256, t.createdAt + Number(m![2]));
  ctx.emu.sendDownload(ctx.res, bytes, ext === 'mp3' ? 'audio/mpeg' : 'image/png', `${name}.${ext}`);
}

// ---- Midjourney ----

/** The controller's refusal: HTTP 400 `{description, type:"upstream_error", code}`. */
function mjRefusal(ctx: Ctx, code: number, description: string, result = ''): void {
  sendJson(ctx.res, 400, { description: `${description} ${result}`, type: 'upstream_error', code });
}

const MJ_ACTION_MODEL: Record<string, string> = { IMAGINE: 'mj_imagine', UPSCALE: 'mj_upscale', VARIATION: 'mj_variation', REROLL: 'mj_reroll' };

/** `POST /mj/submit/imagine` and `/mj/submit/action` (a button of a finished task). */
export function handleMjSubmit(ctx: Ctx, what: string): void {
  if (notOnOneApi(ctx)) return;
  const body = (ctx.body ?? {}) as Json;
  if (what === 'imagine') {
    const prompt = typeof body.prompt === 'string' ? body.prompt.trim() : '';
    if (!prompt) return mjRefusal(ctx, 4, 'prompt_is_required');
    // midjourney-proxy's banned-word check answers 200 with code 24 (not billed).
    if (/\bbanned\b/i.test(prompt))
      return sendJson(ctx.res, 200, { code: 24, description: '可能包含敏感词', properties: { promptEn: prompt, bannedWord: 'banned' }, result: null });
    const task = submitTask(ctx, 'mj', 'mj_imagine', { action: 'IMAGINE', prompt });
    if (task) sendJson(ctx.res, 200, { code: 1, description: '提交成功', properties: {}, result: task.id });
    return;
  }
  if (what === 'action') {
    const parent = typeof body.taskId === 'string' ? ctx.emu.tasks.get(body.taskId) : undefined;
    const customId = typeof body.customId === 'string' ? body.customId : '';
    if (!parent || parent.kind !== 'mj') return mjRefusal(ctx, 4, 'task_no_found');
    if (phase(parent, ctx.emu.clock.now()).status !== 'SUCCESS') return mjRefusal(ctx, 4, 'task_status_not_success');
    const m = /^MJ::JOB::(upsample|variation|reroll)::(\d)::/.exec(customId);
    if (!m || !buttonsOf(parent).some((b) => b.customId === customId)) return mjRefusal(ctx, 4, 'customId_is_invalid');
    const action = m[1] === 'upsample' ? 'UPSCALE' : m[1] === 'variation' ? 'VARIATION' : 'REROLL';
    const task = submitTask(ctx, 'mj', MJ_ACTION_MODEL[action], { action, prompt: parent.prompt, parent: parent.id, index: Number(m[2]) });
    if (task) sendJson(ctx.res, 200, { code: 1, description: '提交成功', properties: {}, result: task.id });
    return;
  }
  mjRefusal(ctx, 4, 'unsupported_action', what);
}

function hashOf(t: EmuTask): string {
  return t.id.split('').reverse().join('').slice(0, 12);
}

function buttonsOf(t: EmuTask): { customId: string; emoji: string; label: string; type: number; style: number }[] {
  if (t.action === 'UPSCALE') return [];
  const h = hashOf(t);
  return [
    ...[1, 2, 3, 4].map((i) => ({ customId: `MJ::JOB::upsample::${i}::${h}`, emoji: '', label: `U${i}`, type: 2, style: 2 })),
    { customId: `MJ::JOB::reroll::0::${h}::SOLO`, emoji: '🔄', label: '', type: 2, style: 2 },
    ...[1, 2, 3, 4].map((i) => ({ customId: `MJ::JOB::variation::${i}::${h}`, emoji: '', label: `V${i}`, type: 2, style: 2 })),
  ];
}

/** `GET /mj/task/{id}/fetch`: new-api's `MidjourneyDto`, the image URL forwarded through `/mj/image/{id}`. */
export function handleMjFetch(ctx: Ctx, id: string): void {
  if (notOnOneApi(ctx)) return;
  const auth = ctx.emu.authorize(ctx, 'bearer', undefined, 'openai');
  if (!auth.ok) return;
  const t = ctx.emu.tasks.get(id);
  if (!t || t.kind !== 'mj' || t.key.userId !== auth.key.userId) return mjRefusal(ctx, 4, 'task_no_found');
  const { status, progress } = phase(t, ctx.emu.clock.now());
  settle(ctx, t, status);
  sendJson(ctx.res, 200, {
    id: t.id,
    action: t.action,
    customId: '',
    botType: 'MID_JOURNEY',
    prompt: t.prompt,
    promptEn: t.prompt,
    description: '/imagine ' + t.prompt,
    state: '',
    submitTime: t.createdAt,
    startTime: status === 'SUBMITTED' ? 0 : t.createdAt + MJ_STARTS_MS,
    finishTime: status === 'SUCCESS' || status === 'FAILURE' ? ctx.emu.clock.now() : 0,
    imageUrl: status === 'SUCCESS' ? `${ctx.emu.url}/mj/image/${t.id}` : '',
    videoUrl: '',
    videoUrls: null,
    status,
    progress: `${progress}%`,
    failReason: status === 'FAILURE' ? '[Invalid parameter] Invalid value' : '',
    buttons: status === 'SUCCESS' ? buttonsOf(t) : [],
    maskBase64: '',
    properties: { finalPrompt: t.prompt, finalZhPrompt: '' },
  });
}

/** `GET /mj/image/{id}` (no key, as new-api serves it): the 2×2 grid, or one 512×512 image for an upscale. */
export function serveMjImage(ctx: Ctx, id: string): void {
  const t = ctx.emu.tasks.get(id);
  if (!t || t.kind !== 'mj' || phase(t, ctx.emu.clock.now()).status !== 'SUCCESS') {
    ctx.res.writeHead(404, { 'content-type': 'text/plain' });
    ctx.res.end('image not found');
    return;
  }
  const seed = Number(id.slice(-6)) || 7;
  const bytes =
    t.action === 'UPSCALE'
      ? png(512, 512, seed + (t.index ?? 0))
      : png(512, 512, seed, (x, y) => [((x < 256 ? 60 : 180) + (seed % 50)) & 255, (y < 256 ? 90 : 200) & 255, ((x + y) / 4) & 255]);
  ctx.emu.sendDownload(ctx.res, bytes, 'image/png', `${id}.png`);
}
