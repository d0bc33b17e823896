import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import type { Conversation } from '../../common/conversation';
import { writeAtomic } from '../../storage/atomicFile';
import type { PathGuard, ResolvedPath } from '../../tools/pathGuard';
import type { ToolResult } from '../../tools/workspaceTools';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { MEMORY_HEADING, MemoryFiles, readMemoryFile, REPOSITORY_MEMORY, type MemoryEntry } from '../../runtime/core/memory';
import type { DiffApprover } from './approvals';

/**
 * The memory's three places: the conversation (kept with it), the repository's
 * `.modelgateway/memory.md` (read in trusted workspaces only, like the rules files: a cloned
 * repository's notes are its words, not the person's; and only through the path guard, so a
 * committed link cannot make another file the repository's memory) and the user's file in global
 * storage. The files' logic is `MemoryFiles` (src/runtime/core/memory.ts).
 */
export class ChatMemory {
  private readonly files: MemoryFiles;
  /** The last reason the repository's memory was refused, logged once (it is read for every request). */
  private refusedFor: string | undefined;

  constructor(
    globalDir: string,
    guard: () => PathGuard = workspaceGuard,
    // Until the chat passes its log, a refusal goes to the extension host's log.
    private readonly log: (line: string) => void = (line) => console.warn(`Model Gateway: ${line}`),
  ) {
    this.files = new MemoryFiles(globalDir, guard, {
      user: vscode.l10n.t('memory.md (yours, every workspace)'),
      conversation: vscode.l10n.t('memory (this conversation)'),
    });
  }

  /** What the next request reads: each scope with its facts (the repository's only in a trusted workspace). */
  async read(conversation: Conversation | undefined): Promise<MemoryEntry[]> {
    let refused: string | undefined;
    const entries = await this.files.entries({
      trusted: vscode.workspace.isTrusted,
      userLabel: vscode.l10n.t('memory (yours)'),
      own: { label: vscode.l10n.t('memory (this conversation)'), facts: conversation?.memory ?? [] },
      refused: (reason) => (refused = reason),
    });
    if (refused && refused !== this.refusedFor) this.log(`chat: the repository's memory is not read: ${refused}`);
    this.refusedFor = refused;
    return entries;
  }

  /** A `memory` call: the change shown as a diff and asked every time (`MemoryFiles.remember`). */
  remember(
    args: string,
    approver: DiffApprover,
    callId: string | undefined,
    signal: AbortSignal | undefined,
    conversation: Conversation | undefined,
  ): Promise<ToolResult> {
    return this.files.remember(
      args,
      async (edit) => {
        approver.currentCallId = callId;
        return (await approver.approve(edit, signal)).accepted;
      },
      conversation,
    );
  }

  /** Edit Memory: the person's file or the repository's, opened (made with its heading when missing). */
  async edit(): Promise<void> {
    const hasFolder = (vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.scheme === 'file');
    const items = [
      { label: vscode.l10n.t('Yours (every workspace)'), description: this.files.userFile().abs, scope: 'user' as const },
      ...(hasFolder ? [{ label: vscode.l10n.t('This repository'), description: REPOSITORY_MEMORY, scope: 'repository' as const }] : []),
    ];
    const pick = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Edit Memory'),
      placeHolder: vscode.l10n.t('Which memory? (A conversation keeps its own, shown in its requests.)'),
    });
    if (!pick) return;
    // The repository's file passes the path guard once the person has picked it, right before it is made or opened.
    let path: ResolvedPath | undefined;
    try {
      path = pick.scope === 'user' ? this.files.userFile() : await this.files.repositoryFile();
    } catch (err) {
      // The guard's words: the link or file it refused, and why.
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return;
    }
    if (!path) return;
    if (!(await readMemoryFile(path.abs))) {
      await mkdir(dirname(path.abs), { recursive: true });
      await writeAtomic(path.abs, MEMORY_HEADING);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(path.abs));
  }
}
