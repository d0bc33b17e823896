import type * as vscode from 'vscode';

/** Live listeners on our own events, by the event's name (for the soak's check that they come back). */
const live = new Map<string, number>();

/** How many listeners each of our events has now (events with none left out). */
export function listenerCounts(): Record<string, number> {
  return Object.fromEntries([...live].filter(([, n]) => n > 0));
}

/**
 * `event`, with its listeners counted under `name` until each is disposed. A listener that is
 * never disposed stays counted, even once its emitter is gone: that is the leak the count is for.
 */
export function counted<T>(name: string, event: vscode.Event<T>): vscode.Event<T> {
  return (listener, thisArgs, disposables) => {
    const inner = event(listener, thisArgs);
    live.set(name, (live.get(name) ?? 0) + 1);
    let disposed = false;
    const subscription = {
      dispose: () => {
        if (!disposed) {
          disposed = true;
          live.set(name, (live.get(name) ?? 1) - 1);
        }
        inner.dispose();
      },
    };
    if (Array.isArray(disposables)) disposables.push(subscription);
    return subscription;
  };
}
