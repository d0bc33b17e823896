import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { assetsFolder, slug } from '../../../assets/host/shared';
import { resultPath } from '../../../assets/core/names';
import { assetSettings } from '../../../shell/config';
import { MAX_SPEECH_INPUT } from '../../../common/mediaLimits';
import { nodeFs } from '../../../storage/atomicFile';
import { speechCostDollars } from '../../../runtime/core/limits';
import { GatewayTool, textField, workspaceRelative } from './tool';

const Input = z.object({ text: textField, voice: textField });
type Input = z.infer<typeof Input>;

/** Text to an MP3 in the assets folder: one request, so at most the spec's limit (the command splits longer text). */
export class SpeakTool extends GatewayTool<Input> {
  readonly name = 'modelGateway_speak';
  protected readonly input = Input;

  private model(): string {
    return this.deps.services.settings().defaultModels.speech || 'tts-1';
  }

  protected prepare(input: Input): vscode.PreparedToolInvocation {
    const chars = input.text.length.toLocaleString('en-US');
    return {
      invocationMessage: vscode.l10n.t('Speaking {0} characters', chars),
      confirmationMessages: {
        title: vscode.l10n.t('Speak {0} characters?', chars),
        message: vscode.l10n.t(
          'Model Gateway will turn the text into speech with {0} (voice {1}) and save an MP3 in the assets folder. Speech is billed by input characters, from your gateway balance.',
          this.model(),
          input.voice || 'alloy',
        ),
      },
    };
  }

  protected failure(): string {
    return 'could not speak the text';
  }

  protected async run(input: Input, signal: AbortSignal): Promise<string> {
    const { text } = input;
    if (!text) return 'Error: "text" is required.';
    if (text.length > MAX_SPEECH_INPUT) return `Error: "text" is ${text.length} characters; one request takes at most ${MAX_SPEECH_INPUT}. Split it.`;
    const capped = this.deps.access.capRefusal();
    if (capped) return capped;
    const dir = await assetsFolder();
    if (!dir) return 'Error: no workspace folder is open to save the audio in.';
    const { services } = this.deps;
    const model = this.model();
    const res = await services.client().audio.speech.create({ model, input: text, voice: input.voice || 'alloy', response_format: 'mp3' }, { signal });
    // The same cap and the same checked place as the Speak command's file.
    const audio = await res.buffer(assetSettings().downloadLimit);
    services.notifySpend();
    await this.deps.access.record(speechCostDollars(text.length));
    const file = await resultPath(dir, `speech-${slug(text, 32)}`, '.mp3');
    await nodeFs.writeAtomic(file, audio);
    return `Saved the speech as ${workspaceRelative(file)} (${audio.length.toLocaleString('en-US')} bytes, ${model}).`;
  }
}
