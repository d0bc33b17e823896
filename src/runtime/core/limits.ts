/**
 * The limits on what other extensions (and VS Code's own chat) may spend through our models and
 * tools: a daily cap in dollars, and a rate limit for the free tools. Pure: no `vscode`.
 */

/** The local calendar day of a time, `YYYY-MM-DD`: the cap starts again at local midnight. */
export function localDay(at: number): string {
  const d = new Date(at);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

export interface DaySpend {
  day: string;
  dollars: number;
}

/** Today's spend: what was recorded today, or nothing when the record is of an earlier day. */
export function spentOn(record: DaySpend | undefined, day: string): number {
  return record && record.day === day && Number.isFinite(record.dollars) ? record.dollars : 0;
}

/** The record after spending `dollars` at `at`. */
export function addSpend(record: DaySpend | undefined, dollars: number, at: number): DaySpend {
  const day = localDay(at);
  return { day, dollars: spentOn(record, day) + Math.max(0, dollars) };
}

/**
 * Prices where the gateway publishes none (one-api) and the settings give none: high on purpose,
 * so that a cap meant to protect the balance is reached early rather than late.
 */
export const FALLBACK_PRICE_PER_MTOK = { input: 10, output: 30 } as const;

/** Callers that are VS Code itself: its own chat, and the Copilot Chat extension it ships. */
const VSCODE_CHAT = new Set(['core', 'github.copilot-chat', 'github.copilot']);

/**
 * Who a request comes from, as VS Code names it (`requestInitiator`, 1.104+): VS Code's chat (no
 * question asked; the cap applies), another extension (asked for once), or unknown (an older VS
 * Code that does not say: the cap applies).
 */
export function classifyInitiator(initiator: unknown, ownId: string): { kind: 'vscode' | 'self' | 'unknown' } | { kind: 'extension'; id: string } {
  if (typeof initiator !== 'string' || !initiator) return { kind: 'unknown' };
  const id = initiator.toLowerCase();
  if (VSCODE_CHAT.has(id)) return { kind: 'vscode' };
  if (id === ownId.toLowerCase()) return { kind: 'self' };
  return { kind: 'extension', id };
}

/** A sliding-window limit: at most `max` calls in any `windowMs`. */
export class RateLimit {
  private readonly calls: number[] = [];

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /** Takes a call at `now` if the window has room; otherwise the milliseconds until it will. */
  take(now = Date.now()): { ok: true } | { ok: false; retryInMs: number } {
    while (this.calls.length && now - this.calls[0] >= this.windowMs) this.calls.shift();
    if (this.calls.length >= this.max) return { ok: false, retryInMs: this.windowMs - (now - this.calls[0]) };
    this.calls.push(now);
    return { ok: true };
  }
}

/**
 * What the media tools count against the cap where the gateway bills by a measure we do not see:
 * speech at tts-1-hd's published $30 a million characters, transcription at $0.006 a minute with
 * a megabyte taken as a minute (128 kbit/s audio). Both err high.
 */
export function speechCostDollars(characters: number): number {
  return (characters * 30) / 1e6;
}

export function transcriptionCostDollars(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / (1024 * 1024))) * 0.006;
}
