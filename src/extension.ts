import type * as vscode from 'vscode';

// The extension shell (views, commands, credentials) arrives with its own issue; for now the
// bundle activates and does nothing, so the manifest and build are real from the start.
export function activate(_context: vscode.ExtensionContext): void {}

export function deactivate(): void {}
