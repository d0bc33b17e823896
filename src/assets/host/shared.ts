import { mkdir, readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import * as vscode from 'vscode';
import { IMAGE_MEDIA_TYPES, sniffImageType } from '../../common/imageRules';
import { assetSettings, type Job } from '../../shell/config';
import { folderInside } from '../../tools/pathGuard';
import { tell } from '../../shell/errors';
import type { GatewayFeature } from '../../shell/services';

// The gateway client's upload rules, repeated here because the client bundle loads lazily and
// these decide menus and messages before it is needed.
const IMAGE_MIME: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp' };
export const IMAGE_FILE_EXTENSIONS = Object.keys(IMAGE_MIME);
export const AUDIO_FILE_EXTENSIONS = ['.mp3', '.mp4', '.mpeg', '.mpga', '.m4a', '.wav', '.webm'];
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/**
 * A workspace image as a data URI (for moderation and image-to-video); a file of another type or
 * over 20 MB is refused, with the reason, before it is read.
 */
export async function imageDataUri(path: string): Promise<string> {
  if (!IMAGE_MIME[extname(path).toLowerCase()]) throw new Error(`${basename(path)} is not a PNG, JPEG or WEBP image`);
  const size = (await stat(path)).size;
  if (size > MAX_IMAGE_BYTES) throw new Error(`${basename(path)} is ${(size / 1048576).toFixed(1)} MB; images may be at most 20 MB`);
  const bytes = await readFile(path);
  // The bytes decide, not the name: a GIF renamed .png is still a GIF.
  const mime = sniffImageType(bytes);
  if (!mime || !(IMAGE_MEDIA_TYPES as readonly string[]).includes(mime)) {
    throw new Error(
      `${basename(path)} is ${mime ? `a ${mime.slice(6).toUpperCase()} image` : 'not an image'} by its content; only PNG, JPEG and WEBP can be sent`,
    );
  }
  return `data:${mime};base64,${bytes.toString('base64')}`;
}

export { slug, uniquePath } from '../core/names';

/**
 * The assets folder of the first workspace folder (created on demand), followed through links: a
 * link that leads outside the workspace is refused (an error saying so).
 */
export async function assetsFolder(): Promise<string | undefined> {
  const root = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  if (!root) return undefined;
  const dir = await folderInside(root.uri.fsPath, assetSettings().folder);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** The assets folder, or an error message and undefined when no folder is open or the folder is refused. */
export async function assetsFolderOrSay(services: GatewayFeature, what: string): Promise<string | undefined> {
  let dir: string | undefined;
  try {
    dir = await assetsFolder();
  } catch (err) {
    void tell(services, 'error', vscode.l10n.t('{0} Change modelGateway.assets.folder.', err instanceof Error ? err.message : String(err)));
    return undefined;
  }
  if (!dir) void tell(services, 'error', vscode.l10n.t('Open a folder first: {0} are saved into the workspace.', what));
  return dir;
}

export async function pickOne<T extends string>(title: string, items: { label: T; description?: string }[], ignoreFocusOut = true): Promise<T | undefined> {
  return (await vscode.window.showQuickPick(items, { title, ignoreFocusOut }))?.label;
}

/** Asks for a whole number in a range; undefined when cancelled. */
export async function askInteger(title: string, prompt: string, min: number, max: number, value: number): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title,
    prompt,
    value: String(value),
    ignoreFocusOut: true,
    validateInput: (v) =>
      /^\d+$/.test(v.trim()) && Number(v) >= min && Number(v) <= max ? undefined : vscode.l10n.t('A whole number from {0} to {1}', min, max),
  });
  return text === undefined ? undefined : Number(text.trim());
}

/**
 * The file a command acts on: the Explorer's (first argument), else the active editor's, text or
 * custom (the image preview). Checked against the accepted extensions.
 */
export function targetFile(services: GatewayFeature, arg: unknown, extensions: string[], what: string): vscode.Uri | undefined {
  let uri = arg instanceof vscode.Uri ? arg : undefined;
  if (!uri) {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (input instanceof vscode.TabInputText || input instanceof vscode.TabInputCustom) uri = input.uri;
  }
  if (!uri || uri.scheme !== 'file') {
    void tell(services, 'error', vscode.l10n.t('Choose {0} in the Explorer, or open one, first.', what));
    return undefined;
  }
  if (!extensions.includes(extname(uri.fsPath).toLowerCase())) {
    void tell(services, 'error', vscode.l10n.t('{0} is not {1} ({2}).', vscode.workspace.asRelativePath(uri), what, extensions.join(', ')));
    return undefined;
  }
  return uri;
}

/** Options a caller (a test, a keybinding) passes as the command's second argument; the Explorer passes an array there. */
export function optionsArg<T>(arg: unknown): Partial<T> {
  return arg && typeof arg === 'object' && !Array.isArray(arg) && !(arg instanceof vscode.Uri) ? arg : {};
}

/**
 * Picks a model for a job: the gateway's models matching the job (the default model first), or
 * the known ids when the list cannot be fetched or has none.
 */
export async function pickModel(services: GatewayFeature, job: Job, title: string, match: RegExp, known: readonly string[]): Promise<string | undefined> {
  let ids: string[] = [];
  try {
    ids = (await services.client().models.list({ signal: AbortSignal.timeout(10_000) })).map((m) => m.id).filter((id) => match.test(id));
  } catch (err) {
    services.log.warn(`could not list models for ${job}; offering the known ones: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (ids.length === 0) ids = [...known];
  const preferred = services.settings().defaultModels[job];
  if (preferred && !ids.includes(preferred)) ids.unshift(preferred);
  ids.sort((a, b) => Number(b === preferred) - Number(a === preferred));
  return pickOne(
    title,
    ids.map((id) => ({ label: id, description: id === preferred ? vscode.l10n.t('default') : undefined })),
  );
}

/** Opens a file in VS Code (its default editor: image preview, text…). */
export async function openFile(path: string): Promise<void> {
  await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(path));
}
