/** The webview's side of a view's protocol: messages checked on arrival, replies matched to their requests by id. */

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };

/** The handle on the host; VS Code lets a page acquire it once. */
export const vscode = acquireVsCodeApi();

interface Checker {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly unknown[] } };
}

type WithoutId<M> = M extends { requestId: string } ? Omit<M, 'requestId'> : never;
type Reply<M> = Extract<M, { requestId: string }>;

export class HostChannel<To extends { type: string }, From extends { type: string }> {
  private readonly pending = new Map<string, (reply: Reply<To>) => void>();

  /** `schema` checks what the host sends: a message of another shape is dropped, never half-applied. */
  constructor(
    private readonly schema: Checker,
    private readonly view: string,
  ) {}

  post(message: From): void {
    vscode.postMessage(message);
  }

  /** Sends a message under a fresh request id; resolves with the host's reply carrying that id. */
  request(message: WithoutId<From>): Promise<Reply<To>> {
    const requestId = crypto.randomUUID();
    return new Promise((resolve) => {
      this.pending.set(requestId, resolve);
      this.post({ ...message, requestId } as unknown as From);
    });
  }

  /** Handles every checked message that is not a reply to a request of ours. */
  listen(handle: (message: To) => void): void {
    window.addEventListener('message', (e: MessageEvent<unknown>) => {
      const checked = this.schema.safeParse(e.data);
      if (!checked.success) {
        console.warn(`Model Gateway (${this.view}): ignored a malformed message from the extension`, checked.error.issues[0]);
        return;
      }
      const message = e.data as To;
      const id = (message as { requestId?: unknown }).requestId;
      const waiting = typeof id === 'string' ? this.pending.get(id) : undefined;
      if (waiting) {
        this.pending.delete(id as string);
        waiting(message as Reply<To>);
        return;
      }
      handle(message);
    });
  }
}
