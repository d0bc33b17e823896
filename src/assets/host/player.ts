import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname } from 'node:path';
import * as vscode from 'vscode';
import { pcmToWav } from '../core/audioParts';
import { escapeHtml } from '../../common/html';
import { webviewHtml } from '../../shell/webviewPage';

export const PLAYER_VIEW_TYPE = 'modelGateway.audioPlayer';
const MAX_PCM_INLINE = 40 * 1024 * 1024;

/**
 * A small webview with the browser's audio player for a file. Raw PCM (which no browser plays) is
 * wrapped in a WAV header on the way in; the file itself is not changed.
 */
export async function showAudioPlayer(file: string, extensionUri: vscode.Uri): Promise<vscode.WebviewPanel> {
  const panel = vscode.window.createWebviewPanel(
    PLAYER_VIEW_TYPE,
    `▶ ${basename(file)}`,
    { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
    {
      enableScripts: false,
      localResourceRoots: [vscode.Uri.file(dirname(file)), vscode.Uri.joinPath(extensionUri, 'media')],
    },
  );
  panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'gateway.svg');
  const webview = panel.webview;
  let src: string;
  if (extname(file).toLowerCase() === '.pcm') {
    const size = (await stat(file)).size;
    src = size <= MAX_PCM_INLINE ? `data:audio/wav;base64,${pcmToWav(await readFile(file)).toString('base64')}` : '';
  } else {
    src = webview.asWebviewUri(vscode.Uri.file(file)).toString();
  }
  panel.webview.html = webviewHtml(webview, extensionUri, {
    title: basename(file),
    allow: { media: ['data:'] },
    inlineStyle: `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 1.5rem; }
audio { width: 100%; max-width: 40rem; margin-top: .75rem; }
.path { color: var(--vscode-descriptionForeground); font-size: .9em; word-break: break-all; }`,
    body: `<h2>${escapeHtml(basename(file))}</h2>
<div class="path">${escapeHtml(file)}</div>
${src ? `<audio id="player" controls preload="metadata" src="${escapeHtml(src)}"></audio>` : `<p>This PCM file is too large to play here (over ${MAX_PCM_INLINE / 1048576} MB).</p>`}`,
  });
  return panel;
}
