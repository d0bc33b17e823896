/**
 * The Usage view's report as it crosses to the webview: the figures the host builds
 * (`usage/core/report.ts`) and the view draws.
 */
import type { KeyBilling } from './usageTypes';

export interface Forecast {
  /** Dollars a day over the days the rate was taken from. */
  ratePerDay: number;
  /** How many days the rate is taken from (7, or fewer for a younger account). */
  basisDays: number;
  /** Days the balance lasts at that rate; Infinity when nothing was spent. */
  daysLeft: number;
}

export const RANGES = [7, 30] as const;

/** The series the chart shows for inline completions, carved out of their model's spend. */
export const COMPLETIONS_SERIES = 'Inline completions';

/** The series of an MCP server's sampling requests ("MCP: everything"), carved out of their model's spend. */
export const MCP_SERIES_PREFIX = 'MCP: ';

/** Inline completions' spend per local day (`YYYY-MM-DD`) and model, as this extension counted it. */
export type CompletionSpendByDay = Record<string, { byModel: Record<string, { dollars: number; requests: number }> }>;

/** What the completions feature reports to the Usage view. */
export interface CompletionSpendSource {
  spendByDay(): CompletionSpendByDay;
  today(): { dollars: number; requests: number; accepted: number };
  capDollars(): number;
  /** Whether a model is set for completions (the section shows then, even before the first request). */
  inUse(): boolean;
}
export type RangeDays = (typeof RANGES)[number];

export interface ModelRow {
  model: string;
  dollars: number;
  requests: number;
  /** "$0.30 in · $1.20 out per M tokens", or why there is none. */
  price: string;
  priceKnown: boolean;
}

/** A model's fallbacks in the range shown (counted by this extension): each time it was busy and the next of its chain answered. */
export interface FallbackRow {
  model: string;
  total: number;
  /** Days with fallbacks, oldest first (`YYYY-MM-DD`). */
  byDay: { day: string; count: number }[];
}

export interface UsageReport {
  mode: 'full' | 'key-only';
  rangeDays: RangeDays;
  /** Local days shown, oldest first (`YYYY-MM-DD`); the last is today. */
  days: string[];
  /** Days the gateway could not give figures for ("no data", not $0): shown as gaps. */
  unknownDays: string[];
  series: { name: string; dollars: number[] }[];
  dailyTotals: number[];
  /** Every day and model of the range with spend (what the CSV exports). */
  rows: { day: string; model: string; requests: number; dollars: number }[];
  totalDollars: number;
  todayDollars: number;
  requests: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; hitRate?: number };
  /** Where the token, key and top-call figures come from when the log was not read whole. */
  sampleNote?: string;
  perKey: { name: string; dollars: number; requests: number }[];
  perModel: ModelRow[];
  topCalls: { at: number; model: string; keyName: string; dollars: number; promptTokens: number; completionTokens: number }[];
  balanceDollars?: number;
  username?: string;
  key?: KeyBilling;
  /** `key`: the figures are one API key's (its own log, read with the key alone), not the account's. */
  scope?: 'account' | 'key';
  /** The key's name, when the gateway tells it. */
  keyName?: string;
  /** The key's newest calls, newest first (key scope). */
  recentCalls?: { at: number; model: string; dollars: number; promptTokens: number; completionTokens: number }[];
  forecast?: Forecast;
  /** Set when the gateway has no usage in the period ("no data", not "$0"). */
  empty: boolean;
  /** Today's spend through `vscode.lm` (other extensions, VS Code's chat) against its daily cap (counted by this extension). */
  otherCallers?: { dollars: number; capDollars: number };
  /** Today's inline completions (counted by this extension) against their daily cap. */
  completions?: { dollars: number; capDollars: number; requests: number; accepted: number };
  /** Busy models left for the next of their chain, per model in the range (absent: none). */
  fallbacks?: FallbackRow[];
  /** What the figures are built from, in words (shown under the chart). */
  source: string;
  generatedAt: number;
}
