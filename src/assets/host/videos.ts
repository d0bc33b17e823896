import { basename } from 'node:path';
import * as vscode from 'vscode';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type InteractiveFeature } from '../../shell/services';
import { assetsFolderOrSay, imageDataUri, optionsArg, pickModel, pickOne } from './shared';
import type { VideoJobs } from './videoJobs';

export interface VideoOptions {
  prompt: string;
  model: string;
  seconds: string;
  size: string;
  /** A workspace image for image-to-video. */
  reference: string;
}

const KNOWN_VIDEO_MODELS = [
  'sora-2',
  'sora-2-pro',
  'veo-3.1-generate-preview',
  'veo-3.1-fast-generate-preview',
  'veo-3.0-generate-001',
  'veo-3.0-fast-generate-001',
];

async function askReference(): Promise<string | undefined | null> {
  const choice = await vscode.window.showQuickPick(
    [
      { label: vscode.l10n.t('No reference image'), description: vscode.l10n.t('text to video'), reference: false },
      { label: vscode.l10n.t('Choose an image…'), description: vscode.l10n.t('image to video: the video starts from it'), reference: true },
    ],
    { title: vscode.l10n.t('Generate Video (5/5): reference image'), ignoreFocusOut: true },
  );
  if (!choice) return null;
  if (!choice.reference) return undefined;
  const picked = await vscode.window.showOpenDialog({
    title: vscode.l10n.t('Reference image (PNG, JPEG or WEBP, at most 20 MB)'),
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    filters: { Images: ['png', 'jpg', 'jpeg', 'webp'] },
    canSelectMany: false,
  });
  return picked?.[0]?.fsPath ?? null;
}

/**
 * "Generate Video": prompt, model, the model family's durations and sizes, an optional reference
 * image; a notice before creating; then the job is tracked by VideoJobs (polled, persisted,
 * downloaded into the assets folder). Returns the job id.
 */
export async function generateVideoCommand(services: InteractiveFeature, jobs: VideoJobs, options?: unknown): Promise<string | undefined> {
  const gw = loadGateway();
  const o = optionsArg<VideoOptions>(options);
  const title = (n: number, what: string) => vscode.l10n.t('Generate Video ({0}/5): {1}', n, what);
  const prompt =
    o.prompt ??
    (
      await vscode.window.showInputBox({
        title: title(1, vscode.l10n.t('prompt')),
        prompt: vscode.l10n.t('Describe the video'),
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Describe the video')),
      })
    )?.trim();
  if (!prompt) return undefined;
  const model =
    o.model ?? (await pickModel(services, 'video', title(2, vscode.l10n.t('model')), /sora|veo|video|kling|hailuo|wan|seedance|vidu/i, KNOWN_VIDEO_MODELS));
  if (!model) return undefined;
  const family = gw.videoFamilyOf(model);
  const seconds =
    o.seconds ??
    (family
      ? await pickOne(
          title(3, vscode.l10n.t('duration')),
          family.seconds.map((s) => ({ label: s, description: vscode.l10n.t('seconds') })),
        )
      : undefined);
  if (family && !seconds) return undefined;
  const size =
    o.size ??
    (family
      ? await pickOne(
          title(4, vscode.l10n.t('size')),
          family.sizes.map((s) => ({ label: s })),
        )
      : undefined);
  if (family && !size) return undefined;
  const reference = 'reference' in o ? o.reference : o.prompt !== undefined ? undefined : await askReference();
  if (reference === null) return undefined;
  let input_reference: string | undefined;
  if (reference) {
    try {
      input_reference = await imageDataUri(reference);
    } catch (err) {
      void tell(services, 'error', vscode.l10n.t('The reference image cannot be used: {0}.', err instanceof Error ? err.message : String(err)));
      return undefined;
    }
  }
  // Spending always asks the person: no caller's option skips it.
  const shape = [model, seconds && `${seconds} s`, size, reference && `from ${basename(reference)}`].filter(Boolean).join(' · ');
  const go = await services.prompts.confirm(
    vscode.l10n.t('Create this video?'),
    vscode.l10n.t(
      '{0}\n\nVideo is billed per task by model, duration and size (the gateway lists the rate with the model). Generation usually takes 1 to 5 minutes; you can close the window, the job resumes and downloads when you come back.',
      shape,
    ),
    vscode.l10n.t('Create'),
    'info',
  );
  if (!go) return undefined;
  if (!(await assetsFolderOrSay(services, vscode.l10n.t('videos')))) return undefined;
  try {
    const task = await services.client().videos.create({ model, prompt, seconds, size, input_reference });
    services.notifySpend();
    await jobs.add({ id: task.id, model, prompt, seconds, size, createdAt: Date.now(), status: task.status, progress: task.progress });
    void vscode.commands.executeCommand('modelGateway.videoJobs.focus');
    return task.id;
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not create the video'), err);
    return undefined;
  }
}
