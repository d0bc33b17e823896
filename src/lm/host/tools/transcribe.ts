import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { AUDIO_FILE_EXTENSIONS } from '../../../assets/host/shared';
import { MAX_AUDIO_UPLOAD_BYTES } from '../../../common/mediaLimits';
import { transcriptionCostDollars } from '../../../runtime/core/limits';
import { GatewayTool, textField } from './tool';

const Input = z.object({ path: textField });
type Input = z.infer<typeof Input>;

/** A workspace audio file to text; the path goes through the same guard as the chat's file tools. */
export class TranscribeTool extends GatewayTool<Input> {
  readonly name = 'modelGateway_transcribe';
  protected readonly input = Input;

  private model(): string {
    return this.deps.services.settings().defaultModels.transcription || 'whisper-1';
  }

  protected prepare(input: Input): vscode.PreparedToolInvocation {
    return {
      invocationMessage: vscode.l10n.t('Transcribing {0}', input.path),
      confirmationMessages: {
        title: vscode.l10n.t('Transcribe {0}?', input.path),
        message: vscode.l10n.t(
          'Model Gateway will send the audio file to {0}. Transcription is billed by the length of the audio, from your gateway balance.',
          this.model(),
        ),
      },
    };
  }

  protected failure(input: Input): string {
    return `could not transcribe ${input.path}`;
  }

  protected async run(input: Input, signal: AbortSignal): Promise<string> {
    if (!input.path) return 'Error: "path" is required: an audio file in the workspace.';
    const capped = this.deps.access.capRefusal();
    if (capped) return capped;
    const resolved = await this.deps.guard().resolve(input.path);
    if (!AUDIO_FILE_EXTENSIONS.includes(extname(resolved.abs).toLowerCase()))
      return `Error: ${resolved.display} is not a supported audio file (${AUDIO_FILE_EXTENSIONS.join(', ')}).`;
    const size = (await stat(resolved.abs)).size;
    if (size > MAX_AUDIO_UPLOAD_BYTES)
      return `Error: ${resolved.display} is ${(size / 1048576).toFixed(1)} MB; the limit is ${MAX_AUDIO_UPLOAD_BYTES / 1048576} MB.`;
    const { services } = this.deps;
    const result = await services.client().audio.transcriptions.create({ file: resolved.abs, model: this.model(), response_format: 'text' }, { signal });
    services.notifySpend();
    await this.deps.access.record(transcriptionCostDollars(size));
    const transcript = typeof result === 'string' ? result : JSON.stringify(result);
    return `Transcript of ${basename(resolved.abs)}:\n${transcript.trim()}`;
  }
}
