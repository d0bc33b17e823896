import * as l10n from '@vscode/l10n';
import { AbortError, GatewayError, StreamError, TimeoutError, describeBody, errorFromResponse, errorInSuccessBody } from './errors';
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
  /** Whether any event arrived (a body without one may be an error answer in plain JSON). */
  private sawEvent = false;
  /** The first bytes, kept until an event arrives: the body of a plain (non-stream) answer. */
  private head: Buffer[] | undefined = [];
  private headLength = 0;
  /** Set when the idle timer, not the caller, ended the request. */
  private idled = false;
  /** True once the stream's terminator arrived; later events are ignored. */
  protected terminated = false;

  private readonly handler = (event: string, data: string): void => {
    this.sawEvent = true;
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
      const type = String(this.response.headers['content-type'] ?? '').toLowerCase();
      if (/json|html/.test(type)) throw this.fail(await this.notAStream(type));
      this.bodyIterator = this.response.body[Symbol.asyncIterator]();
    }
    let step: IteratorResult<Buffer>;
    const idleMs = this.response.idleTimeoutMs;
    const idleTimer = idleMs
      ? setTimeout(() => {
          this.idled = true;
          this.controller.abort();
        }, idleMs)
      : undefined;
    try {
      step = await this.bodyIterator!.next();
    } catch (err) {
      if (this.idled) {
        throw this.fail(
          new TimeoutError(`${this.what}: the stream went silent for ${Math.round((idleMs ?? 0) / 1000)} s. The partial answer is kept; retry to continue.`, {
            cause: err,
          }),
        );
      }
      const endedBy = this.controller.signal.aborted ? 'abort' : this.response.endedBy();
      const mapped = mapTransportError(err, endedBy, this.what);
      if (mapped instanceof AbortError || mapped instanceof TimeoutError) throw this.fail(mapped);
      const code = (err as { code?: string } | null)?.code;
      const detail = [code, err instanceof Error ? err.message : undefined].filter(Boolean).join(': ');
      throw this.fail(
        new StreamError(l10n.t('The connection was cut mid-stream ({0}). The partial answer is kept.', detail || l10n.t('closed')), { cause: err }),
      );
    } finally {
      clearTimeout(idleTimer);
    }
    if (step.done) {
      const cutMidEvent = this.decoder.end();
      const plain = !this.sawEvent && this.head ? Buffer.concat(this.head).toString('utf8') : '';
      if (plain.trim()) throw this.fail(this.fromPlainBody(plain));
      this.finishedReading = true;
      if (!this.terminated && !this.isComplete()) {
        throw this.fail(
          new StreamError(
            cutMidEvent
              ? l10n.t('The stream ended in the middle of an event. The partial answer is kept.')
              : l10n.t('The stream ended before the answer was complete. The partial answer is kept.'),
          ),
        );
      }
      this.resolveSettled();
      return false;
    }
    this.out = out;
    if (this.head) {
      if (this.sawEvent || this.headLength > 65_536) this.head = undefined;
      else {
        this.head.push(step.value);
        this.headLength += step.value.length;
      }
    }
    try {
      this.decoder.feed(step.value, this.handler);
    } catch (err) {
      throw this.fail(err instanceof GatewayError ? err : new StreamError(`${this.what}: could not read the stream (${String(err)}).`, { cause: err }));
    }
    if (this.terminated) {
      // Complete at its terminator ([DONE], message_stop), even if the server keeps the
      // connection open afterwards.
      this.closeEarly();
      return false;
    }
    return true;
  }

  /** A stream request answered with a JSON or HTML body: the error it carries, typed. */
  private async notAStream(type: string): Promise<GatewayError> {
    let text: string;
    try {
      text = await this.response!.body.text();
    } catch (err) {
      return mapTransportError(err, this.response!.endedBy(), this.what);
    }
    if (/html/.test(type)) return new StreamError(`${this.what}: expected a stream, got ${describeBody(text)}.`, { status: this.response!.status });
    return this.fromPlainBody(text);
  }

  private fromPlainBody(text: string): GatewayError {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return new StreamError(`${this.what}: expected a stream of events, got ${describeBody(text)}.`);
    }
    return (
      errorInSuccessBody(data, text, this.response?.headers ?? {}) ??
      (data && typeof data === 'object' && 'error' in data ? errorFromResponse(400, text, this.response?.headers ?? {}) : undefined) ??
      new StreamError(`${this.what}: expected a stream of events, got a plain JSON answer: ${describeBody(text)}`)
    );
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
