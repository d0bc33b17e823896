import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { assetsFolder, slug } from '../../../assets/host/shared';
import { saveImages } from '../../../assets/host/images';
import { loadGateway } from '../../../shell/services';
import { GatewayTool, textField, workspaceRelative } from './tool';

const Input = z.object({ prompt: textField, aspect_ratio: textField });
type Input = z.infer<typeof Input>;

/** One V3 image at DEFAULT speed, saved in the assets folder the way the command saves them. */
export class GenerateImageTool extends GatewayTool<Input> {
  readonly name = 'modelGateway_generateImage';
  protected readonly input = Input;

  private price(): number | undefined {
    return loadGateway().imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: 'DEFAULT' });
  }

  protected prepare(input: Input): vscode.PreparedToolInvocation {
    return {
      invocationMessage: vscode.l10n.t('Generating an image: “{0}”', input.prompt),
      confirmationMessages: {
        title: vscode.l10n.t('Generate an image for ${0}?', this.price()?.toFixed(3) ?? '?'),
        message: vscode.l10n.t(
          'Model Gateway will generate one image (V3, DEFAULT speed, {0}) for “{1}” and save it in the assets folder. It is charged to your gateway balance.',
          input.aspect_ratio || '1x1',
          input.prompt,
        ),
      },
    };
  }

  protected failure(): string {
    return 'could not generate the image';
  }

  protected async run(input: Input, signal: AbortSignal): Promise<string> {
    const { prompt } = input;
    if (!prompt) return 'Error: "prompt" is required: describe the image.';
    const capped = this.deps.access.capRefusal();
    if (capped) return capped;
    const dir = await assetsFolder();
    if (!dir) return 'Error: no workspace folder is open to save the image in.';
    const { services } = this.deps;
    const ratio = input.aspect_ratio || '1x1';
    const result = await services
      .client()
      .imagegen.v3.generate({ prompt, rendering_speed: 'DEFAULT', aspect_ratio: ratio as never, num_images: 1 }, { signal });
    services.notifySpend();
    await this.deps.access.record(this.price() ?? 0);
    const { files, unsafe } = await saveImages(services, result, dir, (item) => `${slug(prompt)}-${item.seed ?? 'x'}`, { report: () => undefined }, signal);
    if (files.length === 0) return unsafe ? 'The gateway marked the image unsafe; nothing was saved.' : 'No image came back.';
    return `Saved the image as ${workspaceRelative(files[0])} (${ratio}).`;
  }
}
