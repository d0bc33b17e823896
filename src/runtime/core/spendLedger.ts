/**
 * What inline completions cost, counted here per local day (the gateway's log does not say which
 * calls were completions): dollars, requests and accepted characters per day and model, kept for
 * the Usage view's longest range. Pure: the host stores the record in global state.
 */
import * as z from 'zod/mini';
import { localDay } from './limits';

const KEEP_DAYS = 31;

const DaySchema = z.object({
  dollars: z.number(),
  requests: z.number(),
  accepted: z.number(),
  tokens: z.number(),
  byModel: z.record(z.string(), z.object({ dollars: z.number(), requests: z.number() })),
});
export const LedgerSchema = z.record(z.string(), DaySchema);
export type CompletionDay = z.infer<typeof DaySchema>;
export type CompletionLedger = z.infer<typeof LedgerSchema>;

const emptyDay = (): CompletionDay => ({ dollars: 0, requests: 0, accepted: 0, tokens: 0, byModel: {} });

/** The ledger as stored, or an empty one when the stored value is missing or damaged. */
export function readLedger(stored: unknown): CompletionLedger {
  const parsed = LedgerSchema.safeParse(stored);
  return parsed.success ? parsed.data : {};
}

export function dayOf(ledger: CompletionLedger, at: number): CompletionDay {
  return ledger[localDay(at)] ?? emptyDay();
}

function withDay(ledger: CompletionLedger, at: number, change: (d: CompletionDay) => CompletionDay): CompletionLedger {
  const day = localDay(at);
  const next: CompletionLedger = { ...ledger, [day]: change(ledger[day] ?? emptyDay()) };
  const days = Object.keys(next).sort();
  for (const old of days.slice(0, Math.max(0, days.length - KEEP_DAYS))) delete next[old];
  return next;
}

/** After one answered request: its cost (0 when unknown) and the tokens it sent and received. */
export function addRequest(ledger: CompletionLedger, at: number, model: string, dollars: number, tokens: number): CompletionLedger {
  const cost = Number.isFinite(dollars) && dollars > 0 ? dollars : 0;
  return withDay(ledger, at, (d) => ({
    ...d,
    dollars: d.dollars + cost,
    requests: d.requests + 1,
    tokens: d.tokens + Math.max(0, tokens),
    byModel: { ...d.byModel, [model]: { dollars: (d.byModel[model]?.dollars ?? 0) + cost, requests: (d.byModel[model]?.requests ?? 0) + 1 } },
  }));
}

/** After the person accepted `chars` characters of a suggestion (whole or word by word). */
export function addAccepted(ledger: CompletionLedger, at: number, chars: number): CompletionLedger {
  return withDay(ledger, at, (d) => ({ ...d, accepted: d.accepted + Math.max(0, chars) }));
}
