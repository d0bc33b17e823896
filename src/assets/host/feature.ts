import * as vscode from 'vscode';
import type { AgentToolbox } from '../../agent/host/toolbox';
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

/** The media commands (images, speech, transcripts, video, moderation) and the Video Jobs view, whose unfinished jobs resume after start-up. */
export function activateAssets(host: FeatureHost, agent: AgentToolbox): { videoJobs: VideoJobs; reports: ReportDocuments } {
  const { services, context } = host;
  // The same media as tools of the chat, each asking with its price (paid media).
  agent.addSource(host.own(new MediaTools(services)));
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => host.command(id, fn);
  const reports = host.own(new ReportDocuments());
  const videoJobs = host.own(new VideoJobs(services, context.workspaceState));
  host.own(vscode.window.createTreeView('modelGateway.videoJobs', { treeDataProvider: videoJobs }));
  host.afterActivation(() => videoJobs.resumeAll());
  const ext = context.extensionUri;
  const jobId = (arg: unknown) => (typeof arg === 'string' ? arg : (arg as VideoJob | undefined)?.id);

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
  return { videoJobs, reports };
}
