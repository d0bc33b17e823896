import * as vscode from 'vscode';
import { newId, titleFrom, type Condensation, type Conversation } from '../../common/conversation';
import type { LogSource } from '../../shell/services';
import { ConversationStore, type ConversationSummary } from '../core/store';

/**
 * The chat's conversations: the one open, and those kept on disk for this workspace (a file each,
 * `ConversationStore`). After a reload the conversation the person was in opens again; a turn a
 * crash or a reload left running is shown as stopped.
 */
export class ConversationHistory {
  /** The conversation on screen. */
  current: Conversation | undefined;
  private readonly store: ConversationStore;
  /** Set once the last conversation was restored (or a new one asked for). */
  private startedFresh = false;

  constructor(
    dir: string,
    private readonly state: vscode.Memento,
    private readonly services: LogSource,
  ) {
    this.store = new ConversationStore(dir);
  }

  /** After a reload, reopens the conversation the person was in (once); then remembers the one open. */
  async remember(): Promise<void> {
    if (!this.current && !this.startedFresh) {
      const last = this.state.get<string>('modelGateway.chat.current');
      if (last) this.current = await this.store.load(last);
      this.startedFresh = true;
      if (this.current) stopInterrupted(this.current);
    }
    await this.state.update('modelGateway.chat.current', this.current?.id);
  }

  list(): Promise<ConversationSummary[]> {
    return this.store.list();
  }

  save(conversation: Conversation): Promise<void> {
    return this.store.save(conversation);
  }

  /** The conversation a question goes to: the one open, else a new one named after the question. */
  start(text: string, now: number): Conversation {
    return (this.current ??= { id: newId('c'), title: titleFrom(text || 'Image'), createdAt: now, updatedAt: now, turns: [] });
  }

  /** None open: the next question starts a new conversation. */
  fresh(): void {
    this.current = undefined;
    this.startedFresh = true;
  }

  /** Opens a saved conversation; false when it cannot be read. */
  async open(id: string): Promise<boolean> {
    const c = await this.store.load(id);
    if (!c) return false;
    // A turn left "streaming" by a crash is shown as stopped.
    stopInterrupted(c);
    this.current = c;
    return true;
  }

  /**
   * A new conversation with `c`'s turns up to its turn `at`, an answer (copies: the
   * original is left whole), named after the original, and saved. Each copied edit keeps what Undo
   * and Restore need; condensations of the copied turns come along.
   */
  async fork(c: Conversation, at: number): Promise<Conversation> {
    const turns = structuredClone(c.turns.slice(0, at + 1));
    stopInterrupted({ ...c, turns });
    const kept = new Set(turns.map((t) => t.id));
    const now = Date.now();
    const fork: Conversation = {
      ...structuredClone({ ...c, turns: [], condensations: (c.condensations ?? []).filter((k) => kept.has(k.throughTurnId)) }),
      id: newId('c'),
      title: vscode.l10n.t('{0} (fork)', c.title).slice(0, 200),
      createdAt: now,
      updatedAt: now,
      turns,
      forkOf: { id: c.id, turnId: c.turns[at].id },
    };
    await this.store.save(fork);
    this.services.log.info(`chat: forked a conversation at its turn ${at + 1} of ${c.turns.length}`);
    return fork;
  }

  async rename(id: string, title: string): Promise<void> {
    await this.store.rename(id, title);
    if (this.current?.id === id) this.current.title = title;
  }

  async delete(id: string): Promise<void> {
    await this.store.delete(id);
    if (this.current?.id === id) this.current = undefined;
  }
}

/** A turn (and its subagents) left running by a crash or a reload is shown as stopped. */
function stopInterrupted(c: Conversation): void {
  for (const t of c.turns) {
    if (t.role !== 'assistant' || t.status !== 'streaming') continue;
    t.status = 'stopped';
    for (const s of t.steps)
      for (const call of s.toolCalls)
        if (call.subagent && (call.subagent.status === 'running' || call.subagent.status === 'queued')) call.subagent.status = 'stopped';
  }
}

/** A condensation as the view shows it: the gateway's compaction output (opaque, often large) stays on the host. */
export function viewCondensation(c: Condensation): Omit<Condensation, 'serverItems'> {
  const shown: Condensation = { ...c };
  delete shown.serverItems;
  return shown;
}
