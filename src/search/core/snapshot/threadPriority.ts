import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness a search worker thread takes: the scheduler gives the extension host's thread the cores first. */
export const BACKGROUND_NICENESS = 10;

/**
 * Lowers the calling worker thread's priority (Linux: a thread has its own niceness, set through
 * its thread id), so that a build on a busy machine waits for the cores instead of the extension
 * host's thread, which runs every extension. Never the main thread (elsewhere the call would
 * change the whole process). Returns whether it was lowered.
 */
export function lowerThisThreadsPriority(niceness = BACKGROUND_NICENESS): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
    if (!Number.isInteger(tid) || tid <= 0 || tid === process.pid) return false;
    setPriority(tid, niceness);
    return true;
  } catch {
    return false;
  }
}
