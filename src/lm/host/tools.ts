import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import * as vscode from 'vscode';
import { AUDIO_FILE_EXTENSIONS, assetsFolder, slug, uniquePath } from '../../assets/host/shared';
import { saveImages } from '../../assets/host/images';
import type { SearchService } from '../../search/host/searchService';
import { describeError } from '../../shell/errors';
import { loadGateway, type Services } from '../../shell/services';
import { nodeFs } from '../../storage/atomicFile';
import type { PathGuard } from '../../tools/pathGuard';
import type { LmAccess } from './access';
import { speechCostDollars, transcriptionCostDollars } from '../core/limits';
import { LM_TOOL_NAMES, type LmToolName } from '../core/toolNames';


const SPEECH_MAX_CHARS = 4096;
const TRANSCRIBE_MAX_BYTES = 25 * 1024 * 1024;

interface Deps {
  services: Services;
  /** The daily cap and the rate limits for callers outside our own chat. */
  access: LmAccess;
  search?: SearchService;
  guard: () => PathGuard;
}

type Input = Record<string, unknown>;
const text = (s: string) => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(s)]);
const str = (input: Input, key: string): string => (typeof input[key] === 'string' ? input[key] : '').trim();

/** A failure as the model should read it: what went wrong and what fixes it, never a secret. */
function failure(deps: Deps, what: string, err: unknown): vscode.LanguageModelToolResult {
  const { message, actions } = describeError(deps.services, err);
  return text(`Error: ${what}: ${message}${actions.length ? ` (the person can fix it with: ${actions.map((a) => a.title).join(', ')})` : ''}`);
}

function relative(path: string): string {
  return vscode.workspace.asRelativePath(path);
}

/**
 * The gateway's abilities as tools any agent in VS Code can call (Copilot's agent mode, other
 * extensions through `vscode.lm.invokeTool`). Paid tools ask first, with the price, through VS
 * Code's own confirmation; results are files in the workspace and short texts.
 */
export function registerGatewayTools(deps: Deps): vscode.Disposable[] {
  const tools: Record<LmToolName, vscode.LanguageModelTool<Input>> = {
    modelGateway_semanticSearch: {
      prepareInvocation: (o) => ({ invocationMessage: `Searching the workspace for “${str(o.input, 'query')}”` }),
      invoke: async (o, token) => {
        const search = deps.search;
        const refused = deps.access.rateRefusal('semantic search') ?? deps.access.capRefusal();
        if (refused) return text(refused);
        if (!search?.ready()) return text('Error: the workspace has no semantic index yet. The person can build it with "Model Gateway: Build Semantic Index".');
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        try {
          return text(await search.toolAnswer(o.input, abort.signal));
        } catch (err) {
          return failure(deps, 'semantic search failed', err);
        }
      },
    },
    modelGateway_generateImage: {
      prepareInvocation: (o) => {
        const price = loadGateway().imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: 'DEFAULT' });
        const prompt = str(o.input, 'prompt');
        return {
          invocationMessage: `Generating an image: “${prompt}”`,
          confirmationMessages: { title: `Generate an image for $${price?.toFixed(3) ?? '?'}?`, message: `Model Gateway will generate one image (V3, DEFAULT speed, ${str(o.input, 'aspect_ratio') || '1x1'}) for “${prompt}” and save it in the assets folder. It is charged to your gateway balance.` },
        };
      },
      invoke: async (o, token) => {
        const prompt = str(o.input, 'prompt');
        if (!prompt) return text('Error: "prompt" is required: describe the image.');
        const capped = deps.access.capRefusal();
        if (capped) return text(capped);
        const dir = await assetsFolder();
        if (!dir) return text('Error: no workspace folder is open to save the image in.');
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        try {
          const client = deps.services.client();
          const ratio = str(o.input, 'aspect_ratio') || '1x1';
          const result = await client.imagegen.v3.generate({ prompt, rendering_speed: 'DEFAULT', aspect_ratio: ratio as never, num_images: 1 }, { signal: abort.signal });
          deps.services.notifySpend();
          await deps.access.record(loadGateway().imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: 'DEFAULT' }) ?? 0);
          const { files, unsafe } = await saveImages(deps.services, result, dir, (item) => `${slug(prompt)}-${item.seed ?? 'x'}`, { report: () => undefined }, abort.signal);
          if (files.length === 0) return text(unsafe ? 'The gateway marked the image unsafe; nothing was saved.' : 'No image came back.');
          return text(`Saved the image as ${relative(files[0])} (${ratio}).`);
        } catch (err) {
          return failure(deps, 'could not generate the image', err);
        }
      },
    },
    modelGateway_speak: {
      prepareInvocation: (o) => {
        const chars = str(o.input, 'text').length;
        const model = deps.services.settings().defaultModels.speech || 'tts-1';
        return {
          invocationMessage: `Speaking ${chars.toLocaleString('en-US')} characters`,
          confirmationMessages: { title: `Speak ${chars.toLocaleString('en-US')} characters?`, message: `Model Gateway will turn the text into speech with ${model} (voice ${str(o.input, 'voice') || 'alloy'}) and save an MP3 in the assets folder. Speech is billed by input characters, from your gateway balance.` },
        };
      },
      invoke: async (o, token) => {
        const input = str(o.input, 'text');
        if (!input) return text('Error: "text" is required.');
        if (input.length > SPEECH_MAX_CHARS) return text(`Error: "text" is ${input.length} characters; one request takes at most ${SPEECH_MAX_CHARS}. Split it.`);
        const capped = deps.access.capRefusal();
        if (capped) return text(capped);
        const dir = await assetsFolder();
        if (!dir) return text('Error: no workspace folder is open to save the audio in.');
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        try {
          const model = deps.services.settings().defaultModels.speech || 'tts-1';
          const res = await deps.services.client().audio.speech.create({ model, input, voice: str(o.input, 'voice') || 'alloy', response_format: 'mp3' }, { signal: abort.signal });
          const audio = await res.buffer();
          deps.services.notifySpend();
          await deps.access.record(speechCostDollars(input.length));
          const file = uniquePath(dir, `speech-${slug(input, 32)}`, '.mp3');
          await nodeFs.writeAtomic(file, audio);
          return text(`Saved the speech as ${relative(file)} (${audio.length.toLocaleString('en-US')} bytes, ${model}).`);
        } catch (err) {
          return failure(deps, 'could not speak the text', err);
        }
      },
    },
    modelGateway_transcribe: {
      prepareInvocation: (o) => ({
        invocationMessage: `Transcribing ${str(o.input, 'path')}`,
        confirmationMessages: { title: `Transcribe ${str(o.input, 'path')}?`, message: `Model Gateway will send the audio file to ${deps.services.settings().defaultModels.transcription || 'whisper-1'}. Transcription is billed by the length of the audio, from your gateway balance.` },
      }),
      invoke: async (o, token) => {
        const path = str(o.input, 'path');
        if (!path) return text('Error: "path" is required: an audio file in the workspace.');
        const capped = deps.access.capRefusal();
        if (capped) return text(capped);
        try {
          const resolved = await deps.guard().resolve(path);
          if (!AUDIO_FILE_EXTENSIONS.includes(extname(resolved.abs).toLowerCase())) return text(`Error: ${resolved.display} is not a supported audio file (${AUDIO_FILE_EXTENSIONS.join(', ')}).`);
          const size = (await stat(resolved.abs)).size;
          if (size > TRANSCRIBE_MAX_BYTES) return text(`Error: ${resolved.display} is ${(size / 1048576).toFixed(1)} MB; the limit is 25 MB.`);
          const abort = new AbortController();
          token.onCancellationRequested(() => abort.abort());
          const model = deps.services.settings().defaultModels.transcription || 'whisper-1';
          const result = await deps.services.client().audio.transcriptions.create({ file: resolved.abs, model, response_format: 'text' }, { signal: abort.signal });
          deps.services.notifySpend();
          await deps.access.record(transcriptionCostDollars(size));
          const transcript = typeof result === 'string' ? result : JSON.stringify(result);
          return text(`Transcript of ${basename(resolved.abs)}:\n${transcript.trim()}`);
        } catch (err) {
          return failure(deps, `could not transcribe ${path}`, err);
        }
      },
    },
    modelGateway_moderate: {
      prepareInvocation: () => ({ invocationMessage: 'Checking the text with the moderation model' }),
      invoke: async (o, token) => {
        const input = str(o.input, 'text');
        if (!input) return text('Error: "text" is required.');
        const limited = deps.access.rateRefusal('moderation');
        if (limited) return text(limited);
        const gw = loadGateway();
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        try {
          const response = await deps.services.client().moderations.create({ model: gw.MULTIMODAL_MODERATION_MODEL, input }, { signal: abort.signal });
          const result = response.results[0];
          if (!result) return text('Error: the moderation answer had no result.');
          const flagged = gw.flaggedCategories(result);
          return text(flagged.length ? `Flagged: ${flagged.map((c) => `${c.category} (${c.score.toFixed(2)})`).join(', ')}.` : 'Nothing flagged.');
        } catch (err) {
          return failure(deps, 'could not check moderation', err);
        }
      },
    },
    modelGateway_balance: {
      prepareInvocation: () => ({ invocationMessage: 'Reading the gateway balance' }),
      invoke: async () => {
        const limited = deps.access.rateRefusal('balance');
        if (limited) return text(limited);
        if (!deps.services.credentials.getAccessToken()) return text('The balance needs the system access token: the person can set it with "Model Gateway: Set System Access Token".');
        try {
          const me = await deps.services.client().account.self();
          return text(`Balance: $${me.balanceDollars.toFixed(2)}${me.username ? ` (account ${me.username})` : ''}.`);
        } catch (err) {
          return failure(deps, 'could not read the balance', err);
        }
      },
    },
  };
  return LM_TOOL_NAMES.map((name) => vscode.lm.registerTool(name, tools[name]));
}
