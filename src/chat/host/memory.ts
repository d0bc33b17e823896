import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { Conversation } from '../../common/conversation';
import { writeAtomic } from '../../storage/atomicFile';
import type { ResolvedPath } from '../../tools/pathGuard';
import type { ProposedEdit, ToolResult } from '../../tools/workspaceTools';
import { factsOf, MEMORY_HEADING, MEMORY_SCOPES, parseMemoryArgs, REPOSITORY_MEMORY, withFact, type MemoryEntry, type MemoryScope } from '../core/memory';
import type { DiffApprover } from './approvals';

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The memory's three places: the conversation (kept with it), the repository's
 * `.modelgateway/memory.md` (read in trusted workspaces only, like the rules files: a cloned
 * repository's notes are its words, not the person's) and the user's file in global storage.
 */
export class ChatMemory {
  constructor(private readonly globalDir: string) {}

  private userFile(): ResolvedPath {
    return { abs: join(this.globalDir, 'memory.md'), folder: { name: 'user', path: this.globalDir }, rel: 'memory.md', display: vscode.l10n.t('memory.md (yours, every workspace)') };
  }

  private repositoryFile(): ResolvedPath | undefined {
    const folder = (vscode.workspace.workspaceFolders ?? []).find((f) => f.uri.scheme === 'file');
    if (!folder) return undefined;
    return { abs: join(folder.uri.fsPath, REPOSITORY_MEMORY), folder: { name: folder.name, path: folder.uri.fsPath }, rel: REPOSITORY_MEMORY, display: REPOSITORY_MEMORY };
  }

  /** What the next request reads: each scope with its facts (the repository's only in a trusted workspace). */
  async read(conversation: Conversation | undefined): Promise<MemoryEntry[]> {
    const entries: MemoryEntry[] = [{ scope: 'user', label: vscode.l10n.t('memory (yours)'), facts: factsOf(await readOrEmpty(this.userFile().abs)) }];
    const repo = this.repositoryFile();
    if (repo && vscode.workspace.isTrusted) entries.push({ scope: 'repository', label: REPOSITORY_MEMORY, facts: factsOf(await readOrEmpty(repo.abs)) });
    entries.push({ scope: 'conversation', label: vscode.l10n.t('memory (this conversation)'), facts: conversation?.memory ?? [] });
    return entries;
  }

  /**
   * A `memory` call: the change is shown and asked every time (auto-approval of edits does not
   * cover it: what is remembered goes into every later prompt). The file is read again after the
   * decision, so a change made meanwhile is kept.
   */
  async remember(args: string, approver: DiffApprover, callId: string | undefined, signal: AbortSignal | undefined, conversation: Conversation | undefined): Promise<ToolResult> {
    const parsed = parseMemoryArgs(args);
    if ('error' in parsed) return { content: `Error: ${parsed.error}.`, isError: true };
    const { fact, scope } = parsed;
    const path = this.pathOf(scope, conversation);
    if (!path) return { content: 'Error: no folder is open, so there is no repository memory; use scope "user" or "conversation".', isError: true };
    const before = scope === 'conversation' ? (conversation?.memory ?? []).map((f) => `- ${f}\n`).join('') : await readOrEmpty(path.abs);
    if (factsOf(before).includes(fact)) return { content: `Already remembered (${scope}): ${fact}`, isError: false };
    const edit: ProposedEdit = { kind: before ? 'edit' : 'create', path, before, after: scope === 'conversation' ? `${before}- ${fact}\n` : withFact(before, fact) };
    approver.currentCallId = callId;
    const { accepted } = await approver.approve(scope === 'conversation' ? { ...edit, kind: 'create' } : edit, signal);
    if (!accepted) return { content: 'The person rejected remembering this; nothing was written.', isError: true };
    if (scope === 'conversation') {
      if (conversation) (conversation.memory ??= []).push(fact);
    } else {
      const now = await readOrEmpty(path.abs);
      await mkdir(dirname(path.abs), { recursive: true });
      await writeAtomic(path.abs, now === before ? edit.after : withFact(now, fact));
    }
    return { content: `Remembered (${scope}${scope === 'conversation' ? '' : `, ${path.display}`}): ${fact}`, isError: false };
  }

  private pathOf(scope: MemoryScope, conversation: Conversation | undefined): ResolvedPath | undefined {
    if (scope === 'user') return this.userFile();
    if (scope === 'repository') return this.repositoryFile();
    // Kept with the conversation; the diff shows its facts as a file of their own.
    return { abs: join(this.globalDir, `conversation-memory-${conversation?.id ?? 'new'}.md`), folder: { name: 'conversation', path: this.globalDir }, rel: 'memory.md', display: vscode.l10n.t('memory (this conversation)') };
  }

  /** Edit Memory: the person's file or the repository's, opened (made with its heading when missing). */
  async edit(): Promise<void> {
    const items = MEMORY_SCOPES.filter((s) => s !== 'conversation').flatMap((scope) => {
      const path = this.pathOf(scope, undefined);
      return path ? [{ label: scope === 'user' ? vscode.l10n.t('Yours (every workspace)') : vscode.l10n.t('This repository'), description: scope === 'user' ? path.abs : REPOSITORY_MEMORY, path }] : [];
    });
    const pick = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Edit Memory'), placeHolder: vscode.l10n.t('Which memory? (A conversation keeps its own, shown in its requests.)') });
    if (!pick) return;
    const text = await readOrEmpty(pick.path.abs);
    if (!text) {
      await mkdir(dirname(pick.path.abs), { recursive: true });
      await writeAtomic(pick.path.abs, MEMORY_HEADING);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(pick.path.abs));
  }
}
