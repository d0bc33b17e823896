import { extname } from 'node:path';
import * as vscode from 'vscode';
import type { ModerationRequest, ModerationResult } from '../../gateway';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type GatewayFeature } from '../../shell/services';
import { IMAGE_FILE_EXTENSIONS, imageDataUri, optionsArg } from './shared';
import { ReportDocuments } from './reports';

export interface ModerationOptions {
  /** Defaults to the multimodal model; the text-only one is refused for images before sending. */
  model: string;
  /** Text to check instead of the selection or the file (tests, other commands). */
  text: string;
  /** Don't open the report (tests). */
  quiet: boolean;
}

export interface ModerationOutcome {
  flagged: boolean;
  /** Flagged categories, most severe first, with the input types each was scored on. */
  categories: { category: string; score: number; inputTypes: string[] }[];
  report: vscode.Uri | undefined;
}

/** The request input for an image file: one `image_url` part holding the image as a data URI. */
export async function imageInput(path: string): Promise<ModerationRequest['input']> {
  return [{ type: 'image_url', image_url: { url: await imageDataUri(path) } }];
}

function reportMarkdown(subject: string, model: string, result: ModerationResult): string {
  const rows = Object.entries(result.category_scores)
    .sort((a, b) => b[1] - a[1])
    .map(
      ([cat, score]) =>
        `| ${cat} | ${score.toFixed(4)} | ${result.categories[cat] ? `**${vscode.l10n.t('flagged')}**` : ''} | ${(result.category_applied_input_types?.[cat] ?? []).join(', ')} |`,
    );
  return [
    `# ${vscode.l10n.t('Moderation: {0}', subject)}`,
    '',
    result.flagged ? vscode.l10n.t('Model: `{0}`. Result: **flagged**.', model) : vscode.l10n.t('Model: `{0}`. Result: nothing flagged.', model),
    '',
    `| ${vscode.l10n.t('Category')} | ${vscode.l10n.t('Score')} | | ${vscode.l10n.t('Scored on')} |`,
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** Checks text or an image with the moderation endpoint and shows what was flagged. */
export async function moderate(
  services: GatewayFeature,
  reports: ReportDocuments,
  subject: string,
  input: ModerationRequest['input'],
  opts: Partial<ModerationOptions>,
): Promise<ModerationOutcome | undefined> {
  const gw = loadGateway();
  const model = opts.model ?? gw.MULTIMODAL_MODERATION_MODEL;
  try {
    const response = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Checking {0}…', subject) }, () =>
      services.client().moderations.create({ model, input }),
    );
    const result = response.results[0];
    if (!result) throw new gw.GatewayError('The moderation answer had no result.', { type: 'invalid_response' });
    const categories = gw.flaggedCategories(result);
    const report = opts.quiet ? undefined : await reports.open(`moderation-${subject}`, reportMarkdown(subject, response.model ?? model, result));
    const summary = categories.length
      ? `${subject}: flagged for ${categories.map((c) => `${c.category} ${c.score.toFixed(2)}${c.inputTypes.length ? ` (${c.inputTypes.join(', ')})` : ''}`).join('; ')}`
      : `${subject}: nothing flagged.`;
    void tell(services, categories.length ? 'warning' : 'info', summary);
    return { flagged: result.flagged, categories, report };
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not check {0}', subject), err);
    return undefined;
  }
}

/** "Check Moderation": the Explorer's file (text or image), else the selection, else the active document. */
export async function checkModerationCommand(
  services: GatewayFeature,
  reports: ReportDocuments,
  target?: unknown,
  options?: unknown,
): Promise<ModerationOutcome | undefined> {
  const opts = optionsArg<ModerationOptions>(options);
  try {
    if (opts.text !== undefined) return await moderate(services, reports, 'the text', opts.text, opts);
    const uri = target instanceof vscode.Uri ? target : undefined;
    if (uri && IMAGE_FILE_EXTENSIONS.includes(extname(uri.fsPath).toLowerCase())) {
      return await moderate(services, reports, vscode.workspace.asRelativePath(uri), await imageInput(uri.fsPath), opts);
    }
    if (uri) {
      const doc = await vscode.workspace.openTextDocument(uri);
      return await moderate(services, reports, vscode.workspace.asRelativePath(uri), doc.getText(), opts);
    }
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void tell(services, 'error', vscode.l10n.t('Select text, or choose a file in the Explorer, to check it.'));
      return undefined;
    }
    const selected = editor.selections.map((s) => editor.document.getText(s)).join('\n');
    const text = selected.trim() ? selected : editor.document.getText();
    if (!text.trim()) {
      void tell(services, 'error', vscode.l10n.t('There is no text to check.'));
      return undefined;
    }
    return await moderate(services, reports, selected.trim() ? 'the selection' : vscode.workspace.asRelativePath(editor.document.uri), text, opts);
  } catch (err) {
    showGatewayError(services, vscode.l10n.t('Could not check moderation'), err);
    return undefined;
  }
}
