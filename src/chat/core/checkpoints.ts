import { readFile, rm } from 'node:fs/promises';
import type { EditRecord } from '../../common/conversation';
import type { PathGuard } from '../../tools/pathGuard';
import { writeAtomic } from '../../storage/atomicFile';

/** One file as a restore would leave it. */
export interface RestoreStep {
  /** As tools show it. */
  path: string;
  abs: string;
  /** What the file holds now (null: it does not exist). */
  current: string | null;
  /** What it will hold (null: it will be removed, it did not exist before). */
  restoreTo: string | null;
  /** The file changed since the edit (someone else wrote it): restoring overwrites that. */
  changedSince: boolean;
}

/**
 * What putting files back to before some accepted edits (in the order they were made) takes:
 * each file returns to what it held before the first of them; a file they created is removed.
 */
export async function planRestore(guard: PathGuard, edits: readonly EditRecord[]): Promise<RestoreStep[]> {
  const byPath = new Map<string, { first: EditRecord; last: EditRecord }>();
  for (const e of edits) {
    const seen = byPath.get(e.path);
    byPath.set(e.path, { first: seen?.first ?? e, last: e });
  }
  const steps: RestoreStep[] = [];
  for (const [path, { first, last }] of byPath) {
    const resolved = await guard.resolve(path, { allowMissing: true });
    const current = await readFile(resolved.abs, 'utf8').catch(() => null);
    steps.push({ path, abs: resolved.abs, current, restoreTo: first.before, changedSince: current !== last.after });
  }
  return steps;
}

/** Carries a plan out: writes (atomically) or removes each file. */
export async function applyRestore(steps: readonly RestoreStep[]): Promise<void> {
  for (const s of steps) {
    if (s.restoreTo === null) await rm(s.abs, { force: true });
    else await writeAtomic(s.abs, s.restoreTo);
  }
}
