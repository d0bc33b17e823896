import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import type * as Gateway from '../../gateway';
import type { GatewayClient } from '../../gateway/client';
import type { DownloadLimit } from '../../gateway/core/binary';
import type { JobKind, StoredJob } from './jobStore';
import { resultPath, slug } from './names';

/** What the jobs need of the gateway bundle at run time (loaded lazily by the host: the core takes it as given). */
export type JobGateway = Pick<
  typeof Gateway,
  'NotFoundError' | 'BadRequestError' | 'SunoFailedError' | 'MidjourneyFailedError' | 'VideoFailedError' | 'buttonLabel'
>;

/** What every job keeps (`StoredJob`): its task id and prompt, when it started, the gateway's status and progress, then ours. */
const storedJob = {
  id: z.string(),
  prompt: z.string(),
  createdAt: z.number(),
  status: z.string(),
  progress: z.optional(z.number()),
  error: z.optional(z.string()),
};

/** A music (Suno) or Midjourney job as the workspace state keeps it; its status is new-api's (SUBMITTED, IN_PROGRESS, SUCCESS, FAILURE…), then ours: downloaded. */
export const TaskJobSchema = z.object({
  ...storedJob,
  kind: z.enum(['music', 'midjourney']),
  /** Music: the song's title; Midjourney: the action (IMAGINE, UPSCALE, VARIATION, REROLL) and its label (U2…). */
  title: z.optional(z.string()),
  action: z.optional(z.string()),
  label: z.optional(z.string()),
  files: z.array(z.string()),
  /** Midjourney: what can follow the finished task (U1–U4, V1–V4, re-roll). */
  buttons: z.optional(z.array(z.object({ customId: z.string(), label: z.string() }))),
});
export type TaskJob = z.infer<typeof TaskJobSchema>;

/** A video job as the workspace state keeps it; its status is `/v1/videos`' (queued, in_progress, completed, failed), then ours: downloaded, cancelled. */
export const VideoJobSchema = z.object({
  ...storedJob,
  model: z.string(),
  seconds: z.optional(z.string()),
  size: z.optional(z.string()),
  file: z.optional(z.string()),
});
export type VideoJob = z.infer<typeof VideoJobSchema>;

/** What a kind of job knows of the gateway: how to ask, what the answers mean, how files are saved. */
export type JobRules<J extends StoredJob> = Pick<
  JobKind<J>,
  'key' | 'schema' | 'what' | 'isActive' | 'isReady' | 'isFailed' | 'isUnknownTask' | 'failedStatus' | 'refresh' | 'download'
>;

const TASK_ENDED = new Set(['downloaded', 'FAILURE', 'CANCEL']);

/** Music (Suno) and Midjourney: new-api's task statuses; a song's clips as MP3s, a grid or an upscale as a PNG. */
export function taskJobRules(client: () => GatewayClient, gw: () => JobGateway, limit: () => DownloadLimit): JobRules<TaskJob> {
  return {
    key: 'modelGateway.taskJobs',
    schema: TaskJobSchema,
    what: 'task',
    isActive: (job) => !TASK_ENDED.has(job.status) && !job.error,
    isReady: (job) => job.status === 'SUCCESS',
    isFailed: (job) => job.status === 'FAILURE' || job.status === 'CANCEL',
    // new-api's `task_not_exist` (Suno) or `task_no_found` (Midjourney).
    isUnknownTask: (err) =>
      err instanceof gw().NotFoundError || (err instanceof gw().BadRequestError && (err.code === 'task_not_exist' || /task_no_found/.test(err.message))),
    failedStatus: 'FAILURE',
    refresh: async (job, signal) => {
      const g = gw();
      if (job.kind === 'music') {
        const t = await client().suno.fetch(job.id, { signal });
        return { ...job, status: t.status, progress: t.progress ?? job.progress, error: t.status === 'FAILURE' ? new g.SunoFailedError(t).message : undefined };
      }
      const t = await client().midjourney.fetch(job.id, { signal });
      const buttons = t.buttons.map((b) => ({ customId: b.customId, label: g.buttonLabel(b) }));
      return {
        ...job,
        status: t.status,
        progress: t.progress ?? job.progress,
        buttons,
        error: t.status === 'FAILURE' || t.status === 'CANCEL' ? new g.MidjourneyFailedError(t).message : undefined,
      };
    },
    download: async (job, dir, signal) => ({
      ...job,
      status: 'downloaded',
      progress: 100,
      files: await saveTaskFiles(client(), job, dir, signal, limit()),
      error: undefined,
    }),
  };
}

const VIDEO_ACTIVE = new Set(['queued', 'in_progress', 'submitted', 'completed']);

/** Videos: the statuses of `/v1/videos`; the MP4 downloaded when completed. */
export function videoJobRules(client: () => GatewayClient, gw: () => JobGateway, limit: () => DownloadLimit): JobRules<VideoJob> {
  return {
    key: 'modelGateway.videoJobs',
    schema: VideoJobSchema,
    what: 'video',
    isActive: (job) => VIDEO_ACTIVE.has(job.status) && !job.error,
    isReady: (job) => job.status === 'completed',
    isFailed: (job) => job.status === 'failed',
    isUnknownTask: (err) => err instanceof gw().NotFoundError,
    failedStatus: 'failed',
    refresh: async (job, signal) => {
      const task = await client().videos.retrieve(job.id, { signal });
      const error = task.status === 'failed' ? new (gw().VideoFailedError)(task).message : undefined;
      return { ...job, status: task.status, progress: task.progress ?? job.progress, error };
    },
    download: async (job, dir, signal) => ({
      ...job,
      status: 'downloaded',
      progress: 100,
      file: await saveVideoFile(client(), job, dir, signal, limit()),
      error: undefined,
    }),
  };
}

/**
 * Saves a finished music or Midjourney task's files into `dir`: a song's clips as MP3s, a grid or an
 * upscale as a PNG. Every part of a name the gateway chose (a clip's title, a button's label) goes
 * through `slug`, and each path is checked to be inside `dir`; each download stops at `limit`.
 */
export async function saveTaskFiles(client: GatewayClient, job: TaskJob, dir: string, signal: AbortSignal, limit?: DownloadLimit): Promise<string[]> {
  const files: string[] = [];
  if (job.kind === 'music') {
    const task = await client.suno.fetch(job.id, { signal });
    const clips = task.songs.filter((s) => s.audio_url);
    if (clips.length === 0) throw new Error(l10n.t('the gateway reported the song done but sent no audio'));
    for (const [i, clip] of clips.entries()) {
      const file = await resultPath(dir, `music-${slug(clip.title || job.title || job.prompt, 32)}-${i + 1}`, '.mp3');
      await (await client.suno.download(clip.audio_url!, { signal })).toFile(file, limit);
      files.push(file);
    }
  } else {
    const task = await client.midjourney.fetch(job.id, { signal });
    if (!task.imageUrl) throw new Error(l10n.t('the gateway reported the image done but sent no image URL'));
    // The label (U2, V3, Re-roll) is the gateway's word, like the title: a name part only.
    const label = job.label ? slug(job.label, 16, '') : '';
    const file = await resultPath(dir, `mj-${slug(job.prompt, 32)}${label ? `-${label}` : ''}`, '.png');
    await (await client.midjourney.image(task.imageUrl, { signal })).toFile(file, limit);
    files.push(file);
  }
  return files;
}

/** Saves a completed video task's MP4 into `dir`, stopping at `limit`. */
export async function saveVideoFile(client: GatewayClient, job: VideoJob, dir: string, signal: AbortSignal, limit?: DownloadLimit): Promise<string> {
  const file = await resultPath(dir, `video-${slug(job.prompt, 32)}`, '.mp4');
  await (await client.videos.content(job.id, { signal })).toFile(file, limit);
  return file;
}
