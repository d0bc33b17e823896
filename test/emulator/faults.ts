import type { ServerResponse } from 'node:http';

/** Faults a test can switch on; each rule applies to the next `times` matching requests. */
export type Fault =
  | { kind: 'status'; status: number; message?: string; body?: unknown; retryAfter?: string; retryAfterMs?: number }
  /** Drop the connection before any response byte. */
  | { kind: 'reset' }
  | { kind: 'slowFirstByte'; ms: number }
  /**
   * A model server's wait before the first byte: a fixed part, and reading the prompt (prefill),
   * which grows with it (about 4 characters a token). What makes a long context slow to answer.
   */
  | { kind: 'modelLatency'; firstByteMs: number; msPer1kPromptTokens: number }
  /** Destroy the socket after N events of a stream. */
  | { kind: 'cut'; afterEvents: number }
  /** End the response cleanly after N events, without the stream's terminator. */
  | { kind: 'end'; afterEvents: number }
  | { kind: 'malformed'; afterEvents: number }
  /** An error object inside the stream after N events. */
  | { kind: 'streamError'; afterEvents: number; message?: string }
  /** A `: PING` comment before every Nth event. */
  | { kind: 'keepAlive'; every: number }
  /** Pause between events (lets a test abort mid-stream). */
  | { kind: 'delayEvents'; ms: number }
  /**
   * The model is busy, answered with the real server's own body for the profile and route
   * (`busy.ts`): new-api's model rate limit or an upstream 429 relayed (`rate-limit`), the
   * distributor finding no channel (`no-channel`, 503), the upstream's 529 relayed (`overloaded`).
   */
  | BusyFault
  /**
   * A stream that goes quiet: its head (200, `text/event-stream`) is sent, then `afterEvents` SSE
   * events (every `data:` block counts, token or not: chat completions' role-only first chunk,
   * messages' `message_start`, `response.created`, `[DONE]`; `: PING` comments do not), then
   * nothing for `ms` (until the client goes away when absent), after which the stream goes on.
   * A request that is not streamed gets no byte for as long, then its answer.
   */
  | { kind: 'stall'; afterEvents: number; ms?: number };

export const BUSY_REASONS = ['rate-limit', 'no-channel', 'overloaded'] as const;
export type BusyReason = (typeof BUSY_REASONS)[number];

export interface BusyFault {
  kind: 'busy';
  reason: BusyReason;
  /**
   * `rate-limit` only: an upstream's 429 relayed with `Retry-After: <seconds>` instead of new-api's
   * own limiter (which sends no such header). one-api has no limiter of its own: its `rate-limit`
   * is always the relayed upstream 429, with the header only when this is set.
   */
  retryAfter?: number;
  /** new-api's limiter window (`ModelRequestRateLimitDurationMinutes`), 1 by default. */
  minutes?: number;
  /** new-api's limiter count (`ModelRequestRateLimitSuccessCount`), 3 by default. */
  count?: number;
  /** The upstream's own message for a relayed 429 or 529 (the real servers keep it). */
  message?: string;
  /** The user's group named by `no-channel` (`default` by default). */
  group?: string;
}

export interface FaultRule {
  /** Path prefix the rule applies to; all paths when absent. */
  path?: string;
  /**
   * The model the rule applies to (exactly; requests for other models pass): the JSON body's
   * `model`, or on Gemini's routes the one in the path (`/v1beta/models/{model}:…`).
   */
  model?: string;
  /** Matching requests the fault applies to (1 by default); `null` or `Infinity`: until cleared. */
  times?: number | null;
  /** Matching requests to let through before the fault applies. */
  after?: number;
  /** Applies to each matching request with this probability (0–1), for as long as the rule lasts; `times` counts the requests it applied to. */
  chance?: number;
  fault: Fault;
}

/** An active rule as `list()` shows it (`times` null: until cleared). */
export interface ActiveFaultRule {
  path?: string;
  model?: string;
  times: number | null;
  after: number;
  chance: number;
  fault: Fault;
}

export class Faults {
  private rules: { path?: string; model?: string; left: number; skip: number; chance: number; fault: Fault }[] = [];

  constructor(private readonly random: () => number = Math.random) {}

  add(rule: FaultRule): void {
    const chance = rule.chance ?? 1;
    this.rules.push({
      path: rule.path,
      model: rule.model,
      left: rule.times === null ? Infinity : (rule.times ?? (chance < 1 ? Infinity : 1)),
      skip: rule.after ?? 0,
      chance,
      fault: rule.fault,
    });
  }

  /** Takes every rule off, or only those for `model` when given. */
  clear(model?: string): void {
    this.rules = model === undefined ? [] : this.rules.filter((r) => r.model !== model);
  }

  /** The rules still active, in the order they apply. */
  list(): ActiveFaultRule[] {
    return this.rules.map((r) => ({
      ...(r.path !== undefined ? { path: r.path } : {}),
      ...(r.model !== undefined ? { model: r.model } : {}),
      times: Number.isFinite(r.left) ? r.left : null,
      after: r.skip,
      chance: r.chance,
      fault: r.fault,
    }));
  }

  /** Takes the faults for one request (consuming one use of each matching rule). */
  take(path: string, model?: string): Fault[] {
    const out: Fault[] = [];
    for (const r of this.rules) {
      if (r.left > 0 && (!r.path || path.startsWith(r.path)) && (r.model === undefined || r.model === model)) {
        if (r.skip > 0) {
          r.skip--;
          continue;
        }
        if (r.chance < 1 && this.random() >= r.chance) continue;
        out.push(r.fault);
        r.left--;
      }
    }
    this.rules = this.rules.filter((r) => r.left > 0);
    return out;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends nothing for `ms` (until the client goes away when absent); resolves then, or as soon as
 * the response closes, leaving no timer or listener behind.
 */
export function quietFor(res: ServerResponse, ms: number | undefined): Promise<void> {
  if (res.destroyed || res.writableFinished) return Promise.resolve();
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    quiet++;
    const done = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      res.off('close', done);
      quiet--;
      resolve();
    };
    res.on('close', done);
    if (ms !== undefined) timer = setTimeout(done, ms);
  });
}

/** Stalls waiting now (each holds its timer and a listener until it ends): what a test checks is 0 once the clients left. */
let quiet = 0;
export function stallsWaiting(): number {
  return quiet;
}

/**
 * Writes an SSE response event by event, applying stream faults. `event()` resolves false once
 * the stream was ended by a fault or the client went away; callers stop writing then.
 */
export class SseWriter {
  private count = 0;
  private stopped = false;
  /** Called once if the client goes away before the stream ended. */
  onClientClose: (() => void) | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly faults: Fault[],
    private readonly errorPayload: (message: string) => { event?: string; data: string },
  ) {
    res.on('close', () => {
      if (!res.writableFinished && !this.stopped) {
        this.onClientClose?.();
      }
      this.stopped = true;
    });
  }

  start(): void {
    if (this.res.destroyed) return;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    // A stall before the first event still shows its head, as a real stream's does.
    if (this.faults.some((f) => f.kind === 'stall')) this.res.flushHeaders();
  }

  async event(name: string | undefined, data: string): Promise<boolean> {
    if (this.stopped) return false;
    for (const f of this.faults) {
      if (f.kind === 'delayEvents' && this.count > 0) await sleep(f.ms);
      if (this.stopped) return false;
      if (f.kind === 'keepAlive' && this.count % f.every === 0) this.res.write(': PING\n\n');
      if (f.kind === 'cut' && this.count === f.afterEvents) {
        this.stopped = true;
        // Let what was written reach the client first, or the cut would look like a connection
        // failure before any response byte (which a client may rightly retry).
        const socket = this.res.socket;
        for (let i = 0; i < 100 && socket && socket.writableLength > 0; i++) await sleep(5);
        await sleep(5);
        socket?.destroy();
        return false;
      }
      if (f.kind === 'end' && this.count === f.afterEvents) {
        this.stopped = true;
        this.res.end();
        return false;
      }
      if (f.kind === 'malformed' && this.count === f.afterEvents) {
        this.res.write('data: {"id":"broken", "choices": [\n\n');
      }
      if (f.kind === 'stall' && this.count === f.afterEvents) {
        await quietFor(this.res, f.ms);
        if (this.stopped) return false;
      }
      if (f.kind === 'streamError' && this.count === f.afterEvents) {
        const e = this.errorPayload(f.message ?? 'Upstream provider failed mid-stream.');
        this.res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${e.data}\n\n`);
        this.stopped = true;
        this.res.end();
        return false;
      }
    }
    this.count++;
    const ok = this.res.write(`${name ? `event: ${name}\n` : ''}data: ${data}\n\n`);
    if (!ok)
      await new Promise<void>((resolve) => {
        const done = () => {
          this.res.off('drain', done);
          this.res.off('close', done);
          resolve();
        };
        this.res.on('drain', done);
        this.res.on('close', done);
      });
    return !this.stopped;
  }

  end(): void {
    if (!this.stopped && !this.res.writableEnded) this.res.end();
    this.stopped = true;
  }
}
