import { stat } from 'node:fs/promises';
import { basename, dirname, extname } from 'node:path';
import * as vscode from 'vscode';
import { nodeFs } from '../../storage/atomicFile';
import type { TranscriptionFormat } from '../../gateway';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type InteractiveFeature } from '../../shell/services';
import { AUDIO_FILE_EXTENSIONS, openFile, optionsArg, pickModel, pickOne, targetFile, uniquePath } from './shared';

export interface TranscribeOptions {
  model: string;
  format: TranscriptionFormat;
  /** Transcription only: ISO-639-1 code of the audio. */
  language: string;
  prompt: string;
}

export interface TranscribeOutcome {
  file: string;
  text: string;
}

const EXTENSION: Record<TranscriptionFormat, string> = { text: '.txt', srt: '.srt', vtt: '.vtt', json: '.json', verbose_json: '.verbose.json' };
const formatHint = (f: TranscriptionFormat): string =>
  ({
    text: vscode.l10n.t('plain text'),
    srt: vscode.l10n.t('subtitles with timings (SubRip)'),
    vtt: vscode.l10n.t('subtitles with timings (WebVTT)'),
    json: '{ text }',
    verbose_json: vscode.l10n.t('text, language, duration and timed segments'),
  })[f];

/**
 * "Transcribe Audio" / "Translate Audio to English": the file's type and size are checked before
 * anything is asked or sent; the result is written beside the audio file and opened.
 */
export async function transcribeCommand(
  services: InteractiveFeature,
  task: 'transcribe' | 'translate',
  target?: unknown,
  options?: unknown,
): Promise<TranscribeOutcome | undefined> {
  const gw = loadGateway();
  const uri = targetFile(services, target, AUDIO_FILE_EXTENSIONS, vscode.l10n.t('an audio file the gateway accepts'));
  if (!uri) return undefined;
  const audio = uri.fsPath;
  const size = (await stat(audio)).size;
  if (size > gw.MAX_AUDIO_UPLOAD_BYTES) {
    void tell(
      services,
      'error',
      vscode.l10n.t('{0} is {1} MB; the gateway takes audio files of at most 25 MB. Split or compress it first.', basename(audio), (size / 1048576).toFixed(1)),
    );
    return undefined;
  }
  const o = optionsArg<TranscribeOptions>(options);
  const verb = task === 'transcribe' ? vscode.l10n.t('Transcribe') : vscode.l10n.t('Translate to English');
  const model = o.model ?? (await pickModel(services, 'transcription', vscode.l10n.t('{0} (1/3): model', verb), /whisper|transcribe/i, ['whisper-1']));
  if (!model) return undefined;
  const format =
    o.format ??
    (await pickOne(
      vscode.l10n.t('{0} (2/3): result format', verb),
      (['text', 'srt', 'vtt', 'json', 'verbose_json'] as const).map((f) => ({ label: f, description: formatHint(f) })),
    ));
  if (!format) return undefined;
  let language = o.language;
  let prompt = o.prompt;
  if (o.model === undefined) {
    if (task === 'transcribe') {
      const lang = await vscode.window.showInputBox({
        title: vscode.l10n.t('{0} (3/3): language and prompt (optional)', verb),
        prompt: vscode.l10n.t('The language of the audio as an ISO-639-1 code (en, de, zh…); empty to detect it'),
        ignoreFocusOut: true,
        validateInput: (v) => (!v.trim() || /^[a-z]{2}$/.test(v.trim()) ? undefined : vscode.l10n.t('Two lowercase letters, such as en')),
      });
      if (lang === undefined) return undefined;
      language = lang.trim() || undefined;
    }
    const hint = await vscode.window.showInputBox({
      title: vscode.l10n.t('{0} (3/3): prompt (optional)', verb),
      prompt: vscode.l10n.t('Words, names or style to guide the transcript; empty for none'),
      ignoreFocusOut: true,
    });
    if (hint === undefined) return undefined;
    prompt = hint.trim() || undefined;
  }
  // Checked before asking: a request the gateway would refuse costs no confirmation.
  try {
    gw.validateTranscription({ model, response_format: format, language, prompt }, task === 'translate');
  } catch (err) {
    showGatewayError(
      services,
      task === 'transcribe' ? vscode.l10n.t('Could not transcribe {0}', basename(audio)) : vscode.l10n.t('Could not translate {0}', basename(audio)),
      err,
    );
    return undefined;
  }
  // Paid like the other media commands: the person confirms before the upload.
  const go = await services.prompts.confirm(
    vscode.l10n.t('{0} {1} ({2} MB)?', verb, basename(audio), (size / 1048576).toFixed(1)),
    vscode.l10n.t('{0} · {1}. Transcription is billed by the length of the audio (the gateway lists the per-minute rate with the model).', model, format),
    task === 'transcribe' ? vscode.l10n.t('Transcribe') : vscode.l10n.t('Translate'),
    'info',
  );
  if (!go) return undefined;
  try {
    const endpoint = task === 'transcribe' ? services.client().audio.transcriptions : services.client().audio.translations;
    const result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `${task === 'transcribe' ? 'Transcribing' : 'Translating'} ${basename(audio)}…`,
        cancellable: true,
      },
      (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return endpoint.create({ file: audio, model, response_format: format, language, prompt }, { signal: abort.signal });
      },
    );
    services.notifySpend();
    const text = typeof result === 'string' ? result : JSON.stringify(result, null, 2) + '\n';
    const stem = basename(audio, extname(audio));
    const file = uniquePath(dirname(audio), task === 'translate' ? `${stem}.en` : stem, EXTENSION[format]);
    await nodeFs.writeAtomic(file, text);
    await openFile(file);
    return { file, text };
  } catch (err) {
    showGatewayError(
      services,
      task === 'transcribe' ? vscode.l10n.t('Could not transcribe {0}', basename(audio)) : vscode.l10n.t('Could not translate {0}', basename(audio)),
      err,
    );
    return undefined;
  }
}
