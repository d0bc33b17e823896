/**
 * What every surface's system prompt carries of the person's and the project's instructions: the
 * project's rules files (trusted workspaces only, each through the path guard) and the memory
 * (the person's file, the repository's `.modelgateway/memory.md` through the path guard, and the
 * surface's own facts, such as a conversation's). One section, built the same way for the chat and
 * a background session.
 */
import { tokensOf } from '../core/tokens';
import { memorySection, type MemoryEntry } from '../core/memory';
import type { ProjectRule } from '../core/rules';
import type { ProjectRules } from './projectRules';

export interface Instructions {
  /** The section the system prompt carries (empty when there is nothing). */
  section: string;
  /** What it holds, for the context meter's chips: each rules file and each memory scope with its tokens. */
  inUse: { path: string; tokens: number; memory?: boolean }[];
  rules: ProjectRule[];
}

/** The rules that apply to the files in play, and the memory entries that hold facts, as one section. */
export async function instructionsFor(rules: Pick<ProjectRules, 'forTurn'>, inPlay: readonly string[], memory: readonly MemoryEntry[]): Promise<Instructions> {
  const found = await rules.forTurn(inPlay);
  const facts = memory.filter((m) => m.facts.length > 0);
  return {
    section: [found.section, memorySection(facts)].filter(Boolean).join('\n\n'),
    inUse: [
      ...found.rules.map((r) => ({ path: r.path, tokens: tokensOf(r.body) })),
      ...facts.map((m) => ({ path: m.label, tokens: tokensOf(m.facts.join('\n')), memory: true })),
    ],
    rules: found.rules,
  };
}
