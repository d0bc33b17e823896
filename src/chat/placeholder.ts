import * as vscode from 'vscode';

/** Holds the chat view's place in the container until the chat panel lands. */
export class ChatPlaceholder implements vscode.WebviewViewProvider {
  resolveWebviewView(view: vscode.WebviewView): void {
    view.webview.options = { enableScripts: false };
    view.webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<style>body{font-family:var(--vscode-font-family);color:var(--vscode-descriptionForeground);padding:12px}</style></head>
<body><p>Chat arrives here in the next version of Model Gateway. Meanwhile, set up the connection and
manage your account in the Account view below.</p></body></html>`;
  }
}
