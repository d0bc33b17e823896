import { readFile } from 'node:fs/promises';
import { basename, dirname, extname } from 'node:path';
import * as vscode from 'vscode';
import type { ImageResult, RenderingSpeed } from '../../gateway';
import { blackShare, decodePng, pngSize } from '../core/png';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type InteractiveFeature } from '../../shell/services';
import { askInteger, assetsFolderOrSay, IMAGE_FILE_EXTENSIONS, openFile, optionsArg, pickOne, targetFile } from './shared';
import { saveImages, seedPart, type ImageOutcome } from './images';
import { imageInput, moderate, type ModerationOptions, type ModerationOutcome } from './moderation';
import type { ReportDocuments } from './reports';

/** What the image actions ask for; a caller (a test) may pass any of it and skip those questions. */
export interface ImageActionOptions {
  prompt: string;
  /** Remix: how close to stay to the source, 1 to 100. */
  weight: number;
  rendering_speed: RenderingSpeed;
  /** Edit: the mask file (black = edit, white = keep). */
  mask: string;
  /** Edit: V_3, or a legacy model (only V_2 and V_2_TURBO can edit). */
  model: string;
  /** Upscale: 1 to 100 each. */
  resemblance: number;
  detail: number;
}

type Op = 'remix' | 'edit' | 'replace-background' | 'upscale';

const opTitle = (op: Op): string =>
  ({
    remix: vscode.l10n.t('Remix Image'),
    edit: vscode.l10n.t('Edit Image with Mask'),
    'replace-background': vscode.l10n.t('Replace Background'),
    upscale: vscode.l10n.t('Upscale Image'),
  })[op];

async function askPrompt(title: string, prompt: string): Promise<string | undefined> {
  const text = await vscode.window.showInputBox({ title, prompt, ignoreFocusOut: true, validateInput: (v) => (v.trim() ? undefined : prompt) });
  return text?.trim() || undefined;
}

async function askSpeed(title: string, operation: 'remix' | 'edit' | 'replace-background'): Promise<RenderingSpeed | undefined> {
  const gw = loadGateway();
  return pickOne(
    title,
    [...gw.RENDERING_SPEEDS]
      .sort((a, b) => Number(b === 'DEFAULT') - Number(a === 'DEFAULT'))
      .map((s) => ({ label: s, description: vscode.l10n.t('${0} an image', gw.imagePrice({ generation: 'v3', operation, rendering_speed: s }) ?? '?') })),
  );
}

/** The mask rule of the spec, checked locally where the files allow it (PNG): same size, ≥10% black. */
export function maskProblem(image: Buffer, mask: Buffer): string | undefined {
  const decoded = decodePng(mask);
  if (!decoded) return undefined;
  const size = pngSize(image);
  if (size && (size.width !== decoded.width || size.height !== decoded.height)) {
    return vscode.l10n.t('the mask is {0}x{1} but the image is {2}x{3}; they must be the same size', decoded.width, decoded.height, size.width, size.height);
  }
  const share = blackShare(decoded);
  if (share < 0.1)
    return vscode.l10n.t("the mask's black (edit) region covers {0}% of the image; it must cover at least 10% (white is kept)", (share * 100).toFixed(1));
  return undefined;
}

/**
 * Remix, edit, replace background and upscale share one flow: ask what is missing, show the
 * price, run, save the results beside the source name in the assets folder, open the first.
 */
async function transformImage(services: InteractiveFeature, op: Op, target: unknown, options: unknown): Promise<ImageOutcome | undefined> {
  const gw = loadGateway();
  const title = opTitle(op);
  const uri = targetFile(services, target, IMAGE_FILE_EXTENSIONS, vscode.l10n.t('an image (PNG, JPEG or WEBP)'));
  if (!uri) return undefined;
  const image = uri.fsPath;
  const o = optionsArg<ImageActionOptions>(options);
  let run: (signal: AbortSignal) => Promise<ImageResult>;
  let price: number | undefined;
  let detail: string;
  if (op === 'upscale') {
    const resemblance =
      o.resemblance ??
      (await askInteger(vscode.l10n.t('{0} (1/2): resemblance', title), vscode.l10n.t('How closely to keep the original, 1 to 100'), 1, 100, 50));
    if (resemblance === undefined) return undefined;
    const detailLevel =
      o.detail ?? (await askInteger(vscode.l10n.t('{0} (2/2): detail', title), vscode.l10n.t('How much detail to add, 1 to 100'), 1, 100, 50));
    if (detailLevel === undefined) return undefined;
    price = gw.imagePrice({ generation: 'legacy', operation: 'upscale' });
    detail = `resemblance ${resemblance}, detail ${detailLevel}; doubles the resolution`;
    run = (signal) => services.client().imagegen.legacy.upscale({ image_file: image, image_request: { resemblance, detail: detailLevel } }, { signal });
  } else {
    let mask: string | undefined;
    let model = 'V_3';
    if (op === 'edit') {
      mask = o.mask ?? (await askMask(image));
      if (!mask) return undefined;
      const problem = maskProblem(await readFile(image), await readFile(mask));
      if (problem) {
        void tell(services, 'error', vscode.l10n.t('{0}: {1}.', title, problem));
        return undefined;
      }
      model =
        o.model ??
        (await pickOne(vscode.l10n.t('{0}: model', title), [
          { label: 'V_3', description: vscode.l10n.t('newest generation') },
          ...gw.LEGACY_EDIT_MODELS.map((m) => ({
            label: m,
            description: vscode.l10n.t('${0} an image', gw.imagePrice({ generation: 'legacy', operation: 'edit', model: m }) ?? '?'),
          })),
        ])) ??
        '';
      if (!model) return undefined;
    }
    const prompt =
      o.prompt ??
      (await askPrompt(
        vscode.l10n.t('{0}: prompt', title),
        op === 'replace-background'
          ? vscode.l10n.t('Describe the new background')
          : op === 'edit'
            ? vscode.l10n.t('Describe what to put in the black region of the mask')
            : vscode.l10n.t('Describe the new image'),
      ));
    if (!prompt) return undefined;
    const weight =
      op === 'remix'
        ? (o.weight ?? (await askInteger(vscode.l10n.t('{0}: weight', title), vscode.l10n.t('How closely to follow the source image, 1 to 100'), 1, 100, 50)))
        : undefined;
    if (op === 'remix' && weight === undefined) return undefined;
    const speed = model === 'V_3' ? (o.rendering_speed ?? (await askSpeed(vscode.l10n.t('{0}: speed', title), op))) : undefined;
    if (model === 'V_3' && !speed) return undefined;
    if (model !== 'V_3') {
      price = gw.imagePrice({ generation: 'legacy', operation: 'edit', model: model as 'V_2' });
      detail = `“${prompt}” · ${model}`;
      run = (signal) => services.client().imagegen.legacy.edit({ prompt, model: model as 'V_2', image_file: image, mask: mask! }, { signal });
    } else {
      price = gw.imagePrice({ generation: 'v3', operation: op, rendering_speed: speed });
      detail = `“${prompt}” · V3 ${speed}${weight !== undefined ? ` · weight ${weight}` : ''}`;
      // The client is built when the request runs, inside the error handling below.
      run = (signal) => {
        const v3 = services.client().imagegen.v3;
        return op === 'remix'
          ? v3.remix({ prompt, image, image_weight: weight, rendering_speed: speed }, { signal })
          : op === 'edit'
            ? v3.edit({ prompt, image, mask: mask!, rendering_speed: speed }, { signal })
            : v3.replaceBackground({ prompt, image, rendering_speed: speed }, { signal });
      };
    }
  }
  // Spending always asks the person: no caller's option skips it.
  if (
    !(await services.prompts.confirm(
      vscode.l10n.t('{0} for ${1}?', title, price?.toFixed(3) ?? '?'),
      `${basename(image)} · ${detail}`,
      vscode.l10n.t('Go'),
      'info',
    ))
  )
    return undefined;
  const dir = await assetsFolderOrSay(services, vscode.l10n.t('images'));
  if (!dir) return undefined;
  try {
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `${title}…`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        const result = await run(abort.signal);
        services.notifySpend();
        const stem = basename(image, extname(image));
        const { files, unsafe } = await saveImages(
          services,
          result,
          dir,
          (item) => [stem, op, seedPart(item)].filter(Boolean).join('-'),
          progress,
          abort.signal,
        );
        if (files[0]) await openFile(files[0]);
        services.log.info(`${op}: saved ${files.length} image(s) for $${price?.toFixed(3)}`);
        return { files, unsafe, priceDollars: price };
      },
    );
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('{0} failed', title), err);
    return undefined;
  }
}

async function askMask(image: string): Promise<string | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title: vscode.l10n.t('Choose the mask: black marks the region to edit (at least 10%), white is kept'),
    defaultUri: vscode.Uri.file(dirname(image)),
    canSelectMany: false,
    filters: { Images: ['png', 'jpg', 'jpeg', 'webp'] },
    openLabel: vscode.l10n.t('Use as Mask'),
  });
  return picked?.[0]?.fsPath;
}

export const remixImageCommand = (s: InteractiveFeature, t?: unknown, o?: unknown) => transformImage(s, 'remix', t, o);
export const editImageCommand = (s: InteractiveFeature, t?: unknown, o?: unknown) => transformImage(s, 'edit', t, o);
export const replaceBackgroundCommand = (s: InteractiveFeature, t?: unknown, o?: unknown) => transformImage(s, 'replace-background', t, o);
export const upscaleImageCommand = (s: InteractiveFeature, t?: unknown, o?: unknown) => transformImage(s, 'upscale', t, o);

/**
 * "Describe Image": the gateway's descriptions in a list; picking one copies it. Returns without
 * waiting for the pick, so the descriptions also reach a caller at once.
 */
export async function describeImageCommand(services: InteractiveFeature, target?: unknown): Promise<string[] | undefined> {
  const uri = targetFile(services, target, IMAGE_FILE_EXTENSIONS, vscode.l10n.t('an image (PNG, JPEG or WEBP)'));
  if (!uri) return undefined;
  try {
    const descriptions = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Describing {0}…', basename(uri.fsPath)) },
      () => services.client().imagegen.legacy.describe({ image_file: uri.fsPath }),
    );
    services.notifySpend();
    if (descriptions.length === 0) {
      void tell(services, 'info', vscode.l10n.t('The gateway gave no description of {0}.', basename(uri.fsPath)));
      return [];
    }
    const items: (vscode.QuickPickItem & { text: string })[] = descriptions.map((text) => ({ label: text, text }));
    if (descriptions.length > 1) items.push({ label: vscode.l10n.t('$(copy) Copy all'), text: descriptions.join('\n\n') });
    void services.prompts
      .pick(items, { title: vscode.l10n.t('Descriptions of {0}: pick one to copy it', basename(uri.fsPath)), matchOnDetail: true })
      .then(async (picked) => {
        if (!picked) return;
        await vscode.env.clipboard.writeText(picked.text);
        void tell(services, 'info', vscode.l10n.t('Description copied to the clipboard.'));
      });
    return descriptions;
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not describe the image'), err);
    return undefined;
  }
}

/** "Moderate Image": the multimodal moderation model on the image file. */
export async function moderateImageCommand(
  services: InteractiveFeature,
  reports: ReportDocuments,
  target?: unknown,
  options?: unknown,
): Promise<ModerationOutcome | undefined> {
  const uri = targetFile(services, target, IMAGE_FILE_EXTENSIONS, vscode.l10n.t('an image (PNG, JPEG or WEBP)'));
  if (!uri) return undefined;
  try {
    return await moderate(services, reports, basename(uri.fsPath), await imageInput(uri.fsPath), optionsArg<ModerationOptions>(options));
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not moderate the image'), err);
    return undefined;
  }
}
