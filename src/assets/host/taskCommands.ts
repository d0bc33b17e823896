import * as vscode from 'vscode';
import { formatCost } from '../../common/money';
import { MJ_PROMPT_LIMIT, SUNO_LIMITS } from '../../common/mediaLimits';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type PricedFeature } from '../../shell/services';
import { assetsFolderOrSay, optionsArg } from './shared';
import type { TaskJob, TaskJobs } from './taskJobs';
import type { SunoMusicRequest } from '../../gateway';

/** What a task model costs per call at this gateway (its `/api/pricing`), or undefined where unpublished. */
export async function perCallPrice(services: PricedFeature, model: string): Promise<number | undefined> {
  const found = (await services.prices.book().catch(() => undefined))?.price(model);
  return found?.price.kind === 'request' && (found.price.perRequest ?? 0) > 0 ? found.price.perRequest : undefined;
}

const priceWords = (dollars: number | undefined, model: string) =>
  dollars !== undefined ? formatCost(dollars) : vscode.l10n.t('the price the gateway sets for {0} (not published)', model);

/** A gateway without the task routes (one-api; new-api without the channel) answers 404: said once, in words. */
function sayUnavailable(services: PricedFeature, err: unknown, what: string): boolean {
  if (!(err instanceof loadGateway().NotFoundError)) return false;
  void tell(services, 'error', vscode.l10n.t('This gateway does not offer {0} (new-api has it where the operator added the channel; one-api does not).', what));
  return true;
}

export interface MusicOptions {
  /** A description: Suno writes the lyrics and the style. */
  description: string;
  /** Or the lyrics, with a style and a title. */
  lyrics: string;
  style: string;
  title: string;
  instrumental: boolean;
}

type MusicMode = 'describe' | 'instrumental' | 'lyrics' | 'selection';

/**
 * "Generate Music": a description (or lyrics, from the selection or typed, with a style and a
 * title), the price asked first, then a Suno task tracked by TaskJobs until its two clips are saved
 * into the assets folder and the player opens. Returns the task id.
 */
export async function generateMusicCommand(services: PricedFeature, jobs: TaskJobs, options?: unknown): Promise<string | undefined> {
  const o = optionsArg<MusicOptions>(options);
  const title = (n: number, what: string) => vscode.l10n.t('Generate Music ({0}/3): {1}', n, what);
  const selection = vscode.window.activeTextEditor?.document.getText(vscode.window.activeTextEditor.selection).trim() ?? '';
  let mode: MusicMode | undefined =
    o.lyrics !== undefined ? 'lyrics' : o.description !== undefined ? (o.instrumental ? 'instrumental' : 'describe') : undefined;
  if (!mode) {
    const modes: (vscode.QuickPickItem & { mode: MusicMode })[] = [
      { label: vscode.l10n.t('Describe the song'), description: vscode.l10n.t('Suno writes the lyrics and picks the style'), mode: 'describe' },
      { label: vscode.l10n.t('Describe an instrumental'), description: vscode.l10n.t('no vocals'), mode: 'instrumental' },
      { label: vscode.l10n.t('Write the lyrics'), description: vscode.l10n.t('your words, a style and a title'), mode: 'lyrics' },
    ];
    if (selection)
      modes.unshift({
        label: vscode.l10n.t('Sing the selected text'),
        description: vscode.l10n.t('{0} characters as lyrics', selection.length),
        mode: 'selection',
      });
    mode = (await vscode.window.showQuickPick(modes, { title: title(1, vscode.l10n.t('how')), ignoreFocusOut: true }))?.mode;
    if (!mode) return undefined;
  }
  const ask = (step: number, what: string, prompt: string, limit: number, value = '') =>
    vscode.window.showInputBox({
      title: title(step, what),
      prompt,
      value,
      ignoreFocusOut: true,
      validateInput: (v) => (!v.trim() ? prompt : v.length > limit ? vscode.l10n.t('At most {0} characters', limit) : undefined),
    });
  let request: SunoMusicRequest;
  let shown: string;
  if (mode === 'describe' || mode === 'instrumental') {
    const description =
      o.description ?? (await ask(2, vscode.l10n.t('description'), vscode.l10n.t('Describe the song: mood, genre, subject'), SUNO_LIMITS.description))?.trim();
    if (!description) return undefined;
    request = { gpt_description_prompt: description, make_instrumental: mode === 'instrumental' };
    shown = description;
  } else {
    const lyrics =
      o.lyrics ??
      (mode === 'selection'
        ? selection
        : (await ask(2, vscode.l10n.t('lyrics'), vscode.l10n.t('The lyrics ([Verse], [Chorus] mark the parts)'), SUNO_LIMITS.lyrics))?.trim());
    if (!lyrics) return undefined;
    if (lyrics.length > SUNO_LIMITS.lyrics) {
      void tell(services, 'error', vscode.l10n.t('The lyrics are {0} characters; Suno takes at most {1}.', lyrics.length, SUNO_LIMITS.lyrics));
      return undefined;
    }
    const style = o.style ?? (await ask(3, vscode.l10n.t('style and title'), vscode.l10n.t('The style (genre, instruments, voice)'), SUNO_LIMITS.tags))?.trim();
    if (!style) return undefined;
    const name =
      o.title ??
      (
        await vscode.window.showInputBox({
          title: title(3, vscode.l10n.t('style and title')),
          prompt: vscode.l10n.t('The title'),
          ignoreFocusOut: true,
          validateInput: (v) => (v.length > SUNO_LIMITS.title ? vscode.l10n.t('At most {0} characters', SUNO_LIMITS.title) : undefined),
        })
      )?.trim();
    if (name === undefined) return undefined;
    request = { prompt: lyrics, tags: style, title: name || undefined, make_instrumental: false };
    shown = name || lyrics.split('\n')[0];
  }
  const price = await perCallPrice(services, 'suno_music');
  // Spending always asks the person: no caller's option skips it.
  const go = await services.prompts.confirm(
    vscode.l10n.t('Generate music for {0}?', priceWords(price, 'suno_music')),
    vscode.l10n.t(
      '“{0}”\n\nSuno makes two clips of the song (about a minute). They are saved into the assets folder and the player opens; the job is kept across a reload.',
      shown.slice(0, 120),
    ),
    vscode.l10n.t('Generate'),
    'info',
  );
  if (!go) return undefined;
  if (!(await assetsFolderOrSay(services, vscode.l10n.t('songs')))) return undefined;
  try {
    const id = await services.client().suno.music(request);
    services.notifySpend();
    await jobs.add({
      kind: 'music',
      id,
      prompt: request.gpt_description_prompt ?? request.prompt ?? '',
      title: request.title ?? shown.slice(0, 60),
      createdAt: Date.now(),
      status: 'SUBMITTED',
      files: [],
    });
    void vscode.commands.executeCommand('modelGateway.taskJobs.focus');
    return id;
  } catch (err) {
    if (!sayUnavailable(services, err, vscode.l10n.t('music (Suno)'))) showGatewayError(services, vscode.l10n.t('Could not start the music'), err);
    return undefined;
  }
}

/**
 * "Midjourney: Imagine": a prompt, the price, then a task tracked until its 2×2 grid is saved into
 * the assets folder; the grid's U1–U4 and V1–V4 follow from the job. Returns the task id.
 */
export async function midjourneyImagineCommand(services: PricedFeature, jobs: TaskJobs, options?: unknown): Promise<string | undefined> {
  const o = optionsArg<{ prompt: string }>(options);
  const prompt =
    o.prompt ??
    (
      await vscode.window.showInputBox({
        title: vscode.l10n.t('Midjourney: Imagine'),
        prompt: vscode.l10n.t('Describe the image (Midjourney parameters such as --ar 16:9 go at the end)'),
        ignoreFocusOut: true,
        validateInput: (v) =>
          !v.trim() ? vscode.l10n.t('Describe the image') : v.length > MJ_PROMPT_LIMIT ? vscode.l10n.t('At most {0} characters', MJ_PROMPT_LIMIT) : undefined,
      })
    )?.trim();
  if (!prompt) return undefined;
  const price = await perCallPrice(services, 'mj_imagine');
  const go = await services.prompts.confirm(
    vscode.l10n.t('Imagine a grid of 4 images for {0}?', priceWords(price, 'mj_imagine')),
    vscode.l10n.t(
      '“{0}”\n\nThe grid is saved into the assets folder (about a minute); then upscale or vary any of the four. The job is kept across a reload.',
      prompt.slice(0, 120),
    ),
    vscode.l10n.t('Imagine'),
    'info',
  );
  if (!go) return undefined;
  if (!(await assetsFolderOrSay(services, vscode.l10n.t('images')))) return undefined;
  try {
    const id = await services.client().midjourney.imagine({ prompt });
    services.notifySpend();
    await jobs.add({ kind: 'midjourney', id, prompt, action: 'IMAGINE', createdAt: Date.now(), status: 'SUBMITTED', files: [] });
    void vscode.commands.executeCommand('modelGateway.taskJobs.focus');
    return id;
  } catch (err) {
    if (!sayUnavailable(services, err, 'Midjourney')) showGatewayError(services, vscode.l10n.t('Could not start Midjourney'), err);
    return undefined;
  }
}

const FOLLOW_UP_MODEL: Record<string, string> = { upsample: 'mj_upscale', variation: 'mj_variation', reroll: 'mj_reroll' };

/**
 * A follow-up of a finished grid: the person picks U1–U4 (one image, upscaled), V1–V4 (four
 * variations of one) or re-roll, each with its price, then confirms. Returns the new task id.
 */
export async function midjourneyFollowUpCommand(services: PricedFeature, jobs: TaskJobs, jobArg: unknown, options?: unknown): Promise<string | undefined> {
  const id = typeof jobArg === 'string' ? jobArg : (jobArg as TaskJob | undefined)?.id;
  const job = id ? jobs.get(id) : undefined;
  if (!job || job.kind !== 'midjourney' || !job.buttons?.length) {
    void tell(services, 'error', vscode.l10n.t('Choose a finished Midjourney grid in the Music and Midjourney view first.'));
    return undefined;
  }
  const kindOf = (customId: string) => /^MJ::JOB::(\w+)::/.exec(customId)?.[1] ?? '';
  const prices = new Map<string, number | undefined>();
  for (const model of new Set(job.buttons.map((b) => FOLLOW_UP_MODEL[kindOf(b.customId)]).filter(Boolean)))
    prices.set(model, await perCallPrice(services, model));
  const o = optionsArg<{ label: string }>(options);
  const items = job.buttons.map((b) => {
    const model = FOLLOW_UP_MODEL[kindOf(b.customId)];
    const what =
      kindOf(b.customId) === 'upsample'
        ? vscode.l10n.t('upscale image {0}', b.label.slice(1))
        : kindOf(b.customId) === 'variation'
          ? vscode.l10n.t('vary image {0}', b.label.slice(1))
          : vscode.l10n.t('a new grid from the same prompt');
    return { label: b.label, description: `${what} · ${model ? priceWords(prices.get(model), model) : ''}`, button: b, model };
  });
  const picked = o.label
    ? items.find((i) => i.label === o.label)
    : await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Upscale or vary “{0}”', job.prompt.slice(0, 40)), ignoreFocusOut: true });
  if (!picked) return undefined;
  const go = await services.prompts.confirm(
    vscode.l10n.t('{0} for {1}?', picked.label, priceWords(prices.get(picked.model), picked.model ?? 'Midjourney')),
    picked.description,
    vscode.l10n.t('Go'),
    'info',
  );
  if (!go) return undefined;
  try {
    const next = await services.client().midjourney.action(job.id, picked.button.customId);
    services.notifySpend();
    await jobs.add({
      kind: 'midjourney',
      id: next,
      prompt: job.prompt,
      action: kindOf(picked.button.customId).toUpperCase(),
      label: picked.label,
      createdAt: Date.now(),
      status: 'SUBMITTED',
      files: [],
    });
    return next;
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not start the follow-up'), err);
    return undefined;
  }
}
