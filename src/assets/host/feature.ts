import * as vscode from 'vscode';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { FeatureHost } from '../../shell/featureHost';
import { MediaTools } from './mediaTools';
import { generateImageCommand, type ImageRequestArgs } from './images';
import { describeImageCommand, editImageCommand, moderateImageCommand, remixImageCommand, replaceBackgroundCommand, upscaleImageCommand } from './imageActions';
import { checkModerationCommand } from './moderation';
import { ReportDocuments } from './reports';
import { playAudioCommand, speakCommand } from './speech';
import { transcribeCommand } from './transcribe';
import { VideoJobs, type VideoJob } from './videoJobs';
import { generateVideoCommand } from './videos';
import { TaskJobs, type TaskJob } from './taskJobs';
import { generateMusicCommand, midjourneyFollowUpCommand, midjourneyImagineCommand } from './taskCommands';
import { showAudioPlayer } from './player';
import { tell } from '../../shell/errors';

/**
 * The media commands (images, speech, transcripts, video, music, Midjourney, moderation) and the
 * Video Jobs and Music and Midjourney views, whose unfinished jobs resume after start-up.
 */
export function activateAssets(host: FeatureHost, agent: AgentToolbox): { videoJobs: VideoJobs; taskJobs: TaskJobs; reports: ReportDocuments } {
  const { services, context } = host;
  const ext = context.extensionUri;
  const taskJobs = host.own(new TaskJobs(services, context.workspaceState, (job) => void offerResult(job)));
  // The same media as tools of the chat, each asking with its price (paid media).
  agent.addSource(host.own(new MediaTools(services, taskJobs)));
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => host.command(id, fn);
  const reports = host.own(new ReportDocuments());
  const videoJobs = host.own(new VideoJobs(services, context.workspaceState));
  host.own(vscode.window.createTreeView('modelGateway.videoJobs', { treeDataProvider: videoJobs }));
  host.own(vscode.window.createTreeView('modelGateway.taskJobs', { treeDataProvider: taskJobs }));
  host.afterActivation(() => {
    videoJobs.resumeAll();
    taskJobs.resumeAll();
  });
  const jobId = (arg: unknown) => (typeof arg === 'string' ? arg : (arg as VideoJob | undefined)?.id);
  const taskJobId = (arg: unknown) => (typeof arg === 'string' ? arg : (arg as TaskJob | undefined)?.id);

  reg('modelGateway.assets.generateImage', (args?: unknown) => generateImageCommand(services, args as ImageRequestArgs | undefined));
  reg('modelGateway.assets.generateImageWizard', () => generateImageCommand(services, undefined, { allOptions: true }));
  reg('modelGateway.image.remix', (t, o) => remixImageCommand(services, t, o));
  reg('modelGateway.image.edit', (t, o) => editImageCommand(services, t, o));
  reg('modelGateway.image.replaceBackground', (t, o) => replaceBackgroundCommand(services, t, o));
  reg('modelGateway.image.upscale', (t, o) => upscaleImageCommand(services, t, o));
  reg('modelGateway.image.describe', (t) => describeImageCommand(services, t));
  reg('modelGateway.image.moderate', (t, o) => moderateImageCommand(services, reports, t, o));
  reg('modelGateway.speech.speakSelection', (t, o) => speakCommand(services, ext, 'selection', t, o));
  reg('modelGateway.speech.speakFile', (t, o) => speakCommand(services, ext, 'file', t, o));
  reg('modelGateway.audio.play', (t) => playAudioCommand(services, ext, t));
  reg('modelGateway.audio.transcribe', (t, o) => transcribeCommand(services, 'transcribe', t, o));
  reg('modelGateway.audio.translate', (t, o) => transcribeCommand(services, 'translate', t, o));
  reg('modelGateway.moderation.check', (t, o) => checkModerationCommand(services, reports, t, o));
  reg('modelGateway.video.generate', (o) => generateVideoCommand(services, videoJobs, o));
  reg('modelGateway.videoJobs.cancel', (j) => videoJobs.cancel(jobId(j) ?? ''));
  reg('modelGateway.videoJobs.retry', (j) => videoJobs.retry(jobId(j) ?? ''));
  reg('modelGateway.videoJobs.remove', (j) => videoJobs.remove(jobId(j) ?? ''));
  reg('modelGateway.videoJobs.open', (j) => {
    const file = videoJobs.get(jobId(j) ?? '')?.file;
    return file ? vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file)) : undefined;
  });
  reg('modelGateway.music.generate', (o) => generateMusicCommand(services, taskJobs, o));
  reg('modelGateway.midjourney.imagine', (o) => midjourneyImagineCommand(services, taskJobs, o));
  reg('modelGateway.midjourney.followUp', (j, o) => midjourneyFollowUpCommand(services, taskJobs, j, o));
  reg('modelGateway.taskJobs.retry', (j) => taskJobs.retry(taskJobId(j) ?? ''));
  reg('modelGateway.taskJobs.remove', (j) => taskJobs.remove(taskJobId(j) ?? ''));
  reg('modelGateway.taskJobs.open', (j) => {
    const file = taskJobs.get(taskJobId(j) ?? '')?.files[0];
    if (!file) return undefined;
    return /\.mp3$/i.test(file) ? showAudioPlayer(file, ext) : vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file));
  });

  /** A job's files are in: the song plays, the grid opens with its follow-ups one click away. */
  async function offerResult(job: TaskJob): Promise<void> {
    const shown = job.files.map((f) => vscode.workspace.asRelativePath(f)).join(', ');
    if (job.kind === 'music') {
      await showAudioPlayer(job.files[0], ext);
      void tell(services, 'info', vscode.l10n.t('Music ready: {0}', shown));
      return;
    }
    await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(job.files[0]), {
      preview: false,
      viewColumn: vscode.ViewColumn.Beside,
      preserveFocus: true,
    });
    if (job.buttons?.length) {
      const choice = await tell(services, 'info', vscode.l10n.t('Midjourney grid ready: {0}', shown), vscode.l10n.t('Upscale or Vary…'));
      if (choice) await vscode.commands.executeCommand('modelGateway.midjourney.followUp', job.id);
    } else void tell(services, 'info', vscode.l10n.t('Midjourney image ready: {0}', shown));
  }
  return { videoJobs, taskJobs, reports };
}
