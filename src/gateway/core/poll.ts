import { AbortError } from './errors';

/** What polling a task needs: how to ask, when it is done or failed, how long to wait between asks. */
export interface PollSpec<T> {
  /** Asks the gateway for the task as it is now. */
  fetch: () => Promise<T>;
  /** The task is done: polling returns it. */
  done: (task: T) => boolean;
  /** The task failed: the typed error thrown, else undefined. */
  failure: (task: T) => Error | undefined;
  /** Time between two asks. */
  intervalMs: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** The message of the `AbortError` thrown once `signal` is aborted. */
  cancelled: string;
  /** Each answer, before it is judged. */
  onProgress?: (task: T) => void;
}

/**
 * Asks for a task until it is done (returned) or failed (its typed error thrown), waiting
 * `intervalMs` between asks; an aborted signal ends it with an `AbortError`. The one polling loop
 * of the video, music and Midjourney tasks.
 */
export async function pollTask<T>(spec: PollSpec<T>): Promise<T> {
  for (;;) {
    if (spec.signal?.aborted) throw new AbortError(spec.cancelled);
    const task = await spec.fetch();
    spec.onProgress?.(task);
    if (spec.done(task)) return task;
    const failure = spec.failure(task);
    if (failure) throw failure;
    await spec.sleep(spec.intervalMs, spec.signal);
  }
}
