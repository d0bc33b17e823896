import { join } from 'node:path';
import * as z from 'zod/mini';
import { nodeFs, type StoreFs } from '../../storage/atomicFile';
import type { Conversation } from '../../common/conversation';

export interface ConversationSummary {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
}

export { nodeFs, type StoreFs } from '../../storage/atomicFile';

// Files enter from disk: checked for the shape the panel relies on, the rest passes through.
const StoredConversation = z.looseObject({
  id: z.string(),
  title: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  turns: z.array(z.looseObject({ id: z.string(), role: z.enum(['user', 'assistant']) })),
});
const Index = z.array(z.object({ id: z.string(), title: z.string(), createdAt: z.number(), updatedAt: z.number() }));

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Conversations of one workspace: a file per conversation and an index, all written atomically,
 * so a crash leaves the last good version of each (it loses at most the turn in flight). A lost
 * or damaged index is rebuilt from the files.
 */
export class ConversationStore {
  private index: ConversationSummary[] | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly fs: StoreFs = nodeFs,
  ) {}

  private file(id: string): string {
    if (!ID.test(id)) throw new Error(`Not a conversation id: ${id}`);
    return join(this.dir, `${id}.json`);
  }

  /** Runs writes one after another, so two saves never interleave. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async list(): Promise<ConversationSummary[]> {
    if (!this.index) {
      // Temporary files of writes a killed process never finished.
      await this.fs.removeOrphanTemps(this.dir);
      const text = await this.fs.read(join(this.dir, 'index.json'));
      let parsed: ConversationSummary[] | undefined;
      try {
        const r = Index.safeParse(text ? JSON.parse(text) : undefined);
        if (r.success) parsed = r.data;
      } catch {
        parsed = undefined;
      }
      this.index = parsed ?? (await this.rebuildIndex());
    }
    return [...this.index].sort((a, b) => b.updatedAt - a.updatedAt);
  }

  private async rebuildIndex(): Promise<ConversationSummary[]> {
    const out: ConversationSummary[] = [];
    for (const name of await this.fs.list(this.dir)) {
      if (!name.endsWith('.json') || name === 'index.json') continue;
      const c = await this.load(name.slice(0, -5));
      if (c) out.push({ id: c.id, title: c.title, createdAt: c.createdAt, updatedAt: c.updatedAt });
    }
    return out;
  }

  async load(id: string): Promise<Conversation | undefined> {
    const text = await this.fs.read(this.file(id));
    if (!text) return undefined;
    try {
      const r = StoredConversation.safeParse(JSON.parse(text));
      return r.success ? (r.data as unknown as Conversation) : undefined;
    } catch {
      return undefined;
    }
  }

  save(conversation: Conversation): Promise<void> {
    return this.serial(async () => {
      await this.fs.mkdirp(this.dir);
      await this.fs.writeAtomic(this.file(conversation.id), JSON.stringify(conversation));
      const index = (await this.list()).filter((s) => s.id !== conversation.id);
      index.push({ id: conversation.id, title: conversation.title, createdAt: conversation.createdAt, updatedAt: conversation.updatedAt });
      this.index = index;
      await this.fs.writeAtomic(join(this.dir, 'index.json'), JSON.stringify(index));
    });
  }

  async rename(id: string, title: string): Promise<void> {
    const c = await this.load(id);
    if (!c) return;
    c.title = title.trim() || c.title;
    await this.save(c);
  }

  delete(id: string): Promise<void> {
    return this.serial(async () => {
      await this.fs.remove(this.file(id));
      this.index = (await this.list()).filter((s) => s.id !== id);
      await this.fs.writeAtomic(join(this.dir, 'index.json'), JSON.stringify(this.index));
    });
  }
}
