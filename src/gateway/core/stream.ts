import { AbortError, GatewayError, StreamError, TimeoutError } from './errors';
import { SSEDecoder } from './sse';
import { mapTransportError, type RawResponse } from './transport';

/**
 * Drives one SSE response: reads the body, decodes events, hands them to the subclass, and turns
 * every way a stream can break into a typed error that carries the partial result.
 *
 * Two ways to consume it: async iteration (items per event) or `settle()` (fold everything into
 * the final result without building per-event items: the fast path for callers that only want
 * the end result).
 */
export abstract class SSEStream<TItem, TFinal> implements AsyncIterable<TItem> {
  private readonly decoder = new SSEDecoder();
  private readonly controller = new AbortController();
  private response: RawResponse | undefined;
  private bodyIterator: AsyncIterator<Buffer> | undefined;
  private claimed = false;
  private finishedReading = false;
  private failure: GatewayError | undefined;
  private settledPromise: Promise<void> | undefined;
  private resolveSettled!: () => void;
  private out: TItem[] | null = null;
  /** True once the stream's terminator arrived; later events are ignored. */
  protected terminated = false;

  private readonly handler = (event: string, data: string): void => {
    if (!this.terminated) this.onEvent(event, data, this.out);
  };

  constructor(
    private readonly open: (signal: AbortSignal) => Promise<RawResponse>,
    protected readonly what: string,
    signal?: AbortSignal,
  ) {
    this.settledPromise = new Promise((resolve) => (this.resolveSettled = resolve));
    if (signal) {
      if (signal.aborted) this.controller.abort();
      else {
        // Removed once the stream settles, so a signal reused across many requests keeps no
        // listener per finished stream.
        const onAbort = () => this.controller.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        void this.settledPromise.then(() => signal.removeEventListener('abort', onAbort));
      }
    }
  }

  /** Handles one event; pushes what the iterator should yield to `out` when it is not null. */
  protected abstract onEvent(event: string, data: string, out: TItem[] | null): void;
  /** Whether everything the answer needs has arrived. */
  protected abstract isComplete(): boolean;
  /** The result so far (kept by errors as `partial`). */
  abstract snapshot(): TFinal;

  /** Aborts the request; the socket closes at once and the partial result stays available. */
  abort(): void {
    this.controller.abort();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TItem> {
    this.claim();
    const out: TItem[] = [];
    try {
      while (await this.readNext(out)) {
        for (let i = 0; i < out.length; i++) yield out[i];
        out.length = 0;
      }
      for (let i = 0; i < out.length; i++) yield out[i];
    } finally {
      // The consumer stopped early (break/return): release the connection.
      if (!this.finishedReading) this.closeEarly();
    }
  }

  /** Reads the stream to its end and returns the folded result. */
  protected async settle(): Promise<TFinal> {
    if (!this.claimed) {
      this.claim();
      while (await this.readNext(null)) {
        /* fold only */
      }
    } else {
      await this.settledPromise;
    }
    if (this.failure) throw this.failure;
    return this.snapshot();
  }

  private claim(): void {
    if (this.claimed) throw new GatewayError(`${this.what}: a stream can be consumed once.`);
    this.claimed = true;
  }

  private closeEarly(): void {
    this.finishedReading = true;
    this.response?.body.destroy();
    this.resolveSettled();
  }

  private fail(error: GatewayError): GatewayError {
    error.partial ??= this.snapshot();
    this.failure = error;
    this.finishedReading = true;
    this.response?.body.destroy();
    this.resolveSettled();
    return error;
  }

  private async readNext(out: TItem[] | null): Promise<boolean> {
    if (this.failure) throw this.failure;
    if (this.finishedReading) return false;
    if (!this.response) {
      try {
        this.response = await this.open(this.controller.signal);
      } catch (err) {
        throw this.fail(err instanceof GatewayError ? err : mapTransportError(err, undefined, this.what));
      }
      this.bodyIterator = this.response.body[Symbol.asyncIterator]();
    }
    let step: IteratorResult<Buffer>;
    try {
      step = await this.bodyIterator!.next();
    } catch (err) {
      const endedBy = this.controller.signal.aborted ? 'abort' : this.response.endedBy();
      const mapped = mapTransportError(err, endedBy, this.what);
      if (mapped instanceof AbortError || mapped instanceof TimeoutError) throw this.fail(mapped);
      const code = (err as { code?: string } | null)?.code;
      const detail = [code, err instanceof Error ? err.message : undefined].filter(Boolean).join(': ');
      throw this.fail(new StreamError(`The connection was cut mid-stream (${detail || 'closed'}). The partial answer is kept.`, { cause: err }));
    }
    if (step.done) {
      const cutMidEvent = this.decoder.end();
      this.finishedReading = true;
      if (!this.terminated && !this.isComplete()) {
        const how = cutMidEvent ? 'in the middle of an event' : 'before the answer was complete';
        throw this.fail(new StreamError(`The stream ended ${how}. The partial answer is kept.`));
      }
      this.resolveSettled();
      return false;
    }
    this.out = out;
    try {
      this.decoder.feed(step.value, this.handler);
    } catch (err) {
      throw this.fail(
        err instanceof GatewayError ? err : new StreamError(`${this.what}: could not read the stream (${String(err)}).`, { cause: err }),
      );
    }
    return true;
  }

  /** Parses one event's JSON; a malformed event ends the stream with a StreamError. */
  protected parseJson(data: string): unknown {
    try {
      return JSON.parse(data);
    } catch {
      throw new StreamError(`The gateway sent a malformed stream event: ${data.slice(0, 120)}`);
    }
  }
}
