import { stat } from 'node:fs/promises';
import * as vscode from 'vscode';
import * as z from 'zod/mini';
import type { ActionApprover } from '../../runtime/core/approval';
import { runsUnasked, type ToolCategory } from '../../runtime/core/autoApproval';
import { agentSettings } from '../../runtime/host/agentSettings';
import type { ToolSource } from '../../runtime/host/toolbox';
import { objectArgs } from '../../runtime/host/toolCalls';
import { formatCost } from '../../common/money';
import { MAX_SPEECH_INPUT, MJ_PROMPT_LIMIT, SUNO_LIMITS } from '../../common/mediaLimits';
import { loadGateway, type PricedFeature } from '../../shell/services';
import { workspaceGuard } from '../../shell/workspaceGuard';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import { ASPECTS, MEDIA_TOOL_DEFINITIONS as DEFINITIONS } from '../core/mediaDefinitions';
import { assetSettings } from '../../shell/config';
import { resultPath } from '../core/names';
import { seedPart } from './images';
import { assetsFolder, slug } from './shared';
import { counted } from '../../shell/listeners';
import type { TaskJobs } from './taskJobs';
import { perCallPrice } from './taskCommands';

const Args = {
  generate_image: z.object({ prompt: z.string().check(z.minLength(1), z.maxLength(4000)), aspect_ratio: z.optional(z.enum(ASPECTS)) }),
  text_to_speech: z.object({ text: z.string().check(z.minLength(1), z.maxLength(MAX_SPEECH_INPUT)), voice: z.optional(z.string()) }),
  transcribe_audio: z.object({ path: z.string().check(z.minLength(1)) }),
  moderate_text: z.object({ text: z.string().check(z.minLength(1), z.maxLength(32_000)) }),
  generate_music: z
    .object({
      description: z.optional(z.string().check(z.maxLength(SUNO_LIMITS.description))),
      lyrics: z.optional(z.string().check(z.maxLength(SUNO_LIMITS.lyrics))),
      style: z.optional(z.string().check(z.maxLength(SUNO_LIMITS.tags))),
      title: z.optional(z.string().check(z.maxLength(SUNO_LIMITS.title))),
      instrumental: z.optional(z.boolean()),
    })
    .check(z.refine((a) => !!(a.description?.trim() || a.lyrics?.trim()), { message: 'give description or lyrics' })),
  midjourney_imagine: z.object({ prompt: z.string().check(z.minLength(1), z.maxLength(MJ_PROMPT_LIMIT)) }),
};
type MediaTool = keyof typeof Args;

/**
 * The gateway's media in the chat: an image or speech generated into the workspace, a workspace
 * audio file transcribed, a text moderated. Each call spends the person's balance, so each asks
 * with its price (in the chat's approval bar) unless paid media run unasked
 * (`modelGateway.agent.autoApprove.paidMedia`, off by default, a user setting).
 */
export class MediaTools implements ToolSource, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = counted('mediaTools.onDidChange', this.changed.event);

  constructor(
    private readonly services: PricedFeature,
    private readonly taskJobs: TaskJobs,
  ) {}

  dispose(): void {
    this.changed.dispose();
  }

  definitions(): ToolDefinition[] {
    return DEFINITIONS;
  }

  owns(name: string): boolean {
    return name in Args;
  }

  category(): ToolCategory {
    return { kind: 'paid' };
  }

  /** What the call costs, as the person is told before it runs. */
  private async price(name: MediaTool, args: Record<string, unknown>): Promise<string> {
    const gw = loadGateway();
    const settings = this.services.settings().defaultModels;
    if (name === 'generate_music' || name === 'midjourney_imagine') {
      const model = name === 'generate_music' ? 'suno_music' : 'mj_imagine';
      const dollars = await perCallPrice(this.services, model);
      return dollars !== undefined
        ? vscode.l10n.t('{0} ({1})', formatCost(dollars), model)
        : vscode.l10n.t('the price the gateway sets for {0} (not published)', model);
    }
    if (name === 'generate_image')
      return vscode.l10n.t(
        '{0} (one V3 image)',
        formatCost(gw.imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: 'DEFAULT', num_images: 1 }) ?? 0),
      );
    const model = name === 'text_to_speech' ? settings.speech : name === 'transcribe_audio' ? settings.transcription : 'omni-moderation-latest';
    const book = await this.services.prices.book().catch(() => undefined);
    const found = model ? book?.price(model) : undefined;
    if (!found)
      return name === 'moderate_text'
        ? vscode.l10n.t('the price the gateway sets for moderation (often free)')
        : model
          ? vscode.l10n.t('the price the gateway sets for {0} (not published)', model)
          : vscode.l10n.t('the price the gateway sets for the model (not published)');
    if (found.price.kind === 'request') return vscode.l10n.t('{0} a request', formatCost(found.price.perRequest ?? 0));
    const chars = typeof args.text === 'string' ? args.text.length : 0;
    return name === 'transcribe_audio'
      ? vscode.l10n.t("{0}'s price by the length of the audio", model)
      : vscode.l10n.t('about {0} ({1} characters)', formatCost((Math.ceil(chars / 4) * (found.price.inputPerMTok ?? 0)) / 1e6), chars);
  }

  async run(
    name: string,
    rawArgs: string,
    approver: ActionApprover,
    callId: string | undefined,
    signal: AbortSignal | undefined,
    paused: boolean,
  ): Promise<ToolResult> {
    if (!this.owns(name)) return { content: `Error: no tool ${name}.`, isError: true };
    const tool = name as MediaTool;
    const parsed = Args[tool].safeParse(objectArgs(rawArgs) ?? {});
    if (!parsed.success)
      return {
        content: `Error: the arguments of ${name} are not valid: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`,
        isError: true,
      };
    const args = parsed.data as Record<string, unknown>;
    // A path is checked before anyone is asked: a secret or outside file is never offered for upload.
    let audio: string | undefined;
    if (tool === 'transcribe_audio') {
      try {
        audio = (await workspaceGuard().resolve(String(args.path))).abs;
        if (!(await stat(audio)).isFile()) throw new Error(`"${String(args.path)}" is not a file: give the path of an audio file`);
      } catch (err) {
        return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
      }
    }
    const price = await this.price(tool, args);
    if (!runsUnasked({ kind: 'paid' }, agentSettings().auto, paused)) {
      const answer = await approver.approveAction(
        {
          kind: 'tool',
          action: `Model Gateway › ${tool}`,
          where: vscode.l10n.t('paid from your balance'),
          args: JSON.stringify(args),
          price,
          reason: paused ? vscode.l10n.t('auto-approval is paused') : vscode.l10n.t('paid media ask unless modelGateway.agent.autoApprove.paidMedia is on'),
        },
        callId,
        signal,
      );
      if (!answer.accepted) return { content: `The person rejected ${tool}; it did not run and cost nothing.`, isError: true };
    }
    try {
      const text = await this.execute(tool, args, audio, signal);
      this.services.notifySpend();
      this.services.log.info(`chat: ${tool} ran (${price})`);
      return { content: text, isError: false };
    } catch (err) {
      if (signal?.aborted) throw err;
      return { content: `Error: ${tool} failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    }
  }

  private async execute(tool: MediaTool, args: Record<string, unknown>, audio: string | undefined, signal: AbortSignal | undefined): Promise<string> {
    const client = this.services.client();
    const defaults = this.services.settings().defaultModels;
    const folder = async (what: string) => {
      const dir = await assetsFolder();
      if (!dir) throw new Error(`open a folder first: ${what} are saved into the workspace`);
      return dir;
    };
    const shown = (file: string) => vscode.workspace.asRelativePath(file);
    switch (tool) {
      case 'generate_image': {
        const prompt = String(args.prompt);
        const result = await client.imagegen.v3.generate(
          { prompt, aspect_ratio: (args.aspect_ratio as string | undefined) ?? '1x1', rendering_speed: 'DEFAULT', num_images: 1 } as never,
          { signal },
        );
        const item = result.data[0];
        if (!item || item.is_image_safe === false || !item.url) return 'The gateway marked the image unsafe: nothing was saved.';
        const file = await resultPath(await folder('images'), `${slug(prompt)}-${seedPart(item) ?? 'x'}`, '.png');
        await (await client.imagegen.download(item.url, { signal })).toFile(file, assetSettings().downloadLimit);
        return `Saved the image to ${shown(file)}.`;
      }
      case 'text_to_speech': {
        const gw = loadGateway();
        const model = defaults.speech || Object.keys(gw.SPEECH_MODELS)[0];
        const voice = (args.voice as string | undefined) ?? gw.voicesFor(model)[0] ?? 'alloy';
        const text = String(args.text);
        const res = await client.audio.speech.create({ model, voice, input: text, response_format: 'mp3' }, { signal });
        const file = await resultPath(await folder('speech'), slug(text), '.mp3');
        await res.toFile(file, assetSettings().downloadLimit);
        return `Saved the speech (${model}, voice ${voice}) to ${shown(file)}.`;
      }
      case 'transcribe_audio': {
        const model = defaults.transcription || 'whisper-1';
        const result = await client.audio.transcriptions.create({ file: audio!, model, response_format: 'text' }, { signal });
        return typeof result === 'string' ? result : JSON.stringify(result);
      }
      case 'generate_music': {
        await folder('songs');
        const lyrics = (args.lyrics as string | undefined)?.trim();
        const request = lyrics
          ? { prompt: lyrics, tags: (args.style as string | undefined) ?? 'pop', title: args.title as string | undefined, make_instrumental: false }
          : { gpt_description_prompt: String(args.description), make_instrumental: args.instrumental === true };
        const id = await client.suno.music(request, { signal });
        const title = (args.title as string | undefined) ?? (lyrics ? lyrics.split('\n')[0] : String(args.description)).slice(0, 60);
        await this.taskJobs.add({
          kind: 'music',
          id,
          prompt: lyrics ?? String(args.description),
          title,
          createdAt: Date.now(),
          status: 'SUBMITTED',
          files: [],
        });
        return `Started the song "${title}" (task ${id}). Its two clips are saved as MP3s into the assets folder in about a minute; the Music and Midjourney view shows the progress. Do not start it again.`;
      }
      case 'midjourney_imagine': {
        await folder('images');
        const prompt = String(args.prompt);
        const id = await client.midjourney.imagine({ prompt }, { signal });
        await this.taskJobs.add({ kind: 'midjourney', id, prompt, action: 'IMAGINE', createdAt: Date.now(), status: 'SUBMITTED', files: [] });
        return `Started the Midjourney grid (task ${id}). It is saved as a PNG into the assets folder in about a minute; the person can then upscale or vary one image from the Music and Midjourney view. Do not start it again.`;
      }
      case 'moderate_text': {
        const r = await client.moderations.create({ input: String(args.text) }, { signal });
        const flagged = r.results.flatMap((x) =>
          Object.entries(x.categories)
            .filter(([, on]) => on)
            .map(([k]) => k),
        );
        return flagged.length ? `Flagged: ${[...new Set(flagged)].join(', ')}.` : 'Not flagged in any category.';
      }
    }
  }
}
