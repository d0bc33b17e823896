import { basename, extname } from 'node:path';
import * as vscode from 'vscode';
import { MAX_SPEECH_INPUT } from '../../common/mediaLimits';
import { nodeFs } from '../../storage/atomicFile';
import { assetSettings } from '../../shell/config';
import type { SpeechFormat } from '../../gateway';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type GatewayConnection, type InteractiveFeature } from '../../shell/services';
import { canJoin, joinAudio, splitForSpeech } from '../core/audioParts';
import { resultPath } from '../core/names';
import { assetsFolderOrSay, optionsArg, pickModel, pickOne, slug } from './shared';
import { showAudioPlayer } from './player';
import { formatCount } from '../../common/locale';

export interface SpeakOptions {
  model: string;
  voice: string;
  format: SpeechFormat;
  speed: number;
  instructions: string;
  /** Text to speak instead of the selection or file. */
  text: string;
  /** Characters per request; the spec's limit (4,096) unless smaller (tests). */
  maxChars: number;
  /** Don't open the player (tests). */
  quiet: boolean;
}

export interface SpeakOutcome {
  /** The saved file, or the numbered part files when the format cannot be joined. */
  files: string[];
  parts: number;
  characters: number;
  /** True when a part failed: the files hold the parts spoken before it. */
  partial: boolean;
}

const PARALLEL_PARTS = 3;

async function textToSpeak(services: InteractiveFeature, mode: 'selection' | 'file', target: unknown): Promise<{ text: string; name: string } | undefined> {
  if (mode === 'file') {
    const uri = target instanceof vscode.Uri ? target : vscode.window.activeTextEditor?.document.uri;
    if (!uri) {
      void tell(services, 'error', vscode.l10n.t('Choose a text file in the Explorer, or open one, to speak it.'));
      return undefined;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    return { text: doc.getText(), name: basename(uri.fsPath, extname(uri.fsPath)) };
  }
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void tell(services, 'error', vscode.l10n.t('Select the text to speak in an editor first.'));
    return undefined;
  }
  const text = editor.selections.map((s) => editor.document.getText(s)).join('\n');
  if (!text.trim()) {
    void tell(services, 'error', vscode.l10n.t('Select the text to speak first (or use "Speak File").'));
    return undefined;
  }
  return { text, name: text };
}

/** Asks for what the options don't give, offering only what the chosen model supports. */
async function askVoiceSettings(
  services: InteractiveFeature,
  o: Partial<SpeakOptions>,
): Promise<(Pick<SpeakOptions, 'model' | 'voice' | 'format'> & Partial<SpeakOptions>) | undefined> {
  const gw = loadGateway();
  const model = o.model ?? (await pickModel(services, 'speech', vscode.l10n.t('Speak (1/4): model'), /tts|audio-preview/i, Object.keys(gw.SPEECH_MODELS)));
  if (!model) return undefined;
  const info = gw.speechModelInfo(model);
  const voice =
    o.voice ??
    (await pickOne(
      vscode.l10n.t('Speak (2/4): voice for {0}', model),
      gw.voicesFor(model).map((v) => ({ label: v })),
    ));
  if (!voice) return undefined;
  const formats: SpeechFormat[] = [...(info?.formats ?? ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'])];
  const format =
    o.format ??
    (await pickOne(
      vscode.l10n.t('Speak (3/4): audio format'),
      formats.map((f) => ({
        label: f,
        description:
          f === 'wav' || f === 'pcm'
            ? vscode.l10n.t('long text joined exactly')
            : f === 'opus' || f === 'flac'
              ? vscode.l10n.t('long text saved as numbered parts')
              : undefined,
      })),
    ));
  if (!format) return undefined;
  let speed = o.speed;
  let instructions = o.instructions;
  if (speed === undefined && o.model === undefined && (!info || info.speed)) {
    const text = await vscode.window.showInputBox({
      title: vscode.l10n.t('Speak (4/4): speed'),
      value: '1.0',
      prompt: vscode.l10n.t('0.25 to 4.0'),
      ignoreFocusOut: true,
      validateInput: (v) => (Number(v) >= 0.25 && Number(v) <= 4 ? undefined : vscode.l10n.t('From 0.25 to 4.0')),
    });
    if (text === undefined) return undefined;
    speed = Number(text) === 1 ? undefined : Number(text);
  }
  if (instructions === undefined && o.model === undefined && info?.instructions) {
    const text = await vscode.window.showInputBox({
      title: vscode.l10n.t('Speak (4/4): speaking style (optional)'),
      prompt: vscode.l10n.t('For example: calm and warm; or describe each speaker of "Name: line" text'),
      ignoreFocusOut: true,
    });
    if (text === undefined) return undefined;
    instructions = text.trim() || undefined;
  }
  return { ...o, model, voice, format, speed, instructions };
}

/**
 * "Speak Selection" / "Speak File": text over the request limit is split at sentence ends, the
 * parts spoken (a few at a time, in order) and joined into one file in the assets folder; then a
 * small player opens. If a part fails, what was spoken before it is kept as a "-partial" file.
 */
export async function speakCommand(
  services: InteractiveFeature,
  extensionUri: vscode.Uri,
  mode: 'selection' | 'file',
  target?: unknown,
  options?: unknown,
): Promise<SpeakOutcome | undefined> {
  const o = optionsArg<SpeakOptions>(options);
  const source = o.text !== undefined ? { text: o.text, name: o.text } : await textToSpeak(services, mode, target);
  if (!source) return undefined;
  const chosen = await askVoiceSettings(services, o);
  if (!chosen) return undefined;
  const { model, voice, format, speed, instructions } = chosen;
  const parts = splitForSpeech(source.text, Math.min(o.maxChars ?? MAX_SPEECH_INPUT, MAX_SPEECH_INPUT));
  if (parts.length === 0) {
    void tell(services, 'error', vscode.l10n.t('There is nothing to speak: the text is blank.'));
    return undefined;
  }
  const joinable = parts.length === 1 || canJoin(format);
  // Spending always asks the person: no caller's option skips it.
  const chars = parts.reduce((n, p) => n + p.length, 0);
  const go = await services.prompts.confirm(
    parts.length > 1
      ? vscode.l10n.t('Speak {0} characters in {1} parts?', formatCount(chars), parts.length)
      : vscode.l10n.t('Speak {0} characters?', formatCount(chars)),
    `${vscode.l10n.t('{0} · {1} · {2}. Speech is billed by input characters.', model, voice, format)}${joinable ? '' : ` ${vscode.l10n.t('{0} parts cannot be joined: they are saved as {1} numbered files.', format, parts.length)}`}`,
    vscode.l10n.t('Speak'),
    'info',
  );
  if (!go) return undefined;
  const dir = await assetsFolderOrSay(services, vscode.l10n.t('audio files'));
  if (!dir) return undefined;
  const base = `speech-${slug(source.name, 32)}`;
  let client: ReturnType<GatewayConnection['client']>;
  try {
    client = services.client();
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not speak the text'), err);
    return undefined;
  }
  const audio: Buffer[] = [];
  let failure: unknown;
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Speaking'), cancellable: true },
    async (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      let done = 0;
      progress.report({ message: parts.length > 1 ? vscode.l10n.t('part 1 of {0}', parts.length) : undefined });
      const results = new Array<Buffer | undefined>(parts.length);
      let next = 0;
      // After a failure no new part starts, but parts already under way finish: they are kept.
      let stopped = false;
      const worker = async () => {
        while (next < parts.length && !stopped && !abort.signal.aborted) {
          const i = next++;
          try {
            const res = await client.audio.speech.create(
              { model, input: parts[i], voice, response_format: format, speed, instructions },
              { signal: abort.signal },
            );
            results[i] = await res.buffer(assetSettings().downloadLimit);
            done++;
            progress.report({ message: vscode.l10n.t('{0} of {1} parts', done, parts.length), increment: 100 / parts.length });
          } catch (err) {
            failure ??= err;
            stopped = true;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, parts.length) }, worker));
      // Keep the parts in order up to the first missing one.
      for (const r of results) {
        if (!r) break;
        audio.push(r);
      }
    },
  );
  if (audio.length) services.notifySpend();
  const partial = audio.length < parts.length;
  if (audio.length === 0) {
    if (failure) showGatewayError(services, vscode.l10n.t('Could not speak the text'), failure);
    return undefined;
  }
  try {
    const suffix = partial ? '-partial' : '';
    const joined = joinAudio(format, audio);
    const files: string[] = [];
    if (joined) {
      const file = await resultPath(dir, `${base}${suffix}`, `.${format}`);
      await nodeFs.writeAtomic(file, joined);
      files.push(file);
    } else {
      const first = await resultPath(dir, `${base}${suffix}`, `.part1.${format}`);
      const stem = first.slice(0, -`.part1.${format}`.length);
      for (const [i, a] of audio.entries()) {
        const file = `${stem}.part${i + 1}.${format}`;
        await nodeFs.writeAtomic(file, a);
        files.push(file);
      }
    }
    if (partial) {
      const what = failure instanceof Error ? failure.message : 'cancelled';
      void tell(
        services,
        'warning',
        vscode.l10n.t(
          'Speech stopped at part {0} of {1} ({2}). The {3} part(s) spoken before it are saved in {4}.',
          audio.length + 1,
          parts.length,
          what,
          audio.length,
          vscode.workspace.asRelativePath(files[0]),
        ),
      );
      if (failure) services.log.error('speech part failed', failure);
    } else {
      services.log.info(`spoke ${parts.length} part(s) into ${files.length} file(s)`);
    }
    if (!o.quiet) await showAudioPlayer(files[0], extensionUri);
    return { files, parts: parts.length, characters: source.text.length, partial };
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not save the speech'), err);
    return undefined;
  }
}

/** "Play Audio": the small player for an audio file. */
export async function playAudioCommand(services: InteractiveFeature, extensionUri: vscode.Uri, target?: unknown): Promise<boolean> {
  const uri = target instanceof vscode.Uri ? target : undefined;
  if (!uri) {
    void tell(services, 'error', vscode.l10n.t('Choose an audio file in the Explorer to play it.'));
    return false;
  }
  await showAudioPlayer(uri.fsPath, extensionUri);
  return true;
}
