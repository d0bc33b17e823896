import * as vscode from 'vscode';
import type { ImageResult, LegacyModel, RenderingSpeed } from '../../gateway';
import { showGatewayError, tell } from '../../shell/errors';
import { assetSettings } from '../../shell/config';
import { loadGateway, type InteractiveFeature } from '../../shell/services';
import { resultPath } from '../core/names';
import { assetsFolderOrSay, openFile, pickOne, slug } from './shared';

/** What the wizard asks for; a caller (a test) may pass it whole and skip the questions. */
export interface ImageRequestArgs {
  prompt: string;
  /** `V_3` for the newest generation, or a legacy model. */
  model: 'V_3' | LegacyModel;
  rendering_speed?: RenderingSpeed;
  aspect_ratio?: string;
  num_images?: number;
  style_type?: string;
  magic_prompt?: 'AUTO' | 'ON' | 'OFF';
  negative_prompt?: string;
  seed?: number;
}

export interface ImageOutcome {
  files: string[];
  unsafe: number;
  priceDollars: number | undefined;
}

const LEGACY_RATIO: Record<string, string> = {
  '1x1': 'ASPECT_1_1',
  '16x9': 'ASPECT_16_9',
  '9x16': 'ASPECT_9_16',
  '3x2': 'ASPECT_3_2',
  '2x3': 'ASPECT_2_3',
  '4x3': 'ASPECT_4_3',
  '3x4': 'ASPECT_3_4',
  '16x10': 'ASPECT_16_10',
  '10x16': 'ASPECT_10_16',
  '3x1': 'ASPECT_3_1',
  '1x3': 'ASPECT_1_3',
};

/** The quick path's choices: the default model, its default speed, square, one image. */
function quickArgs(services: InteractiveFeature, prompt: string): ImageRequestArgs {
  const gw = loadGateway();
  const preferred = services.settings().defaultModels.image;
  const model = (gw.LEGACY_MODELS as readonly string[]).includes(preferred) ? (preferred as LegacyModel) : 'V_3';
  return {
    prompt,
    model,
    rendering_speed: model === 'V_3' ? 'DEFAULT' : undefined,
    aspect_ratio: '1x1',
    num_images: 1,
    style_type: 'AUTO',
    magic_prompt: 'AUTO',
  };
}

/**
 * The quick path: the prompt, then the price. Enter takes the defaults (said in the title); the
 * gear button, or *Generate Image (All Options)*, opens the full wizard with the prompt kept.
 */
async function askQuick(services: InteractiveFeature): Promise<{ prompt: string; allOptions: boolean } | undefined> {
  const gw = loadGateway();
  const defaults = quickArgs(services, '');
  const price =
    defaults.model === 'V_3'
      ? gw.imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: 'DEFAULT' })
      : gw.imagePrice({ generation: 'legacy', operation: 'generate', model: defaults.model });
  const box = vscode.window.createInputBox();
  box.title = vscode.l10n.t('Generate Image');
  box.prompt = vscode.l10n.t(
    'Describe the image. Enter: {0}, 1x1, one image (${1}; the price is confirmed next). The gear: all options.',
    defaults.model === 'V_3' ? 'V3 DEFAULT' : defaults.model,
    price?.toFixed(3) ?? '?',
  );
  box.placeholder = vscode.l10n.t('A paper boat on a pond, watercolour');
  box.ignoreFocusOut = true;
  const allOptions: vscode.QuickInputButton = {
    iconPath: new vscode.ThemeIcon('settings-gear'),
    tooltip: vscode.l10n.t('All options (model, speed, ratio, count, style, seed)…'),
  };
  box.buttons = [allOptions];
  return new Promise((resolve) => {
    let done = false;
    const finish = (value: { prompt: string; allOptions: boolean } | undefined) => {
      if (done) return;
      done = true;
      resolve(value);
      box.dispose();
    };
    box.onDidChangeValue(() => (box.validationMessage = undefined));
    box.onDidAccept(() => {
      if (!box.value.trim()) box.validationMessage = vscode.l10n.t('Describe the image');
      else finish({ prompt: box.value.trim(), allOptions: false });
    });
    box.onDidTriggerButton(() => finish({ prompt: box.value.trim(), allOptions: true }));
    box.onDidHide(() => finish(undefined));
    box.show();
  });
}

/** The wizard: every choice has a sensible default first, so Enter all the way works. */
async function askImageArgs(services: InteractiveFeature, given?: string): Promise<ImageRequestArgs | undefined> {
  const gw = loadGateway();
  const title = (n: number, what: string) => vscode.l10n.t('Generate Image ({0}/8): {1}', n, what);
  const prompt =
    given ||
    (await vscode.window.showInputBox({
      title: title(1, vscode.l10n.t('prompt')),
      prompt: vscode.l10n.t('Describe the image'),
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Describe the image')),
    }));
  if (!prompt) return undefined;
  const preferred = services.settings().defaultModels.image || 'V_3';
  const models = ['V_3', ...gw.LEGACY_MODELS].sort((a, b) => Number(b === preferred) - Number(a === preferred));
  const model = await pickOne(
    title(2, vscode.l10n.t('model')),
    models.map((m) => ({
      label: m,
      description:
        m === 'V_3'
          ? vscode.l10n.t('newest generation')
          : vscode.l10n.t('${0} an image', gw.imagePrice({ generation: 'legacy', operation: 'generate', model: m as LegacyModel }) ?? '?'),
    })),
  );
  if (!model) return undefined;
  let rendering_speed: RenderingSpeed | undefined;
  if (model === 'V_3') {
    rendering_speed = await pickOne(
      title(3, vscode.l10n.t('speed')),
      gw.RENDERING_SPEEDS.map((s) => ({
        label: s,
        description: vscode.l10n.t('${0} an image', gw.imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: s }) ?? '?'),
      })).sort((a, b) => Number(b.label === 'DEFAULT') - Number(a.label === 'DEFAULT')),
    );
    if (!rendering_speed) return undefined;
  }
  const ratios = model === 'V_3' ? [...gw.V3_ASPECT_RATIOS] : Object.keys(LEGACY_RATIO);
  const aspect_ratio = await pickOne(
    title(4, vscode.l10n.t('aspect ratio')),
    ratios.sort((a, b) => Number(b === '1x1') - Number(a === '1x1')).map((r) => ({ label: r })),
  );
  if (!aspect_ratio) return undefined;
  const count = await vscode.window.showInputBox({
    title: title(5, vscode.l10n.t('number of images')),
    value: '1',
    ignoreFocusOut: true,
    validateInput: (v) => (/^[1-8]$/.test(v.trim()) ? undefined : vscode.l10n.t('From 1 to 8')),
  });
  if (!count) return undefined;
  const styles = model === 'V_3' ? ['AUTO', 'GENERAL', 'REALISTIC', 'DESIGN'] : ['AUTO', 'GENERAL', 'REALISTIC', 'DESIGN', 'RENDER_3D', 'ANIME'];
  const style_type = await pickOne(
    title(6, vscode.l10n.t('style')),
    styles.map((s) => ({ label: s })),
  );
  if (!style_type) return undefined;
  const magic_prompt = await pickOne(title(7, vscode.l10n.t('magic prompt (let the model expand the prompt)')), [
    { label: 'AUTO' as const },
    { label: 'ON' as const },
    { label: 'OFF' as const },
  ]);
  if (!magic_prompt) return undefined;
  const extra = await vscode.window.showInputBox({
    title: title(8, vscode.l10n.t('options')),
    prompt: vscode.l10n.t('Optional: a negative prompt, and/or seed=NUMBER (0 to 2147483647). Leave empty for none.'),
    ignoreFocusOut: true,
    validateInput: (v) => {
      const m = /seed=(\S+)/.exec(v);
      return m && !(/^\d+$/.test(m[1]) && Number(m[1]) <= 2147483647) ? vscode.l10n.t('seed must be a whole number from 0 to 2147483647') : undefined;
    },
  });
  if (extra === undefined) return undefined;
  const seedMatch = /seed=(\d+)/.exec(extra);
  const negative = extra.replace(/seed=\S+/, '').trim();
  return {
    prompt: prompt.trim(),
    model: model as ImageRequestArgs['model'],
    rendering_speed,
    aspect_ratio,
    num_images: Number(count),
    style_type,
    magic_prompt,
    negative_prompt: negative || undefined,
    seed: seedMatch ? Number(seedMatch[1]) : undefined,
  };
}

/**
 * "Generate Image": asks for the prompt and options, shows the price before spending, generates,
 * saves the images into the assets folder with readable names (prompt and seed), and opens the
 * first one. Results marked unsafe are reported, never saved as broken files.
 */
export async function generateImageCommand(
  services: InteractiveFeature,
  given?: ImageRequestArgs,
  options: { allOptions?: boolean } = {},
): Promise<ImageOutcome | undefined> {
  const gw = loadGateway();
  let args: ImageRequestArgs | undefined;
  if (given?.prompt) args = given;
  else if (options.allOptions) args = await askImageArgs(services);
  else {
    const quick = await askQuick(services);
    if (!quick) return undefined;
    args = quick.allOptions ? await askImageArgs(services, quick.prompt) : quickArgs(services, quick.prompt);
  }
  if (!args) return undefined;
  const n = args.num_images ?? 1;
  const priceDollars =
    args.model === 'V_3'
      ? gw.imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: args.rendering_speed, num_images: n })
      : gw.imagePrice({ generation: 'legacy', operation: 'generate', model: args.model, num_images: n });
  // Spending always asks the person: no caller's option skips it.
  const go = await services.prompts.confirm(
    n === 1
      ? vscode.l10n.t('Generate 1 image for ${0}?', priceDollars?.toFixed(3) ?? '?')
      : vscode.l10n.t('Generate {0} images for ${1}?', n, priceDollars?.toFixed(3) ?? '?'),
    `“${args.prompt}” · ${args.model === 'V_3' ? `V3 ${args.rendering_speed ?? 'DEFAULT'}` : args.model} · ${args.aspect_ratio ?? '1x1'}`,
    vscode.l10n.t('Generate'),
    'info',
  );
  if (!go) return undefined;
  const dir = await assetsFolderOrSay(services, vscode.l10n.t('images'));
  if (!dir) return undefined;
  try {
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Generating images…'), cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        const client = services.client();
        let result: ImageResult;
        if (args.model === 'V_3') {
          result = await client.imagegen.v3.generate(
            {
              prompt: args.prompt,
              rendering_speed: args.rendering_speed,
              aspect_ratio: args.aspect_ratio as never,
              num_images: n,
              style_type: args.style_type as never,
              magic_prompt: args.magic_prompt,
              negative_prompt: args.negative_prompt,
              seed: args.seed,
            },
            { signal: abort.signal },
          );
        } else {
          result = await client.imagegen.legacy.generate(
            {
              image_request: {
                prompt: args.prompt,
                model: args.model,
                aspect_ratio: (LEGACY_RATIO[args.aspect_ratio ?? '1x1'] ?? 'ASPECT_1_1') as never,
                num_images: n,
                style_type: args.style_type as never,
                magic_prompt_option: args.magic_prompt,
                negative_prompt: args.negative_prompt,
                seed: args.seed,
              },
            },
            { signal: abort.signal },
          );
        }
        services.notifySpend();
        const { files, unsafe } = await saveImages(services, result, dir, (item) => `${slug(args.prompt)}-${seedPart(item) ?? 'x'}`, progress, abort.signal);
        if (files[0]) await openFile(files[0]);
        services.log.info(`generated ${files.length} image(s) for $${priceDollars?.toFixed(3)}`);
        return { files, unsafe, priceDollars };
      },
    );
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not generate the image'), err);
    return undefined;
  }
}

/** An image's seed as a file name part (the gateway's number: a name part only, like every word of its own). */
export function seedPart(item: { seed?: number | null }): string | undefined {
  return item.seed != null ? slug(String(item.seed), 16) : undefined;
}

/**
 * Saves the images of a result into `dir`, named by `name`, and reports unsafe ones (never saved
 * as broken files). Each file is written atomically.
 */
export async function saveImages(
  services: InteractiveFeature,
  result: ImageResult,
  dir: string,
  name: (item: ImageResult['data'][number], index: number) => string,
  progress: vscode.Progress<{ message?: string }>,
  signal: AbortSignal,
): Promise<{ files: string[]; unsafe: number }> {
  const files: string[] = [];
  let unsafe = 0;
  for (const [i, item] of result.data.entries()) {
    if (item.is_image_safe === false || !item.url) {
      unsafe++;
      continue;
    }
    progress.report({ message: vscode.l10n.t('saving {0} of {1}', i + 1, result.data.length) });
    const target = await resultPath(dir, name(item, i), '.png');
    await (await services.client().imagegen.download(item.url, { signal })).toFile(target, assetSettings().downloadLimit);
    files.push(target);
  }
  if (unsafe > 0)
    void tell(services, 'warning', vscode.l10n.t('{0} of {1} images were marked unsafe by the gateway and not saved.', unsafe, result.data.length));
  return { files, unsafe };
}
