/**
 * Background agent sessions as they are kept: one JSON file per workspace, written atomically
 * after every change, so a window reload (or a crash) finds each session as it last was. A session
 * that was running then is marked stopped on load, to be resumed by the person.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as z from 'zod/mini';
import type { Turn, TurnCost, Usage } from '../../common/conversation';
import { writeAtomic } from '../../storage/atomicFile';

export type SessionStatus = 'starting' | 'running' | 'waiting' | 'done' | 'stopped' | 'error' | 'applied' | 'discarded';

export interface AgentSession {
  id: string;
  title: string;
  prompt: string;
  model: string;
  /** The repository the worktree was made from, the worktree, its branch and the commit it started at. */
  repo: string;
  worktree: string;
  /**
   * Their git folders, found once when the session was made (before the agent wrote anything):
   * every git call names them, never the worktree's `.git` file. Absent in sessions kept before.
   */
  repoGitDir?: string;
  gitDir?: string;
  branch: string;
  base: string;
  /** The branch the person had checked out (where Apply merges to). */
  baseBranch?: string;
  status: SessionStatus;
  createdAt: number;
  updatedAt: number;
  /** Its conversation: the prompt and each answer (steps, tool calls). */
  turns: Turn[];
  usage: Usage;
  /** Each model's share of `usage` once a fallback answered some of it (priced at each model's price). */
  usageBy?: Record<string, Usage>;
  cost?: TurnCost;
  /** Files changed against the base (as of the last step). */
  files: string[];
  /** What it waits for the person to answer (a command to run, an edit), while `waiting`. */
  question?: string;
  error?: string;
  /** Set by Apply: what happened (merged, or the conflicted files). */
  applied?: { at: number; conflicts?: string[] };
}

const UsageSchema = z.looseObject({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() });
const SessionSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  prompt: z.string(),
  model: z.string(),
  repo: z.string(),
  worktree: z.string(),
  branch: z.string(),
  base: z.string(),
  status: z.enum(['starting', 'running', 'waiting', 'done', 'stopped', 'error', 'applied', 'discarded']),
  createdAt: z.number(),
  updatedAt: z.number(),
  turns: z.array(z.looseObject({ id: z.string(), role: z.enum(['user', 'assistant']) })),
  usage: UsageSchema,
  files: z.array(z.string()),
});
const FileSchema = z.object({ version: z.literal(1), sessions: z.array(SessionSchema) });

export class SessionStore {
  constructor(private readonly file: string) {}

  /** The sessions on disk; one that was running or waiting when the window went is stopped now. */
  async load(): Promise<AgentSession[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return [];
    }
    try {
      const parsed = FileSchema.safeParse(JSON.parse(text));
      if (!parsed.success) return [];
      const sessions = parsed.data.sessions as unknown as AgentSession[];
      for (const s of sessions) {
        if (s.status === 'running' || s.status === 'waiting' || s.status === 'starting') {
          s.status = 'stopped';
          delete s.question;
          for (const t of s.turns) if (t.role === 'assistant' && t.status === 'streaming') t.status = 'stopped';
        }
      }
      return sessions;
    } catch {
      return [];
    }
  }

  async save(sessions: readonly AgentSession[]): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    await writeAtomic(this.file, JSON.stringify({ version: 1, sessions }));
  }
}
